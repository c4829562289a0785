import Foundation
import Testing

@testable import StateStore

/// Paths that read a row's bytes without needing them whole stream them: a 64 MiB row (written
/// by another tool) costs `statectl` a bounded amount of memory, its peak RSS measured by GNU
/// time around the child process.
@Suite(.serialized, .hangGuard(minutes: 10)) struct StreamingRowProcessTests {
    /// The size of the huge row, and how far over a small database's run a command may peak.
    static let rowSize = 64 << 20
    static let bound = 16 << 20

    /// Runs `statectl arguments` under `/usr/bin/time`; its result and its peak RSS in KiB.
    func statectlPeak(_ arguments: [String]) throws -> (result: CLIResult, peakKiB: Int) {
        let folder = TemporaryFolder("peak")
        let report = folder.file("time")
        let result = try CLI.run(["-f", "%M", "-o", report, CLI.executable] + arguments, executable: "/usr/bin/time")
        let text = try String(contentsOfFile: report, encoding: .utf8)
        // GNU time writes "Command exited with non-zero status N" before the figure.
        let peak = try #require(text.split(separator: "\n").last.flatMap { Int($0) }, "\(text)")
        return (result, peak)
    }

    /// A database with a few small states, for the usual run.
    func smallDatabase(in folder: TemporaryFolder) throws -> String {
        let database = folder.file("state.sqlite")
        let store = try StateStore(path: database)
        try store.save(Draft(to: ["a@example.com"], subject: "hello", body: "small"), for: "root/draft", version: 1)
        try store.save(["x": 1], for: "root/settings", version: 1)
        return database
    }

    /// Adds a `rowSize`-byte row of zeros at `path` with the checksum `checksum`, as another tool would.
    func addHugeRow(_ database: String, at path: String, checksum: Int64) throws {
        try rawSQL(
            database,
            """
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES ('\(path)', 'Other.Tool', 1, 1, 'binary', \(checksum), 0, zeroblob(\(Self.rowSize)));
            """)
    }

    static let zerosChecksum = Checksum.stored(Data(count: rowSize))

    /// Whether a peak can be compared: under a sanitizer the resident set holds shadow memory
    /// and (ASan) freed chunks in quarantine, which grow with the bytes read, streamed or not.
    static let peaksComparable = (ProcessInfo.processInfo.environment["STATESTORE_SANITIZER"] ?? "").isEmpty

    @Test(arguments: [true, false])
    func checkVerifiesAHugeRowsChecksumInBoundedMemory(intact: Bool) throws {
        let folder = TemporaryFolder()
        let database = try smallDatabase(in: folder)
        let (usualResult, usual) = try statectlPeak(["check", "--db", database, "--json"])
        #expect(usualResult.status == 0, "\(usualResult)")

        try addHugeRow(database, at: "root/huge", checksum: intact ? Self.zerosChecksum : Self.zerosChecksum &+ 1)
        let (result, peak) = try statectlPeak(["check", "--db", database, "--json"])
        #expect(result.status == (intact ? 0 : 1), "\(result)")
        let mismatches = try #require(
            (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?[
                "checksum_mismatches"] as? [String], "\(result)")
        #expect(mismatches == (intact ? [] : ["root/huge"]))
        #expect(
            !Self.peaksComparable || (peak - usual) * 1024 <= Self.bound,
            "peak \(peak) KiB against \(usual) KiB for a small database")
    }
}

extension StreamingRowProcessTests {
    @Test func listingTheQuarantineDoesNotReadAHugeRow() throws {
        let folder = TemporaryFolder()
        let database = try smallDatabase(in: folder)
        try StateStore(path: database).quarantine("root/settings", reason: "small")
        let (usualResult, usual) = try statectlPeak(["inspect", "--db", database, "--quarantine", "--json"])
        #expect(usualResult.status == 0, "\(usualResult)")

        try addHugeRow(database, at: "root/huge", checksum: Self.zerosChecksum)
        try StateStore(path: database).quarantine("root/huge", reason: "over the limit")
        let (result, peak) = try statectlPeak(["inspect", "--db", database, "--quarantine", "--json"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("\(Self.rowSize)"), "\(result)")
        #expect(result.stdout.contains("root/huge") && result.stdout.contains("root/settings"), "\(result)")
        #expect(
            !Self.peaksComparable || (peak - usual) * 1024 <= Self.bound,
            "peak \(peak) KiB against \(usual) KiB for a small quarantine")
    }
}

/// ``StateStore/quarantinedStates()`` lists a row over the size limit without its bytes, and
/// ``StateStore/readQuarantinedBytes(id:_:)`` reads them a chunk at a time.
@Suite struct QuarantinedBytesTests {
    @Test func aRowOverTheLimitIsListedWithoutItsBytesAndReadInChunks() throws {
        let folder = TemporaryFolder()
        let database = folder.file("state.sqlite")
        var generator = SystemRandomNumberGenerator()
        let huge = Data((0..<(3 << 20) + 12345).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let small = Data("{\"a\":1}".utf8)
        do {
            let store = try StateStore(path: database, options: .init(maximumStateSize: 8 << 20))
            try store.write { (transaction) throws(StateStoreError) in
                try transaction.save(encoded: huge, encoding: .binary, typeName: "Big", version: 1, for: "root/big")
                try transaction.save(encoded: small, encoding: .json, typeName: "Small", version: 1, for: "root/small")
            }
            try store.quarantine("root/big", reason: "big")
            try store.quarantine("root/small", reason: "small")
        }
        let store = try StateStore(path: database, options: .init(maximumStateSize: 1 << 20))
        let listed = try store.quarantinedStates()
        #expect(listed.map(\.path) == ["root/small", "root/big"])
        #expect(listed.map(\.byteCount) == [small.count, huge.count])
        #expect(listed[0].bytes == small)
        #expect(listed[1].bytes.isEmpty)

        var read = Data(), chunks: [Int] = []
        #expect(
            try store.readQuarantinedBytes(id: listed[1].id) { (chunk) throws(StateStoreError) in
                chunks.append(chunk.count)
                read.append(contentsOf: chunk)
            })
        #expect(read == huge)
        #expect(chunks == [1 << 20, 1 << 20, 1 << 20, 12345])
        #expect(Checksum.stored(read) == listed[1].checksum)

        // A row removed: nothing read. An error from the body ends the reading and is thrown.
        #expect(try !store.readQuarantinedBytes(id: 999) { (_) throws(StateStoreError) in Issue.record("called") })
        var calls = 0
        #expect(throws: StateStoreError.self) {
            try store.readQuarantinedBytes(id: listed[1].id) { (_) throws(StateStoreError) in
                calls += 1
                throw .readOnly(file: database, SQLiteFailure(extendedResultCode: .readOnly, message: "", sql: nil))
            }
        }
        #expect(calls == 1)
        // A store with a larger limit reads it whole, as before.
        let roomy = try StateStore(path: database, options: .init(maximumStateSize: 8 << 20))
        #expect(try roomy.quarantinedStates().map(\.bytes) == [small, huge])
    }
}

extension StreamingRowProcessTests {
    /// A damaged database with a huge state and a huge quarantined row: `statectl recover`
    /// copies the quarantined row a megabyte at a time, byte for byte, and leaves the state,
    /// over `--max-state-size`, in the file it moves aside, unread.
    @Test func recoverCopiesAHugeQuarantinedRowInBoundedMemory() throws {
        let folder = TemporaryFolder()
        let database = try smallDatabase(in: folder)
        try StateStore(path: database).quarantine("root/settings", reason: "small")
        // The schema changed outside StateStore: recover moves the file aside and copies it.
        try rawSQL(database, "DROP INDEX quarantine_by_path")
        let (usualResult, usual) = try statectlPeak(["recover", "--db", database, "--json"])
        #expect(usualResult.status == 0, "\(usualResult)")

        let second = folder.file("second.sqlite")
        _ = try StateStore(path: second)
        try addHugeRow(second, at: "root/huge", checksum: Self.zerosChecksum)
        try StateStore(path: second).quarantine("root/huge", reason: "over the limit")
        try addHugeRow(second, at: "root/huge2", checksum: Self.zerosChecksum)
        try rawSQL(second, "DROP INDEX quarantine_by_path")
        let (result, peak) = try statectlPeak(["recover", "--db", second, "--json"])
        #expect(result.status == 0, "\(result)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        #expect(report["recovered"] as? Bool == true, "\(result)")
        #expect(report["quarantined"] as? Int == 1, "\(result)")
        #expect(report["states_left_behind"] as? Int == 1, "\(result)")
        let recovered = try StateStore(path: second, options: .init(maximumStateSize: 1 << 20))
        let quarantined = try recovered.quarantinedStates()
        #expect(quarantined.map(\.path) == ["root/huge"])
        #expect(quarantined.first?.byteCount == Self.rowSize)
        var hasher = Checksum.Incremental()
        #expect(try recovered.readQuarantinedBytes(id: try #require(quarantined.first).id) { hasher.update($0) })
        #expect(Int64(bitPattern: hasher.finalize()) == Self.zerosChecksum)
        #expect(try !recovered.entries().map(\.path).contains("root/huge2"))
        let movedTo = try #require(report["moved_to"] as? String)
        #expect(
            try rawRows(movedTo, "SELECT length(bytes) FROM states WHERE path = 'root/huge2'") == [["\(Self.rowSize)"]])
        #expect(
            !Self.peaksComparable || (peak - usual) * 1024 <= Self.bound,
            "peak \(peak) KiB against \(usual) KiB for a small database")
    }
}
