import Foundation
import StateStore
import Testing

/// `statectl prune`, run as the built binary.
@Suite(.hangGuard(minutes: 10)) struct CLIPruneTests {
    /// The fixture (all rows older than 30 days) plus one state written now.
    static func populate(_ db: String) throws {
        try Fixture.populate(db)
        let store = try StateStore(path: db)
        try store.save(["fresh": true], for: "root/fresh")
    }

    /// The summary line with the cutoff time (which depends on the clock) replaced by `<cutoff>`.
    static func normalised(_ text: String) -> String {
        text.replacing(/before \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/, with: "before <cutoff> UTC")
    }

    @Test func pruneOlderThanDryRunThenForReal() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Self.populate(db)
        let rowsBefore = try CLI.dump(db)

        let dry = try CLI.run(["prune", "--db", db, "--older-than", "30d", "--dry-run"])
        #expect(dry.status == 0, "\(dry)")
        let table = """
            PATH                TYPE           VERSION     SIZE  GENERATION  UPDATED (UTC)
            root/inbox          Mail.Inbox           1     30 B           3  2026-01-02 03:04:05
            root/inbox/compose  Mail.Draft           1     40 B           7  2020-06-01 00:00:00
            root/inbox/message  Mail.Message         2     63 B           1  2026-01-02 03:04:06
            root/settings       Mail.Settings        1  2.0 KiB           1  2021-03-04 05:06:07

            """
        #expect(
            Self.normalised(dry.stdout) == table + """
                Would remove 4 states (2.1 KiB) not updated for 30d (before <cutoff> UTC) from \(db). Nothing was changed (--dry-run).

                """)
        #expect(try CLI.dump(db) == rowsBefore)

        let real = try CLI.run(["prune", "--db", db, "--older-than", "30d"])
        #expect(real.status == 0, "\(real)")
        #expect(
            Self.normalised(real.stdout) == table + """
                Removed 4 states (2.1 KiB) not updated for 30d (before <cutoff> UTC) from \(db).

                """)
        #expect(try CLI.tool("sqlite3", [db, "SELECT path FROM states"]) == "root/fresh\n")
        // Quarantine, events and the hierarchy are not pruned.
        #expect(
            try CLI.tool(
                "sqlite3",
                [
                    db,
                    "SELECT (SELECT count(*) FROM quarantine), (SELECT count(*) FROM pressure_events), (SELECT count(*) FROM hierarchy)",
                ]) == "1|1|1\n")

        let nothing = try CLI.run(["prune", "--db", db, "--older-than", "12h"])
        #expect(
            Self.normalised(nothing.stdout)
                == "No states not updated for 12h (before <cutoff> UTC) in \(db); nothing was removed.\n")
    }

    @Test func prunePathPrefixWithJSON() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Self.populate(db)

        let dry = try CLI.run(["prune", "--db", db, "--path", "root/inbox", "--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry)")
        let entries = """
              "count": 3,
              "total_bytes": 133,
              "removed": [
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
              ]
            }

            """
        #expect(
            dry.stdout == """
                {
                  "schema": 1,
                  "kind": "prune",
                  "database": "\(db)",
                  "dry_run": true,
                  "older_than": null,
                  "cutoff": null,
                  "path_prefix": "root/inbox",

                """ + entries)
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states"]) == "5\n")

        let real = try CLI.run(["prune", "--db", db, "--path", "root/inbox", "--json"])
        #expect(real.status == 0, "\(real)")
        #expect(real.stdout == dry.stdout.replacingOccurrences(of: #""dry_run": true"#, with: #""dry_run": false"#))
        #expect(
            try CLI.tool("sqlite3", [db, "SELECT path FROM states ORDER BY path"]) == "root/fresh\nroot/settings\n")

        let text = try CLI.run(["prune", "--db", db, "--path", "root/settings"])
        #expect(
            text.stdout == """
                PATH           TYPE           VERSION     SIZE  GENERATION  UPDATED (UTC)
                root/settings  Mail.Settings        1  2.0 KiB           1  2021-03-04 05:06:07
                Removed 1 state (2.0 KiB) at or below root/settings from \(db).

                """)
    }

    @Test(arguments: [
        (["prune"], "Give --older-than DURATION, --path PREFIX or --invalid-paths."),
        (
            ["prune", "--older-than", "30d", "--path", "root"],
            "Give only one of --older-than, --path and --invalid-paths."
        ),
        (["prune", "--older-than", "30 days"], "is not a duration"),
        (["prune", "--older-than", "d"], "is not a duration"),
        (["prune", "--older-than", "99999999999999999999d"], "is not a duration"),
        (["prune", "--path", "root//x"], "is not a valid restoration path"),
    ])
    func pruneUsageErrors(_ arguments: [String], _ message: String) throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        let result = try CLI.run(arguments + ["--db", db])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.hasPrefix("statectl: "))
        #expect(result.stderr.contains(message), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: db))
    }

    /// `--quarantine`: quarantined rows by path or age, once shown; states are never touched,
    /// and `check` is healthy again once they are gone.
    @Test func pruneQuarantinedRowsByPathAndAge() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Self.populate(db)
        let store = try StateStore(path: db)
        try store.save(["n": 1], for: "root/later")
        try store.quarantine("root/later", reason: "a second one")
        let statesBefore = try StateStore(path: db, options: .init(readOnly: true)).entries()
        let before = try CLI.dump(db)
        #expect(
            try CLI.run(["check", "--db", db]).stdout.contains(
                "2 quarantined state(s); see `statectl inspect --quarantine`, and `statectl prune --quarantine`"))

        // The fixture's row was quarantined in January 2026, the second one just now.
        let none = try CLI.run(["prune", "--db", db, "--quarantine", "--path", "root/nothing"])
        #expect(none.status == 0 && none.stdout.hasPrefix("No quarantined states at or below root/nothing"), "\(none)")
        let dry = try CLI.run(["prune", "--db", db, "--quarantine", "--older-than", "1d", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout.contains("root/old") && !dry.stdout.contains("root/later"), "\(dry)")
        #expect(dry.stdout.contains("Would remove 1 quarantined state quarantined more than 1d ago"), "\(dry)")
        #expect(try CLI.dump(db) == before)

        let byPath = try CLI.run(["prune", "--db", db, "--quarantine", "--path", "root/later", "--json"])
        #expect(byPath.status == 0, "\(byPath)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(byPath.stdout.utf8)) as? [String: Any])
        #expect(document["count"] as? Int == 1 && document["quarantine"] as? Bool == true)
        let removed = try #require((document["removed_quarantined"] as? [[String: Any]])?.first)
        #expect(removed["path"] as? String == "root/later" && (removed["byte_count"] as? Int ?? 0) > 0)
        #expect(
            try StateStore(path: db, options: .init(readOnly: true)).quarantinedStates().map(\.path) == ["root/old"])

        let old = try CLI.run(["prune", "--db", db, "--quarantine", "--older-than", "1d"])
        #expect(
            old.status == 0 && old.stdout.contains("Removed 1 quarantined state quarantined more than 1d ago"), "\(old)"
        )
        #expect(try StateStore(path: db, options: .init(readOnly: true)).quarantinedStates().isEmpty)
        #expect(try StateStore(path: db, options: .init(readOnly: true)).entries() == statesBefore)
        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 0 && check.stdout.hasSuffix("Healthy.\n"), "\(check)")

        let invalid = try CLI.run(["prune", "--db", db, "--quarantine", "--invalid-paths"])
        #expect(
            invalid.status == 2 && invalid.stderr.contains("--quarantine takes --older-than or --path"), "\(invalid)")
    }

    @Test func pruneAcceptsDurationsInEveryUnit() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        try Self.populate(db)
        for duration in ["45s", "90m", "12h", "30d", "2w", "1d12h"] {
            let result = try CLI.run(["prune", "--db", db, "--older-than", duration, "--dry-run", "--json"])
            #expect(result.status == 0, "\(duration): \(result)")
            #expect(result.stdout.contains(#""older_than": "\#(duration)""#))
            #expect(result.stdout.contains(#""count": 4"#), "\(duration)")
        }
        let missing = try CLI.run(["prune", "--db", folder.file("missing.sqlite"), "--older-than", "1d"])
        #expect(missing.status == 3, "\(missing)")
        #expect(missing.stderrLines.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.file("missing.sqlite")))
    }
}
