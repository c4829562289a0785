import Benchmark
import BenchmarkSQLite
import BenchmarkSupport
import Foundation
import StateStore

// What launch costs as the database grows. Names are "<scenario>/<peer>" so `Benchmarks/compare`
// pairs them:
//
//   open warm @10k, @100k, @1M   StateStore(path:) on a database of 10,000 / 100,000 / 1,000,000
//   open cold @10k, @100k, @1M   states of about 1 KB (14 MB / 139 MB / 1.4 GB), then releasing it;
//                                cold: the database's and its -wal's pages are evicted from the page
//                                cache (posix_fadvise(POSIX_FADV_DONTNEED)) before each open
//     store    the default options (openCheck .header, the check after open scheduled, and
//              cancelled by the release)
//     quick    openCheck .quick, the default before: every page read at open (cold @1M only with
//              STATESTORE_BENCH_SLOW=1: about 17 s a sample)
//     raw      sqlite3_open_v2 and a read of the schema: the floor
//   launch to appear @1k, @100k, @1M   a fresh process (Tools/LaunchProbe) that opens its store with
//                                the default options, rebuilds an archived container of ten visible
//                                pages (1 KB each) among 1,000 / 100,000 / 1,000,000 other states,
//                                until the first page's viewDidAppear; warm, and cold (the database
//                                evicted before the launch)
//     store    the default options
//     quick    openCheck .quick, the default before (cold @1M only with STATESTORE_BENCH_SLOW=1)
//     process  the same executable printing at once: starting a process, the floor

/// Evicts `path` and its `-wal` from the page cache; needs no privilege.
func evict(_ path: String) {
    for file in [path, path + "-wal"] {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { continue }
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
        close(descriptor)
    }
}

func label(_ rows: Int) -> String {
    rows >= 1_000_000 ? "\(rows / 1_000_000)M" : "\(rows / 1000)k"
}

/// Opens and releases; `peer` says how.
func openOnce(_ peer: String, _ path: String) throws {
    switch peer {
    case "store":
        _ = try StateStore(path: path)
    case "quick":
        _ = try StateStore(path: path, options: .init(openCheck: .quick))
    default:
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw FixtureError.sqlite("open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        guard sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", nil, nil, nil) == SQLITE_OK else {
            throw FixtureError.sqlite(String(cString: sqlite3_errmsg(db)))
        }
    }
}

/// The probe application built beside this benchmark (`swift build -c release --product LaunchProbe`).
func launchProbe() throws -> URL {
    let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    let probe = here.appendingPathComponent("LaunchProbe")
    guard FileManager.default.isExecutableFile(atPath: probe.path) else {
        throw FixtureError.unexpected(
            "\(probe.path) is missing: run `swift build -c release --product LaunchProbe` in Benchmarks/ (Benchmarks/compare does)"
        )
    }
    return probe
}

/// A database of `rows` filler states plus the probe's archived hierarchy and its ten states.
func launchDatabase(rows: Int) throws -> String {
    let path = try Fixtures.database(rows: rows, tag: "launch")
    let ready = path + ".ready"
    if FileManager.default.fileExists(atPath: ready) { return path }
    let status = try runProbe("setup", path).status
    guard status == 0 else { throw FixtureError.unexpected("LaunchProbe setup \(path) exited with \(status)") }
    _ = FileManager.default.createFile(atPath: ready, contents: Data())
    return path
}

/// Runs the probe; with `measure`, only from the spawn to the line it prints at the first appearance.
@discardableResult
func runProbe(_ mode: String, _ path: String, benchmark: Benchmark? = nil) throws -> (status: Int32, line: String) {
    let process = Process()
    process.executableURL = try launchProbe()
    process.arguments = [mode, path]
    let output = Pipe()
    process.standardOutput = output
    benchmark?.startMeasurement()
    try process.run()
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
    }
    benchmark?.stopMeasurement()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: line, as: UTF8.self))
}

let benchmarks: @Sendable () -> Void = {
    commandBenchmarks()
    let environment = ProcessInfo.processInfo.environment
    let slow = environment["STATESTORE_BENCH_SLOW"] == "1"

    for rows in [10_000, 100_000, 1_000_000] {
        for temperature in ["warm", "cold"] {
            for peer in ["store", "quick", "raw"] {
                let long = peer == "quick" && (rows >= 100_000 || temperature == "cold")
                if peer == "quick", rows >= 1_000_000, temperature == "cold", !slow { continue }
                let configuration = Benchmark.Configuration(
                    metrics: [.wallClock], timeUnits: .microseconds,
                    warmupIterations: long ? 1 : 3, maxDuration: .seconds(long ? 20 : 3), maxIterations: long ? 5 : 200
                )
                Benchmark("open \(temperature) @\(label(rows))/\(peer)", configuration: configuration) { benchmark in
                    let path = try Fixtures.database(rows: rows)
                    if temperature == "cold" { evict(path) }
                    benchmark.startMeasurement()
                    try openOnce(peer, path)
                    benchmark.stopMeasurement()
                }
            }
        }
    }

    for rows in [1000, 100_000, 1_000_000] {
        for temperature in ["warm", "cold"] {
            for peer in ["store", "quick", "process"] {
                if peer == "quick", rows >= 1_000_000, temperature == "cold", !slow { continue }
                let long = peer == "quick" && (rows >= 1_000_000 || (rows >= 100_000 && temperature == "cold"))
                let configuration = Benchmark.Configuration(
                    metrics: [.wallClock], timeUnits: .microseconds, warmupIterations: long ? 1 : 2,
                    maxDuration: .seconds(long ? 20 : 5), maxIterations: long ? 5 : 50
                )
                let mode = ["store": "launch", "quick": "launch-quick", "process": "floor"][peer]!
                Benchmark("launch to appear \(temperature) @\(label(rows))/\(peer)", configuration: configuration) {
                    benchmark in
                    let path = try launchDatabase(rows: rows)
                    if temperature == "cold" { evict(path) }
                    let (status, line) = try runProbe(mode, path, benchmark: benchmark)
                    guard status == 0, line == "appeared 1000\n" else {
                        throw FixtureError.unexpected(
                            "LaunchProbe \(mode) \(path) exited with \(status), printed \(line.debugDescription)")
                    }
                }
            }
        }
    }
}
