import Foundation
import Testing

@testable import StateStore

/// Paths that read a row's bytes without needing them whole stream them: a 64 MiB row (written
/// by another tool) costs `statectl` a bounded amount of memory, its peak RSS measured by GNU
/// time around the child process.
@Suite(.serialized, .hangGuard(minutes: 5)) struct StreamingRowProcessTests {
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
            (peak - usual) * 1024 <= Self.bound, "peak \(peak) KiB against \(usual) KiB for a small database")
    }
}
