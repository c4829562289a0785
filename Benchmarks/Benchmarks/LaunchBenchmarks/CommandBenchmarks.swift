import Benchmark
import BenchmarkSQLite
import BenchmarkSupport
import Foundation
import StateStore

// Operations that grow with the database, at 10k / 100k / 1M states of about 1 KB:
//
//   first restore cold, warm   StateStore(path:) with the default options, then one restore of a
//                              1 KB state (SampleState): what a launch pays before its first screen
//   check, export, inspect,    `statectl check`, `statectl export` (to /dev/null), `statectl inspect`
//   prune                      (to /dev/null), `statectl prune --older-than 30d` (finds nothing to
//                              remove): the release build, a fresh process each, warm; peak RSS of
//                              the process as the custom metric peakRSSkB, the file's size as fileBytes
//     raw                      the floor on the same file: `PRAGMA integrity_check` for check, every
//                              row's columns read with the C API for export

/// Peak resident set of the last statectl run, in kB (ru_maxrss of its wait4).
let peakRSS = BenchmarkMetric.custom("peakRSSkB", useScalingFactor: false)
/// The database's size, so compare can quote MB/s.
let fileBytes = BenchmarkMetric.custom("fileBytes", useScalingFactor: false)

/// The repository's release statectl (`swift build -c release --product statectl` at the root;
/// Benchmarks/compare does), or `$STATESTORE_STATECTL`.
func statectl() throws -> String {
    if let path = ProcessInfo.processInfo.environment["STATESTORE_STATECTL"], !path.isEmpty { return path }
    // Benchmarks/.build/<triple>/release/LaunchBenchmarks → the repository's .build/release/statectl.
    let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let path = root.appendingPathComponent(".build/release/statectl").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw FixtureError.unexpected(
            "\(path) is missing: run `swift build -c release --product statectl` at the repository's root (Benchmarks/compare does)"
        )
    }
    return path
}

/// Runs `statectl arguments` with stdout to /dev/null; returns its exit status and peak RSS in kB.
func runStatectl(_ arguments: [String], benchmark: Benchmark) throws -> (status: Int32, peakKB: Int) {
    let executable = try statectl()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    benchmark.startMeasurement()
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { throw FixtureError.unexpected("posix_spawn \(executable): errno \(spawned)") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    benchmark.stopMeasurement()
    let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return (exit, usage.ru_maxrss)
}

/// The raw floor of `check` and `export` on the same file, in this process.
func rawScan(_ kind: String, _ path: String) throws {
    var db: OpaquePointer?
    guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
        throw FixtureError.sqlite("open \(path)")
    }
    defer { sqlite3_close_v2(db) }
    let sql =
        kind == "check"
        ? "PRAGMA integrity_check(100)"
        : "SELECT path, type_name, version, generation, encoding, checksum, updated_at, bytes FROM states"
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw FixtureError.sqlite(sql) }
    defer { sqlite3_finalize(statement) }
    var sink = 0
    while sqlite3_step(statement) == SQLITE_ROW {
        for column in 0..<sqlite3_column_count(statement) {
            sink &+= Int(sqlite3_column_bytes(statement, column))
        }
    }
    if kind == "check", sink != 2 { throw FixtureError.unexpected("integrity_check did not answer ok") }
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

let commandBenchmarks: @Sendable () -> Void = {
    for rows in [10_000, 100_000, 1_000_000] {
        let big = rows >= 1_000_000
        for temperature in ["warm", "cold"] {
            Benchmark(
                "first restore \(temperature) @\(label(rows))/store",
                configuration: .init(
                    metrics: [.wallClock], timeUnits: .microseconds, warmupIterations: 3, maxDuration: .seconds(3),
                    maxIterations: 200
                )
            ) { benchmark in
                let path = try Fixtures.database(rows: rows)
                let target = try RestorationPath(validating: Fixtures.fillerPath(rows / 2))
                if temperature == "cold" { evict(path) }
                benchmark.startMeasurement()
                let store = try StateStore(path: path)
                let state = try store.restore(SampleState.self, for: target)
                benchmark.stopMeasurement()
                guard state != nil else { throw FixtureError.unexpected("no state at \(target)") }
            }
        }
        let commands: [(String, [String])] = [
            ("check", ["check"]), ("export", ["export"]), ("inspect", ["inspect"]),
            ("prune", ["prune", "--older-than", "30d"]),
        ]
        for (name, arguments) in commands {
            let configuration = Benchmark.Configuration(
                metrics: [.wallClock, peakRSS, fileBytes], timeUnits: .milliseconds,
                warmupIterations: 1, maxDuration: .seconds(big ? 30 : 5), maxIterations: big ? 3 : 20
            )
            // A document of 1M states would pass StateExport.maximumByteCount (256 MiB): statectl
            // refuses it (exit 1, documentTooLarge) before writing anything.
            if !(name == "export" && big) {
                Benchmark("\(name) @\(label(rows))/statectl", configuration: configuration) { benchmark in
                    let path = try Fixtures.database(rows: rows)
                    let (status, peak) = try runStatectl(arguments + ["--db", path], benchmark: benchmark)
                    guard status == 0 else {
                        throw FixtureError.unexpected(
                            "statectl \(arguments.joined(separator: " ")) --db \(path) exited with \(status)")
                    }
                    benchmark.measurement(peakRSS, peak)
                    benchmark.measurement(fileBytes, fileSize(path))
                }
            }
            guard name == "check" || name == "export" else { continue }
            Benchmark(
                "\(name) @\(label(rows))/raw",
                configuration: .init(
                    metrics: [.wallClock, fileBytes], timeUnits: .milliseconds,
                    warmupIterations: 1, maxDuration: .seconds(big ? 30 : 5), maxIterations: big ? 3 : 20
                )
            ) { benchmark in
                let path = try Fixtures.database(rows: rows)
                benchmark.startMeasurement()
                try rawScan(name, path)
                benchmark.stopMeasurement()
                benchmark.measurement(fileBytes, fileSize(path))
            }
        }
    }
}
