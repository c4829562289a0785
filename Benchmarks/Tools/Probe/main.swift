// A small driver for looking inside one benchmark with perf, strace or valgrind,
// outside package-benchmark's harness: the same peers and fixtures as StoreBenchmarks
// (the BenchmarkSupport target), one operation repeated, the mean printed.
//
//     swift build -c release --product Probe   # in Benchmarks/
//     STATESTORE_BENCH_DIR=/tmp/sb strace -c -f .build/release/Probe save-bytes store 1000 2000
//
// Operations: save, restore, save-bytes, restore-bytes, encode, decode.
// Peers: store, raw, raw-rowid (raw on a rowid table), grdb, jsonfile (save/restore only).
import BenchmarkSupport
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 4, let rows = Int(arguments[arguments.startIndex + 2]),
    let count = Int(arguments[arguments.startIndex + 3])
else {
    FileHandle.standardError.write(Data("usage: Probe OPERATION PEER ROWS COUNT\n".utf8))
    exit(2)
}
let operation = arguments[arguments.startIndex]
let peerName = arguments[arguments.startIndex + 1]
let slots = 128
let targets = (0..<slots).map { Fixtures.fillerPath($0 * rows / slots + rows / (2 * slots)) }

do {
    let coding = BenchCoding()
    var state = SampleState.make(approximateBytes: 1000)
    let variants = try (0..<(2 * slots)).map { counter -> Data in
        var state = state
        state.counter = counter
        return try coding.encode(state)
    }
    let peer: any Peer
    switch peerName {
    case "store": peer = try StorePeer(database: Fixtures.database(rows: rows), targets: targets)
    case "raw": peer = try RawSQLitePeer(database: Fixtures.database(rows: rows), targets: targets)
    // The raw peer's SQL on GRDB's schema: the same columns in an ordinary rowid table.
    case "raw-rowid": peer = try RawSQLitePeer(database: Fixtures.database(rows: rows, schema: .grdb), targets: targets)
    case "grdb": peer = try GRDBPeer(database: Fixtures.database(rows: rows, schema: .grdb), targets: targets)
    case "jsonfile": peer = try JSONFilePeer(folder: Fixtures.scratchFolder("probe"), targets: targets, stored: rows)
    default: throw FixtureError.unexpected("unknown peer \(peerName)")
    }
    for slot in 0..<slots {
        state.counter = -1 - slot
        try peer.save(state, at: slot)
        state.counter = slot + slots
        try peer.save(state, at: slot)
    }
    var sink = 0
    var durations: [Duration] = []
    durations.reserveCapacity(count)
    let clock = ContinuousClock()
    for iteration in 0..<count {
        let started = clock.now
        defer { durations.append(clock.now - started) }
        let slot = iteration % slots, counter = iteration % (2 * slots)
        switch operation {
        case "save":
            state.counter = counter
            try peer.save(state, at: slot)
        case "restore": sink &+= try peer.restore(at: slot).counter
        case "save-bytes": try (peer as! any BytesPeer).save(encoded: variants[counter], at: slot)
        case "restore-bytes": sink &+= try (peer as! any BytesPeer).restoreEncoded(at: slot).count
        case "encode": sink &+= try coding.encode(state).count
        case "decode": sink &+= try coding.decode(variants[counter]).counter
        default: throw FixtureError.unexpected("unknown operation \(operation)")
        }
    }
    func micros(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
    }
    let sorted = durations.map(micros).sorted()
    let mean = sorted.reduce(0, +) / Double(sorted.count)
    print(
        String(
            format: "%@ %@ rows=%d: median %.2f µs, mean %.2f µs, p99 %.0f µs, max %.0f µs (%d)",
            operation, peerName, rows, sorted[sorted.count / 2], mean, sorted[sorted.count * 99 / 100], sorted.last!,
            sink % 2
        ))
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
