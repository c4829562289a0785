import Foundation
import StateStore
import Testing

/// `statectl migrate` and `statectl check`, run as the built binary.
@Suite(.hangGuard(minutes: 10)) struct CLICheckMigrateTests {
    @Test func migrateDryRunOnAnEmptyFileChangesNothing() throws {
        let folder = TemporaryFolder()
        let db = folder.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: db, contents: Data()))

        let text = try CLI.run(["migrate", "--db", db, "--dry-run"])
        #expect(text.status == 0, "\(text)")
        #expect(
            text.stdout == """
                5 pending migrations for \(db) (schema 0 → 5):
                  0001 initial
                  0002 states_rowid
                  0003 application_id
                  0004 scenes
                  0005 sealed_states
                Nothing was changed (--dry-run).

                """)
        let json = try CLI.run(["migrate", "--db", db, "--dry-run", "--json"])
        #expect(
            json.stdout == """
                {
                  "schema": 1,
                  "kind": "migrate",
                  "database": "\(db)",
                  "dry_run": true,
                  "created": false,
                  "from_version": 0,
                  "to_version": 5,
                  "migrations": [
                    {
                      "version": 1,
                      "name": "initial"
                    },
                    {
                      "version": 2,
                      "name": "states_rowid"
                    },
                    {
                      "version": 3,
                      "name": "application_id"
                    },
                    {
                      "version": 4,
                      "name": "scenes"
                    },
                    {
                      "version": 5,
                      "name": "sealed_states"
                    }
                  ]
                }

                """)
        #expect(FileManager.default.contents(atPath: db) == Data())

        // A missing file is not created by a dry run either.
        let missing = folder.file("missing.sqlite")
        let dry = try CLI.run(["migrate", "--db", missing, "--dry-run"])
        #expect(dry.status == 0, "\(dry)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func migrateCreatesAWALDatabaseWithMode0600() throws {
        let folder = TemporaryFolder()
        let db = folder.file("app/state.sqlite")
        let result = try CLI.run(["migrate", "--db", db])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdout == """
                Applied 5 migrations to \(db) (created) (schema 0 → 5):
                  0001 initial
                  0002 states_rowid
                  0003 application_id
                  0004 scenes
                  0005 sealed_states

                """)
        #expect(try CLI.tool("sqlite3", [db, "PRAGMA journal_mode; PRAGMA integrity_check"]) == "wal\nok\n")
        #expect(try CLI.tool("stat", ["-c", "%a", db]) == "600\n")
        #expect(try CLI.tool("stat", ["-c", "%a", folder.file("app")]) == "700\n")

        let again = try CLI.run(["migrate", "--db", db])
        #expect(again.status == 0)
        #expect(again.stdout == "\(db) is at schema version 5; nothing to migrate.\n")
    }

    @Test func migrateRefusesANewerSchemaAndANonDatabase() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)
        try CLI.tool("sqlite3", [db, "PRAGMA user_version = 99"])
        let before = try #require(FileManager.default.contents(atPath: db))
        for arguments in [["migrate"], ["migrate", "--dry-run"], ["inspect"], ["check"], ["import", "x.json"]] {
            let result = try CLI.run(arguments + ["--db", db])
            if arguments.first == "import" { continue }  // x.json does not exist: refused before opening.
            #expect(result.status == 3, "\(arguments): \(result)")
            #expect(result.stderrLines.count == 1)
            #expect(
                result.stderr.contains(
                    "schema version 99, newer than the \(StateStore.latestSchemaVersion) this build knows"))
        }
        #expect(FileManager.default.contents(atPath: db) == before)

        let garbage = folder.file("garbage.sqlite")
        let noise = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        #expect(FileManager.default.createFile(atPath: garbage, contents: noise))
        for command in ["migrate", "check", "inspect"] {
            let result = try CLI.run([command, "--db", garbage])
            #expect(result.status == 3, "\(command): \(result)")
            #expect(
                result.stderr
                    == "statectl: \(garbage) is not an SQLite database. It was left untouched; move it aside (or point --db elsewhere) to start a new store.\n"
            )
        }
        #expect(FileManager.default.contents(atPath: garbage) == noise)
    }

    @Test func checkAHealthyDatabase() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db, quarantine: false)
        let text = try CLI.run(["check", "--db", db])
        #expect(text.status == 0, "\(text)")
        #expect(text.stderr.isEmpty)
        #expect(
            text.stdout == """
                Database:             \(db)
                Integrity:            ok
                Schema version:       5 (this build: 5)
                Journal mode:         wal
                States:               4
                Quarantined:          0
                Pressure events:      1
                Checksum mismatches:  0
                Sealed states:        0
                Healthy.

                """)
        let json = try CLI.run(["check", "--db", db, "--json"])
        #expect(json.status == 0)
        #expect(
            json.stdout == """
                {
                  "schema": 1,
                  "kind": "check",
                  "database": "\(db)",
                  "healthy": true,
                  "problems": [],
                  "integrity": [
                    "ok"
                  ],
                  "schema_version": 5,
                  "latest_schema_version": 5,
                  "journal_mode": "wal",
                  "state_count": 4,
                  "quarantine_count": 0,
                  "pressure_event_count": 1,
                  "checksum_mismatches": [],
                  "header_schema_version": 5,
                  "invalid_rows": [],
                  "exhausted_generations": [],
                  "times_out_of_range": [],
                  "invalid_type_names": [],
                  "versions_out_of_range": [],
                  "sealed_states": {},
                  "unopened_key_ids": [],
                  "unopenable_states": []
                }

                """)
    }

    @Test func checkReportsQuarantineAndChecksumMismatches() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)
        // A foreign edit: the bytes change, the checksum does not.
        try CLI.tool(
            "sqlite3", [db, "UPDATE states SET bytes = CAST('{\"unread\":3}' AS BLOB) WHERE path = 'root/inbox'"])
        let text = try CLI.run(["check", "--db", db])
        #expect(text.status == 1, "\(text)")
        #expect(
            text.stdout.hasSuffix(
                """
                Checksum mismatches:  1 (root/inbox)
                Sealed states:        0
                Problems found:
                  - 1 state(s) do not match their checksum
                  - 1 quarantined state(s); see `statectl inspect --quarantine`, and `statectl prune --quarantine` once they are not wanted

                """), "\(text)")
        let json = try CLI.run(["check", "--db", db, "--json"])
        #expect(json.status == 1)
        #expect(json.stdout.contains(#""healthy": false"#))
        #expect(
            json.stdout.contains(
                """
                  "checksum_mismatches": [
                    "root/inbox"
                  ],
                """))
        let state = try CLI.run(["inspect", "--db", db, "root/inbox"])
        #expect(state.stdout.contains("(MISMATCH: the bytes were changed outside StateStore)"))
    }

    @Test func checkFindsDamagedPages() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        do {
            let store = try StateStore(path: db)
            try store.write { (transaction) throws(StateStoreError) in
                for index in 0..<200 {
                    try transaction.save(
                        String(repeating: "state \(index) ", count: 100),
                        for: try RestorationPath(validating: "root/s\(index)"))
                }
            }
        }
        #expect(try CLI.run(["check", "--db", db]).status == 0)
        // Overwrite pages in the middle of the file (page 1, the header and schema, stays intact).
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: db))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 16384))
        try handle.close()

        let text = try CLI.run(["check", "--db", db])
        #expect(text.status == 1, "\(text)")
        #expect(text.stdout.contains("Problems found:"))
        let json = try CLI.run(["check", "--db", db, "--json"])
        #expect(json.status == 1)
        #expect(json.stdout.contains(#""healthy": false"#))
        // Commands that need a sound file refuse it at open: exit 3, one line.
        let inspect = try CLI.run(["inspect", "--db", db])
        #expect(inspect.status == 3, "\(inspect)")
        #expect(inspect.stderrLines.count == 1)
        #expect(inspect.stderr.contains("is damaged"))
    }
}
