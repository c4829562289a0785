import Benchmark
import BenchmarkSupport
import Foundation

// Benchmark names are "<scenario>/<peer>"; `Benchmarks/compare` pairs peers by scenario.
//
// Peers: store (StateStore's public API), raw (SQLite C API, the floor), grdb (GRDB 7),
// jsonfile (a JSON file per controller), userdefaults (Foundation's UserDefaults), and sealed
// (the store with every state sealed: StateStoreCrypto's AES-256-GCM keyring).
//
// Scenarios:
//   save 1KB, restore 1KB               full API, encoding included; 1k states stored
//   save 1KB bytes, restore 1KB bytes   already-encoded bytes: storage cost without JSON (not userdefaults)
//   encode 1KB, decode 1KB              JSON alone (a reused coder, and a new one per call)
//   save 1KB @100k, @1M (and restore)   the same with 100k and 1M states stored
//   save 100B, 10KB, 1MB (and restore)  state size, 1k states stored
//
// Layers other than the store (push + pop with save/restore, memory-warning dispatch,
// a monitor sample, cache get/set) belong in Benchmarks/LayerBenchmarks.

let benchmarks: @Sendable () -> Void = {
    let bytePeers: [PeerKind] = [.store, .raw, .grdb, .jsonfile]
    let sqlitePeers: [PeerKind] = [.store, .raw, .grdb]
    let allPeers: [PeerKind] = [.store, .raw, .grdb, .jsonfile, .userdefaults]

    // 1 KB, 1k stored states, every peer.
    let base = Scenario(label: "1KB", stateBytes: 1000, rows: 1000)
    for peer in allPeers + [.sealed] {
        register(.save, base, peer)
        register(.restore, base, peer)
    }
    // Excluding encoding.
    for peer in bytePeers {
        register(.saveBytes, base, peer)
        register(.restoreBytes, base, peer)
    }
    registerCoding(base)

    // Scaling by stored states.
    for rows in [100_000, 1_000_000] {
        let scenario = Scenario(
            label: "1KB @\(rows >= 1_000_000 ? "\(rows / 1_000_000)M" : "\(rows / 1000)k")",
            stateBytes: 1000, rows: rows)
        for peer in sqlitePeers {
            register(.save, scenario, peer)
            register(.restore, scenario, peer)
        }
    }

    // Scaling by state size.
    for (label, bytes) in [("100B", 100), ("10KB", 10_000), ("1MB", 1_000_000)] {
        let scenario = Scenario(label: label, stateBytes: bytes, rows: 1000, ownPaths: true)
        for peer in [PeerKind.store, .raw, .grdb, .jsonfile] {
            register(.save, scenario, peer)
            register(.restore, scenario, peer)
        }
    }
}

// MARK: - Scenarios

enum PeerKind: String {
    case store, raw, grdb, jsonfile, userdefaults, sealed
}

enum Operation: String {
    case save, restore
    case saveBytes = "save bytes"
    case restoreBytes = "restore bytes"

    var isSave: Bool { self == .save || self == .saveBytes }
}

/// A state size, the number of states already stored, and the paths a benchmark rotates through.
struct Scenario {
    var label: String
    var stateBytes: Int
    var rows: Int
    /// Target paths of their own (new rows) instead of existing filler rows.
    var ownPaths = false

    /// Fewer targets for big states, so every target's variants fit in memory.
    var slots: Int { stateBytes >= 100_000 ? 8 : 128 }

    /// Existing rows spread evenly through the key space, or paths of the scenario's own.
    var targets: [String] {
        (0..<slots).map { slot in
            ownPaths ? "app/sizes/\(label)/item\(slot)" : Fixtures.fillerPath(slot * rows / slots + rows / (2 * slots))
        }
    }

    func name(_ operation: Operation) -> String {
        switch operation {
        case .save: "save \(label)"
        case .restore: "restore \(label)"
        case .saveBytes: "save \(label) bytes"
        case .restoreBytes: "restore \(label) bytes"
        }
    }

    /// Per-operation samples for slow operations; batches of 1,000 (reported per operation)
    /// for fast ones, so the harness's own per-sample cost does not blur microsecond ratios.
    func configuration(_ operation: Operation, _ peer: PeerKind) -> Benchmark.Configuration {
        let batched = !operation.isSave && stateBytes <= 10_000
        let big = stateBytes >= 1_000_000
        return .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal],
            timeUnits: .nanoseconds,
            warmupIterations: batched ? 2 : (big ? 3 : 50),
            scalingFactor: batched ? .kilo : .one,
            maxDuration: .seconds(big ? 3 : 2),
            maxIterations: batched ? 300 : 5000
        )
    }
}

/// What one benchmark process needs: a peer on the shared fixture, and where it is in its rotation.
final class Workload: @unchecked Sendable {
    let scenario: Scenario
    let kind: PeerKind
    let operation: Operation
    var peer: (any Peer)?
    var state: SampleState
    /// Two encodings per target, alternated, so consecutive saves to a target always change its bytes.
    var variants: [Data] = []
    var iteration = 0

    init(_ operation: Operation, _ scenario: Scenario, _ kind: PeerKind) {
        self.operation = operation
        self.scenario = scenario
        self.kind = kind
        state = SampleState(counter: 0, title: "", scrollOffset: 0, selection: [], draft: "", rows: [])
    }

    func setUp(name: String) throws {
        state = SampleState.make(approximateBytes: scenario.stateBytes)
        let targets = scenario.targets
        let peer: any Peer
        switch kind {
        case .store: peer = try StorePeer(database: Fixtures.database(rows: scenario.rows), targets: targets)
        case .sealed:
            peer = try StorePeer(
                database: Fixtures.database(rows: scenario.rows, tag: "sealed"), targets: targets, sealed: true)
        case .raw: peer = try RawSQLitePeer(database: Fixtures.database(rows: scenario.rows), targets: targets)
        case .grdb:
            peer = try GRDBPeer(database: Fixtures.database(rows: scenario.rows, schema: .grdb), targets: targets)
        case .jsonfile:
            peer = try JSONFilePeer(folder: Fixtures.scratchFolder(name), targets: targets, stored: scenario.rows)
        case .userdefaults:
            peer = try UserDefaultsPeer(
                suite: "statestore-benchmarks-\(getpid())", targets: targets, stored: scenario.rows)
        }
        self.peer = peer
        let coding = BenchCoding()
        if operation == .saveBytes || operation == .restoreBytes {
            variants = try (0..<(2 * scenario.slots)).map { counter in
                var state = state
                state.counter = counter
                return try coding.encode(state)
            }
        }
        // Every target holds this scenario's state before measuring, with a counter the
        // first measured save will not use. Measured counters are never negative, so the
        // first of the two saves always changes the row (store and raw refuse a save
        // that writes nothing).
        for slot in 0..<scenario.slots {
            var state = state
            state.counter = -1 - slot
            try peer.save(state, at: slot)
            state.counter = slot + scenario.slots
            try peer.save(state, at: slot)
        }
        iteration = 0
    }

    /// One operation on the next target.
    @inline(__always)
    func step() throws {
        let slot = iteration % scenario.slots
        let counter = iteration % (2 * scenario.slots)
        iteration += 1
        switch operation {
        case .save:
            state.counter = counter
            try peer!.save(state, at: slot)
        case .restore:
            blackHole(try peer!.restore(at: slot))
        case .saveBytes:
            try (peer as! any BytesPeer).save(encoded: variants[counter], at: slot)
        case .restoreBytes:
            blackHole(try (peer as! any BytesPeer).restoreEncoded(at: slot))
        }
    }

    func tearDown() {
        (peer as? UserDefaultsPeer)?.removeSuite()
        peer = nil
    }
}

func register(_ operation: Operation, _ scenario: Scenario, _ kind: PeerKind) {
    let name = "\(scenario.name(operation))/\(kind.rawValue)"
    let workload = Workload(operation, scenario, kind)
    Benchmark(name, configuration: scenario.configuration(operation, kind)) { benchmark in
        do {
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { try workload.step() }
            benchmark.stopMeasurement()
        } catch {
            benchmark.error("\(name): \(error)")
        }
    } setup: {
        try workload.setUp(name: name)
    } teardown: {
        workload.tearDown()
    }
}

/// JSON alone, as the store does it (a new coder per call) and with a reused coder.
func registerCoding(_ scenario: Scenario) {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], timeUnits: .nanoseconds,
        warmupIterations: 2, scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 300
    )
    let state = SampleState.make(approximateBytes: scenario.stateBytes)
    Benchmark("encode \(scenario.label)/reused", configuration: configuration) { benchmark in
        let coding = BenchCoding()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try? coding.encode(state)) }
    }
    Benchmark("encode \(scenario.label)/new", configuration: configuration) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try? BenchCoding.newEncoder().encode(state)) }
    }
    Benchmark("decode \(scenario.label)/reused", configuration: configuration) { benchmark in
        let coding = BenchCoding()
        let bytes = (try? coding.encode(state)) ?? Data()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try? coding.decode(bytes)) }
    }
    Benchmark("decode \(scenario.label)/new", configuration: configuration) { benchmark in
        let bytes = (try? BenchCoding().encode(state)) ?? Data()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? BenchCoding.newDecoder().decode(SampleState.self, from: bytes))
        }
    }
}
