import Foundation
import StateStore
import Testing

/// `statectl inspect`, run as the built binary against real databases.
@Suite(.hangGuard(minutes: 10)) struct CLIInspectTests {
    @Test func inspectOnAnEmptyMigratedDatabase() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        #expect(try CLI.run(["migrate", "--db", db]).status == 0)

        let table = try CLI.run(["inspect", "--db", db])
        #expect(table.status == 0, "\(table)")
        #expect(table.stdout == "No states in \(db).\n")
        #expect(table.stderr.isEmpty)

        let json = try CLI.run(["inspect", "--db", db, "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(
            json.stdout == """
                {
                  "schema": 1,
                  "kind": "entries",
                  "prefix": null,
                  "count": 0,
                  "total_bytes": 0,
                  "entries": [],
                  "invalid_rows": []
                }

                """)
    }

    @Test func inspectOnAPopulatedDatabase() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)

        let table = try CLI.run(["inspect", "--db", db])
        #expect(table.status == 0, "\(table)")
        #expect(table.stderr.isEmpty)
        #expect(
            table.stdout == """
                PATH                TYPE           VERSION     SIZE  GENERATION  UPDATED (UTC)
                root/inbox          Mail.Inbox           1     30 B           3  2026-01-02 03:04:05
                root/inbox/compose  Mail.Draft           1     40 B           7  2020-06-01 00:00:00
                root/inbox/message  Mail.Message         2     63 B           1  2026-01-02 03:04:06
                root/settings       Mail.Settings        1  2.0 KiB           1  2021-03-04 05:06:07
                4 states, 2.1 KiB in \(db)

                """)

        let json = try CLI.run(["inspect", "--db", db, "--json", "root/inbox", "--list"])
        #expect(json.status == 0, "\(json)")
        #expect(
            json.stdout == """
                {
                  "schema": 1,
                  "kind": "entries",
                  "prefix": "root/inbox",
                  "count": 3,
                  "total_bytes": 133,
                  "entries": [
                    {
                      "path": "root/inbox",
                      "type_name": "Mail.Inbox",
                      "version": 1,
                      "encoding": "json",
                      "byte_count": 30,
                      "generation": 3,
                      "updated_at": "2026-01-02T03:04:05.678Z"
                    },
                    {
                      "path": "root/inbox/compose",
                      "type_name": "Mail.Draft",
                      "version": 1,
                      "encoding": "binary",
                      "byte_count": 40,
                      "generation": 7,
                      "updated_at": "2020-06-01T00:00:00.000Z"
                    },
                    {
                      "path": "root/inbox/message",
                      "type_name": "Mail.Message",
                      "version": 2,
                      "encoding": "json",
                      "byte_count": 63,
                      "generation": 1,
                      "updated_at": "2026-01-02T03:04:06.000Z"
                    }
                  ],
                  "invalid_rows": []
                }

                """)
    }

    @Test func inspectOneJSONState() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)

        let text = try CLI.run(["inspect", "--db", db, "root/inbox/message"])
        #expect(text.status == 0, "\(text)")
        #expect(
            text.stdout == """
                Path:        root/inbox/message
                Type:        Mail.Message
                Version:     2
                Encoding:    json
                Size:        63 B
                Generation:  1
                Updated:     2026-01-02T03:04:06.000Z
                Checksum:    97825b2c861e5101 (ok)

                {
                  "body": "Hi \\"you\\"\\n",
                  "id": "m-42",
                  "tags": [
                    "work",
                    "ünïcode"
                  ]
                }

                """)

        let json = try CLI.run(["inspect", "--db", db, "root/inbox", "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(
            json.stdout == """
                {
                  "schema": 1,
                  "kind": "state",
                  "path": "root/inbox",
                  "type_name": "Mail.Inbox",
                  "version": 1,
                  "encoding": "json",
                  "byte_count": 30,
                  "generation": 3,
                  "updated_at": "2026-01-02T03:04:05.678Z",
                  "checksum": "5b3ad7182876e466",
                  "checksum_valid": true,
                  "value": {
                    "selected": "m-42",
                    "unread": 2
                  }
                }

                """)
    }

    @Test func inspectOneBinaryState() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)

        let text = try CLI.run(["inspect", "--db", db, "root/inbox/compose"])
        #expect(text.status == 0, "\(text)")
        #expect(
            text.stdout == """
                Path:        root/inbox/compose
                Type:        Mail.Draft
                Version:     1
                Encoding:    binary
                Size:        40 B
                Generation:  7
                Updated:     2020-06-01T00:00:00.000Z
                Checksum:    6bc927279e6a3044 (ok)

                Not JSON; the first bytes:
                00000000  00 07 0e 15 1c 23 2a 31 38 3f 46 4d 54 5b 62 69  |.....#*18?FMT[bi|
                00000010  70 77 7e 85 8c 93 9a a1 a8 af b6 bd c4 cb d2 d9  |pw~.............|
                00000020  e0 e7 ee f5 fc 03 0a 11                          |........|

                """)

        let json = try CLI.run(["inspect", "--db", db, "root/inbox/compose", "--json"])
        #expect(json.stdout.contains(#""base64": "\#(Fixture.draftBytes.base64EncodedString())""#), "\(json)")
        #expect(!json.stdout.contains(#""value""#))
    }

    @Test func inspectAPathThatHoldsNothing() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)

        let result = try CLI.run(["inspect", "--db", db, "root/nowhere"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "statectl: Nothing is stored at or below root/nowhere in \(db).\n")

        let invalid = try CLI.run(["inspect", "--db", db, "root//x"])
        #expect(invalid.status == 2, "\(invalid)")
    }

    @Test func inspectEventsQuarantineAndHierarchy() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)

        let events = try CLI.run(["inspect", "--db", db, "--events"])
        #expect(events.status == 0, "\(events)")
        #expect(
            events.stdout == """
                OCCURRED (UTC)       LEVEL    AVAILABLE  RSS BEFORE  RSS AFTER     FREED  DURATION
                2026-01-02 03:05:00  warning  512.0 MiB   200.0 MiB  150.0 MiB  50.0 MiB    1.5 ms
                1 event, newest first

                """)
        let eventsJSON = try CLI.run(["inspect", "--db", db, "--events", "--json"])
        #expect(
            eventsJSON.stdout == """
                {
                  "schema": 1,
                  "kind": "events",
                  "events": [
                    {
                      "occurred_at": "2026-01-02T03:05:00.000Z",
                      "level": "warning",
                      "available_bytes": 536870912,
                      "rss_before": 209715200,
                      "rss_after": 157286400,
                      "bytes_freed": 52428800,
                      "duration_us": 1500
                    }
                  ]
                }

                """)

        let quarantine = try CLI.run(["inspect", "--db", db, "--quarantine"])
        #expect(quarantine.status == 0, "\(quarantine)")
        #expect(
            quarantine.stdout == """
                ID  PATH      TYPE                                        VERSION  SIZE  QUARANTINED (UTC)    REASON
                 1  root/old  Swift.Dictionary<Swift.String, Swift.Bool>        3  14 B  2026-01-02 03:06:00  decoding failed: missing key "id"
                1 quarantined state, newest first

                """)
        let quarantineJSON = try CLI.run(["inspect", "--db", db, "--quarantine", "--json"])
        #expect(
            quarantineJSON.stdout == """
                {
                  "schema": 1,
                  "kind": "quarantine",
                  "quarantined": [
                    {
                      "id": 1,
                      "path": "root/old",
                      "type_name": "Swift.Dictionary<Swift.String, Swift.Bool>",
                      "version": 3,
                      "generation": 1,
                      "encoding": "json",
                      "byte_count": 14,
                      "updated_at": "2026-01-02T03:05:00.000Z",
                      "quarantined_at": "2026-01-02T03:06:00.000Z",
                      "reason": "decoding failed: missing key \\"id\\""
                    }
                  ]
                }

                """)

        let hierarchy = try CLI.run(["inspect", "--db", db, "--hierarchy"])
        #expect(hierarchy.status == 0, "\(hierarchy)")
        #expect(
            hierarchy.stdout == """
                The hierarchy archive for scene "main" (45 B) is not one this build can read: missing key "format"
                {
                  "root": {
                    "children": [],
                    "identifier": "inbox"
                  }
                }

                """)
        let none = try CLI.run(["inspect", "--db", db, "--hierarchy", "--set-aside"])
        #expect(none.stdout == "No set-aside hierarchy archive for scene \"main\".\n")

        let both = try CLI.run(["inspect", "--db", db, "--events", "--quarantine"])
        #expect(both.status == 2, "\(both)")
    }

    @Test func inspectAMissingFileFailsWithOneLineAndCreatesNothing() throws {
        let folder = TemporaryFolder()
        let db = folder.file("missing.sqlite")
        let result = try CLI.run(["inspect", "--db", db])
        #expect(result.status == 3, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1)
        #expect(
            result.stderr.hasPrefix(
                "statectl: There is no state database at \(db); run `statectl migrate --db \(db)` to create one"))
        #expect(!FileManager.default.fileExists(atPath: db))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

        // Through $STATESTORE_DB too, and in a folder that does not exist.
        let nested = folder.file("no/such/folder/state.sqlite")
        let viaEnvironment = try CLI.run(["inspect"], environment: ["STATESTORE_DB": nested])
        #expect(viaEnvironment.status == 3, "\(viaEnvironment)")
        #expect(viaEnvironment.stderrLines.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.file("no")))
    }

    @Test func inspectNeverMigratesOrWrites() throws {
        let folder = TemporaryFolder()
        // An empty file is a database at schema 0: inspect must refuse it, not migrate it.
        let empty = folder.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let refused = try CLI.run(["inspect", "--db", empty])
        #expect(refused.status == 3, "\(refused)")
        #expect(refused.stderrLines.count == 1)
        #expect(refused.stderr.contains("statectl migrate"))
        #expect(FileManager.default.contents(atPath: empty) == Data())

        // A populated database: its main file is byte-for-byte the same after every read command.
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)
        let before = try #require(FileManager.default.contents(atPath: db))
        let dumpBefore = try CLI.dump(db)
        for arguments in [
            ["inspect"], ["inspect", "--json"], ["inspect", "root/inbox"], ["inspect", "--events"],
            ["inspect", "--quarantine"], ["inspect", "--hierarchy"], ["export"], ["check"],
            ["prune", "--older-than", "1s", "--dry-run"], ["migrate", "--dry-run"],
        ] {
            _ = try CLI.run(arguments + ["--db", db])
        }
        #expect(FileManager.default.contents(atPath: db) == before)
        #expect(try CLI.dump(db) == dumpBefore)
    }

    @Test func inspectAReadOnlyDatabaseFile() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)
        #expect(chmod(db, 0o400) == 0)
        let before = try #require(FileManager.default.contents(atPath: db))

        let result = try CLI.run(["inspect", "--db", db])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("PATH "))
        #expect(result.stdout.contains("4 states, 2.1 KiB in \(db)"))
        let check = try CLI.run(["check", "--db", db, "--json"])
        #expect(check.stdout.contains(#""state_count": 4"#), "\(check)")
        #expect(FileManager.default.contents(atPath: db) == before)

        // The read-only open mode itself (root ignores permission bits): a write through it is refused.
        let store = try StateStore(path: db, options: .init(readOnly: true))
        #expect(try store.entries().count == 4)
        #expect(throws: StateStoreError.self) { try store.save(1, for: "root/x") }
        #expect(FileManager.default.contents(atPath: db) == before)
    }

    @Test func inspectWhileAnotherConnectionHoldsAnOpenWriteTransaction() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Fixture.populate(db)
        let writer = try StateStore(path: db)
        // Read while a writer is mid-transaction: WAL readers see the last commit.
        try writer.write { (transaction) throws(StateStoreError) in
            try transaction.save(["uncommitted": true], for: "root/pending")
            let result = try? CLI.run(["inspect", "--db", db, "--json"])
            #expect(result?.status == 0)
            #expect(result?.stdout.contains(#""count": 4"#) == true)
            #expect(result?.stdout.contains("root/pending") == false)
        }
        let after = try CLI.run(["inspect", "--db", db, "root/pending", "--json"])
        #expect(after.status == 0)
        #expect(after.stdout.contains(#""uncommitted": true"#))
    }
}
