import Foundation
import Testing

@testable import StateStore

/// A state row far over `maximumStateSize`, written by another tool, is quarantined at launch
/// without ever being loaded: the relaunched app's peak RSS (`VmHWM`) stays near its usual one.
@Suite(.serialized, .hangGuard(minutes: 10)) struct HugeRowProcessTests {
    /// Launches and terminates the mail app (`statestore-worker app-peak`); its output lines.
    func launch(_ database: String) throws -> (peakKiB: Int, lines: [Substring]) {
        let (status, output) = try runProgram(try builtProduct("statestore-worker"), ["app-peak", database])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n")
        let peak = try #require(
            lines.first { $0.hasPrefix("peak_rss_kib=") }.flatMap { Int($0.dropFirst("peak_rss_kib=".count)) })
        return (peak, lines)
    }

    /// Writes a `byteCount`-byte random row at the path the app restores at launch, relaunches,
    /// and checks the row was quarantined byte for byte with the peak at most `bound` over the
    /// usual relaunch's.
    func quarantineAtLaunch(byteCount: Int, bound: Int) throws {
        let folder = TemporaryFolder()
        let database = folder.file("state.sqlite")
        _ = try launch(database)  // creates the database and the app's states
        let usual = try launch(database).peakKiB
        try rawSQL(
            database,
            """
            DELETE FROM states WHERE path = 'tabs/mail/inbox';
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES ('tabs/mail/inbox', 'Other.Tool', 1, 1, 'binary', 0, 0, randomblob(\(byteCount)));
            """)
        let original = folder.file("original.sqlite")
        try FileManager.default.copyItem(atPath: database, toPath: original)

        let (peak, lines) = try launch(database)
        #expect(
            lines.contains {
                $0.hasPrefix("error=The state at tabs/mail/inbox was moved to quarantine (it is \(byteCount) bytes")
            }, "\(lines)")
        #expect(
            (peak - usual) * 1024 <= bound, "peak \(peak) KiB against \(usual) KiB usually, for a \(byteCount)-byte row"
        )
        // Byte for byte: the quarantined bytes are the row another tool wrote.
        let same = try CLI.tool(
            "sqlite3",
            [
                database,
                """
                ATTACH '\(original)' AS before;
                SELECT (SELECT bytes FROM quarantine WHERE path = 'tabs/mail/inbox' ORDER BY id DESC LIMIT 1)
                     = (SELECT bytes FROM before.states WHERE path = 'tabs/mail/inbox');
                """,
            ])
        #expect(same == "1\n")
    }

    @Test func a64MiBRowIsQuarantinedWithoutLoadingIt() throws {
        try quarantineAtLaunch(byteCount: 64 << 20, bound: 16 << 20)
    }

    /// The case: 500 MB within the usual footprint + 64 MiB. About 15 s and 1.5 GB of
    /// disk, so it runs with `STATESTORE_HUGE_ROW=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["STATESTORE_HUGE_ROW"] == "1"))
    func a500MBRowIsQuarantinedWithinTheUsualFootprintPlus64MiB() throws {
        try quarantineAtLaunch(byteCount: 500_000_000, bound: 64 << 20)
    }
}
