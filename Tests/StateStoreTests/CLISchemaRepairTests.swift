import Foundation
import StateStore
import Testing

/// Version records erased outside StateStore: read-only commands salvage, `migrate --repair`
/// re-records the version only when the tables match exactly, and `check`'s advice works verbatim.
@Suite(.hangGuard(minutes: 10)) struct CLISchemaRepairTests {
    /// A database with two states, written through the store.
    func makeDatabase(_ folder: TemporaryFolder) throws -> String {
        let db = folder.file("state.sqlite")
        let store = try StateStore(path: db)
        try store.save(Draft(to: ["a@example.com"], subject: "kept", body: "the user's text"), for: "mail/draft")
        try store.save(Draft(to: [], subject: "second", body: ""), for: "mail/other")
        return db
    }

    /// The command between the last pair of backticks in `text`, run as written (its first word
    /// `statectl` being the built binary).
    func followAdvice(in text: String) throws -> CLIResult {
        let parts = text.split(separator: "`", omittingEmptySubsequences: false)
        try #require(parts.count >= 3, "no command in: \(text)")
        let words = parts[parts.count - 2].split(separator: " ").map(String.init)
        #expect(words.first == "statectl")
        return try CLI.run(Array(words.dropFirst()))
    }

    static let erasures = [
        "PRAGMA user_version = 0; DROP TABLE schema_migrations",
        "PRAGMA user_version = 0; DELETE FROM schema_migrations",
        "DROP TABLE schema_migrations",
        "PRAGMA user_version = 2; DELETE FROM schema_migrations WHERE version > 2",
        "PRAGMA user_version = 0",
        // Made again by hand without its constraints, every record kept.
        Self.recordTableRemade,
        // Made again without a version column at all.
        "DROP TABLE schema_migrations; CREATE TABLE schema_migrations(id INTEGER, name TEXT, applied_at INTEGER)",
    ]

    static let recordTableRemade = """
        CREATE TABLE copied AS SELECT * FROM schema_migrations; DROP TABLE schema_migrations;
        CREATE TABLE schema_migrations(version INTEGER, name TEXT, applied_at INTEGER);
        INSERT INTO schema_migrations SELECT * FROM copied; DROP TABLE copied
        """

    @Test func writesOnARemadeRecordTablePointAtTheRepair() throws {
        let folder = TemporaryFolder()
        let db = try makeDatabase(folder)
        try rawSQL(db, Self.recordTableRemade)
        let rows = try CLI.dump(db)
        let prune = try CLI.run(["prune", "--db", db, "--older-than", "1d"])
        #expect(prune.status == 3, "\(prune)")
        #expect(
            prune.stderr.contains("only the table of version records differs: `statectl migrate --repair`"), "\(prune)")
        #expect(try CLI.dump(db) == rows)
        // An application opening it with openOrRecover gets it repaired in place, states kept.
        let (store, recovery) = try StateStore.openOrRecover(path: db)
        #expect(recovery == nil)
        #expect(try store.restore(Draft.self, for: "mail/draft")?.body == "the user's text")
        #expect(try store.schemaRecords().isIntact)
    }

    @Test(arguments: erasures)
    func erasedRecordsAreSalvagedAndTheAdviceRepairsThem(erasure: String) throws {
        let folder = TemporaryFolder()
        let db = try makeDatabase(folder)
        let exportedBefore = try CLI.run(["export", "--db", db])
        try rawSQL(db, erasure)
        let rows = try CLI.dump(db)

        // Read-only commands read the states, saying what is wrong.
        let inspect = try CLI.run(["inspect", "--db", db])
        #expect(inspect.status == 0, "\(inspect)")
        #expect(inspect.stdout.contains("mail/draft") && inspect.stdout.contains("mail/other"))
        let export = try CLI.run(["export", "--db", db])
        #expect(export.status == 0, "\(export)")
        #expect(export.stdout.contains("\"path\": \"mail/draft\""))
        #expect(
            export.stdout.contains(
                Data(#"{"attachments":{},"body":"the user's text""#.utf8).base64EncodedString().prefix(24))
                || export.stdout.contains("the user's text"))
        #expect(inspect.stderr.contains("migrate --repair"), "\(inspect)")
        #expect(export.stderr.contains("migrate --repair"), "\(export)")

        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 1, "\(check)")
        let advice = try #require(check.stdout.split(separator: "\n").first { $0.contains("migrate --repair") })
        let repaired = try followAdvice(in: String(advice))
        #expect(repaired.status == 0, "\(repaired)")
        #expect(repaired.stdout.contains("Re-recorded schema version \(StateStore.latestSchemaVersion)"))
        let after = try CLI.run(["check", "--db", db])
        #expect(after.status == 0, "\(after)")
        #expect(after.stdout.hasSuffix("Healthy.\n"))
        #expect(try CLI.dump(db) == rows)
        // The application opens it again, read-write, with its states.
        let store = try StateStore(path: db)
        #expect(try store.restore(Draft.self, for: "mail/draft")?.body == "the user's text")
        #expect(try store.schemaRecords().isIntact)
        var exportedAfter = try CLI.run(["export", "--db", db]).stdout
        exportedAfter = exportedAfter.replacing(/"exported_at": "[^"]*"/, with: "")
        #expect(exportedAfter == exportedBefore.stdout.replacing(/"exported_at": "[^"]*"/, with: ""))
    }

    @Test(arguments: [
        ("ALTER TABLE states ADD COLUMN note TEXT", "the table states has the columns"),
        ("DROP INDEX quarantine_by_path", "the index quarantine_by_path is missing"),
        ("CREATE TRIGGER t AFTER INSERT ON states BEGIN SELECT 1; END", "trigger t on states"),
        ("DROP TABLE scenes", "the table scenes is missing"),
    ])
    func aRepairIsRefusedNamingTheDifference(change: String, named: String) throws {
        let folder = TemporaryFolder()
        let db = try makeDatabase(folder)
        try rawSQL(db, "PRAGMA user_version = 0; DROP TABLE schema_migrations; " + change)
        let before = FileSnapshot(db)
        let repair = try CLI.run(["migrate", "--repair", "--db", db])
        #expect(repair.status == 3, "\(repair)")
        #expect(repair.stderr.contains(named), "\(repair)")
        #expect(repair.stderr.contains("not re-recorded"), "\(repair)")
        #expect(FileSnapshot(db) == before)
    }

    @Test func recordsOfANewerBuildAreNeverRewritten() throws {
        let folder = TemporaryFolder()
        let db = try makeDatabase(folder)
        // A newer build's migration that changed no table: its records say 5, the header too.
        try rawSQL(
            db,
            "INSERT INTO schema_migrations VALUES (\(StateStore.latestSchemaVersion + 1), 'newer', 0); PRAGMA user_version = \(StateStore.latestSchemaVersion + 1)"
        )
        let before = FileSnapshot(db)
        #expect(try CLI.run(["migrate", "--repair", "--db", db]).status == 3)
        #expect(try CLI.run(["inspect", "--db", db]).status == 3)
        #expect(throws: StateStoreError.self) { try StateStore.repairSchemaVersion(at: db) }
        #expect(FileSnapshot(db) == before)
        // Only the table's record says so: still newer, still refused.
        try rawSQL(db, "PRAGMA user_version = 0")
        let header = FileSnapshot(db)
        #expect(try CLI.run(["migrate", "--repair", "--db", db]).status == 3)
        #expect(try CLI.run(["export", "--db", db]).status == 3)
        #expect(FileSnapshot(db) == header)
    }

    @Test func anIntactDatabaseHasNothingToRepair() throws {
        let folder = TemporaryFolder()
        let db = try makeDatabase(folder)
        let rows = try CLI.dump(db)
        let repair = try CLI.run(["migrate", "--repair", "--db", db])
        #expect(repair.status == 0)
        #expect(
            repair.stdout
                == "\(db) records schema version \(StateStore.latestSchemaVersion) already; nothing to repair.\n")
        #expect(try CLI.dump(db) == rows)
        #expect(try CLI.run(["migrate", "--repair", "--dry-run", "--db", db]).status == 2)
    }
}
