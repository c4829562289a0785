import Foundation
import StateStoreSQLite
import Testing

@testable import StateStore

/// The second and third hostile passes over `statectl`: times, names and archives out of the
/// ordinary, descriptors on the store's own file.
extension BadInputCLITests {
    // MARK: A second hostile pass

    @Test func timesOutOfRangeNeverTrapAndAreNotExported() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(
            db,
            """
            UPDATE states SET updated_at = 9223372036854775807 WHERE path = 'tabs/compose';
            UPDATE states SET updated_at = -9223372036854775808 WHERE path = 'tabs/mail/inbox';
            UPDATE pressure_events SET occurred_at = 9223372036854775807;
            """)
        for command in [
            ["inspect"], ["inspect", "--json"], ["inspect", "--events"], ["inspect", "--events", "--json"],
        ] {
            let result = try CLI.run(command + ["--db", db])
            #expect(result.status == 0, "\(command): \(result)")
            #expect(!result.stderr.contains("Fatal error"), "\(command): \(result)")
        }
        // check names what export will refuse: a healthy database is one that can be exported.
        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 1, "\(check)")
        #expect(check.stdout.contains("2 state(s) have an update time outside the years 0000–9999"), "\(check)")
        let checkJSON = try CLI.run(["check", "--db", db, "--json"])
        #expect(checkJSON.status == 1, "\(checkJSON)")
        #expect(checkJSON.stdout.contains(#""times_out_of_range": ["#), "\(checkJSON)")
        #expect(
            checkJSON.stdout.contains(#""tabs/compose""#) && checkJSON.stdout.contains(#""tabs/mail/inbox""#),
            "\(checkJSON)")
        Self.expectOneLine(try CLI.run(["export", "--db", db]), 1, containing: "outside the years 0000–9999")
        // prune compares in SQL and reports what it removed, never trapping after the commit.
        let pruned = try CLI.run(["prune", "--db", db, "--older-than", "1d"])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(pruned.stdout.contains("tabs/mail/inbox"), "\(pruned)")
    }

    @Test func aTypeNameThatIsNotUTF8IsNamedByCheckAndRemovable() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "UPDATE states SET type_name = CAST(X'41FF42' AS TEXT) WHERE path = 'tabs/compose'")
        let before = try CLI.dump(db)
        // Reading the state refuses it, saying what to do.
        Self.expectOneLine(
            try CLI.run(["inspect", "--db", db, "tabs/compose"]), 1,
            containing: "The state at tabs/compose cannot be used: its type name is not valid UTF-8")
        Self.expectOneLine(try CLI.run(["export", "--db", db]), 1, containing: "`statectl prune --path`")
        // check says so rather than calling the database healthy.
        let check = try CLI.run(["check", "--db", db, "--json"])
        #expect(check.status == 1, "\(check)")
        #expect(
            check.stdout.contains(#""invalid_type_names": ["#) && check.stdout.contains(#""tabs/compose""#), "\(check)")
        #expect(try CLI.dump(db) == before)
        // The remedy the messages give works.
        #expect(try CLI.run(["prune", "--db", db, "--path", "tabs/compose"]).status == 0)
        #expect(try CLI.run(["check", "--db", db]).status == 0)
        #expect(try CLI.run(["export", "--db", db]).status == 0)
    }

    /// What an export document cannot carry, another tool can write: a type name with a control
    /// character or over 4096 bytes, a version outside 0...Int32.max. `check` names each row
    /// rather than calling the database healthy, and the remedy it gives makes `export` work.
    @Test(arguments: [
        ("type_name = 'Mail' || char(9) || 'Draft'", "invalid_type_names"),
        ("type_name = printf('%.4097c', 'T')", "invalid_type_names"),
        ("version = 1099511627776", "versions_out_of_range"),
    ])
    func whatAnExportCannotCarryIsNamedByCheck(_ change: String, _ list: String) throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "UPDATE states SET \(change) WHERE path = 'tabs/compose'")
        let before = try CLI.dump(db)
        #expect(try CLI.run(["export", "--db", db]).status == 1)
        let check = try CLI.run(["check", "--db", db, "--json"])
        #expect(check.status == 1, "\(check)")
        #expect(check.stdout.contains("\"\(list)\": [\n    \"tabs/compose\"\n  ]"), "\(check)")
        let text = try CLI.run(["check", "--db", db])
        #expect(
            text.status == 1 && text.stdout.contains("`statectl prune --path`") && !text.stdout.contains("Healthy."),
            "\(text)")
        #expect(try CLI.dump(db) == before)
        #expect(try CLI.run(["prune", "--db", db, "--path", "tabs/compose"]).status == 0)
        #expect(try CLI.run(["check", "--db", db]).status == 0)
        #expect(try CLI.run(["export", "--db", db]).status == 0)
    }

    @Test func exportNeverWritesOverItsOwnDatabaseAndAppendsThroughStdout() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        let before = FileSnapshot(db)
        try FileManager.default.createSymbolicLink(atPath: folder.file("link"), withDestinationPath: db)
        for output in [db, folder.file("link"), db + "-wal", "./" + (db as NSString).lastPathComponent] {
            let result = try Self.shell(
                "cd '\(folder.path)' && \"$STATECTL\" export --db '\(db)' -o '\(output)' 2>&1; echo \"exit $?\"")
            #expect(result.output.contains("it is the database being exported"), "\(output): \(result.output)")
            #expect(result.output.hasSuffix("exit 1\n"), "\(output): \(result.output)")
        }
        #expect(FileSnapshot(db) == before)
        // `>> log` with /dev/stdout: appended to, not replaced.
        let log = folder.file("app.log")
        try Data("important 1\nimportant 2\n".utf8).write(to: URL(fileURLWithPath: log))
        #expect(try Self.shell("\"$STATECTL\" export --db '\(db)' -o /dev/stdout >> '\(log)'; echo $?").output == "0\n")
        let text = String(decoding: fileBytes(log), as: UTF8.self)
        #expect(text.hasPrefix("important 1\nimportant 2\n{"))
    }

    @Test func companionsThatAreFIFOsOrLinksAreRefusedWithoutTouchingAnything() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        unlink(db + "-wal")
        unlink(db + "-shm")
        #expect(mkfifo(db + "-shm", 0o600) == 0)
        Self.expectOneLine(try CLI.run(["inspect", "--db", db]), 3, containing: "-shm is a FIFO")
        unlink(db + "-shm")
        #expect(mkfifo(db + "-wal", 0o600) == 0)
        Self.expectOneLine(try CLI.run(["import", "--db", db, "/dev/null"]), 1, containing: "not a regular file")
        Self.expectOneLine(try CLI.run(["prune", "--db", db, "--older-than", "1d"]), 3, containing: "-wal is a FIFO")
        unlink(db + "-wal")
        // A companion that is a link to someone else's file: refused, and that file's mode kept.
        let victim = folder.file("victim.txt")
        #expect(
            FileManager.default.createFile(
                atPath: victim, contents: Data("x".utf8), attributes: [.posixPermissions: 0o644]))
        #expect(chmod(db, 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: db + "-wal", withDestinationPath: victim)
        Self.expectOneLine(
            try CLI.run(["prune", "--db", db, "--older-than", "1d"]), 3, containing: "-wal is a symbolic link")
        #expect(permissions(victim) == 0o644)
        #expect(permissions(db) == 0o644)
    }

    @Test func anotherProgramsFileKeepsItsModeItsJournalAndItsBytes() throws {
        let folder = TemporaryFolder()
        let other = folder.file("other.db")
        try CLI.tool("sqlite3", [other, "CREATE TABLE t(x); INSERT INTO t VALUES (1);"])
        #expect(chmod(other, 0o644) == 0)
        // A hot rollback journal left by a crash: SQLite would roll it back on the first read.
        try CLI.tool("sqlite3", [other, "PRAGMA journal_mode = DELETE"])
        let journal = other + "-journal"
        #expect(FileManager.default.createFile(atPath: journal, contents: Data(repeating: 0xD9, count: 512)))
        let before = (FileSnapshot(other), FileSnapshot(journal))
        let document = folder.file("doc.json")
        try Data(#"{"schema":1,"kind":"export","database_schema_version":1,"states":[]}"#.utf8).write(
            to: URL(fileURLWithPath: document))
        for command in [["import", document], ["prune", "--path", "a"], ["inspect"], ["demo"]] {
            Self.expectOneLine(try CLI.run(command + ["--db", other]), 3, containing: "another program")
        }
        #expect(FileSnapshot(other) == before.0)
        #expect(FileSnapshot(journal) == before.1)
        #expect(permissions(other) == 0o644)
        // Tables named like ours, with other columns, are not an old StateStore database.
        let rails = folder.file("rails.db")
        try CLI.tool(
            "sqlite3",
            [
                rails,
                "CREATE TABLE schema_migrations(version INTEGER PRIMARY KEY); INSERT INTO schema_migrations VALUES (2); CREATE TABLE states(id INTEGER PRIMARY KEY, name TEXT);",
            ])
        let railsBefore = FileSnapshot(rails)
        Self.expectOneLine(try CLI.run(["import", "--db", rails, document]), 3, containing: "another program")
        #expect(FileSnapshot(rails) == railsBefore)
        #expect(try CLI.tool("sqlite3", [rails, "PRAGMA journal_mode"]) == "delete\n")
    }

    @Test func aChangedConstraintIsASchemaMismatch() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(
            db,
            """
            CREATE TABLE states_copy AS SELECT * FROM states;
            DROP TABLE states;
            CREATE TABLE states (
                path TEXT NOT NULL PRIMARY KEY, type_name TEXT NOT NULL UNIQUE ON CONFLICT REPLACE,
                version INTEGER NOT NULL CHECK (version >= 0), generation INTEGER NOT NULL CHECK (generation >= 1),
                encoding TEXT NOT NULL CHECK (encoding IN ('json', 'binary')), checksum INTEGER NOT NULL,
                updated_at INTEGER NOT NULL, bytes BLOB NOT NULL, key_id TEXT) STRICT;
            INSERT INTO states SELECT * FROM states_copy; DROP TABLE states_copy;
            """)
        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 1, "\(check)")
        #expect(check.stdout.contains("constraints of states differ"), "\(check)")
    }

    @Test func exportNamesRowsImportWouldRefuseAndReplaceKeepsInvalidRows() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "UPDATE states SET checksum = checksum + 1 WHERE path = 'tabs/compose'")
        Self.expectOneLine(try CLI.run(["export", "--db", db]), 1, containing: "the checksum does not match")
        try rawSQL(db, "UPDATE states SET checksum = checksum - 1 WHERE path = 'tabs/compose'")
        let document = folder.file("doc.json")
        #expect(try CLI.run(["export", "--db", db, "-o", document]).status == 0)
        try rawSQL(
            db,
            "INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes) VALUES ('tabs//x', 'T', 1, 1, 'json', 0, 0, x'7b7d')"
        )
        #expect(try CLI.run(["import", "--replace", "--db", db, document]).status == 0)
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states WHERE path = 'tabs//x'"]) == "1\n")
    }

    @Test func clearedVersionRecordsReadTheSameEverywhere() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "PRAGMA user_version = 0; DROP TABLE schema_migrations")
        // Read-only commands salvage the states, with one warning saying what is wrong and how to repair it.
        for command in [["inspect"], ["export"]] {
            let result = try CLI.run(command + ["--db", db])
            #expect(result.status == 0, "\(result)")
            #expect(
                result.stderrLines.count == 1 && result.stderr.contains("`statectl migrate --repair --db \(db)`"),
                "\(result)")
        }
        // Writing commands refuse, pointing at the repair.
        for command in [["migrate"], ["migrate", "--dry-run"]] {
            let result = try CLI.run(command + ["--db", db])
            Self.expectOneLine(result, 3, containing: "records no schema version")
            #expect(result.stderr.contains("statectl migrate --repair"), "\(result)")
        }
        let check = try CLI.run(["check", "--db", db])
        #expect(
            check.status == 1 && check.stdout.contains("schema_migrations is missing")
                && check.stdout.contains("migrate --repair"), "\(check)")
    }

    /// Version records set back by hand to an older version, the tables left as they are: the
    /// writing commands refuse in one line pointing at the repair (not SQLite's error on the
    /// next migration's first table, with that migration's whole text), and the repair works.
    @Test func versionRecordsSetBackPointAtTheRepair() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "PRAGMA user_version = 3; DELETE FROM schema_migrations WHERE version > 3")
        let before = try CLI.dump(db), file = FileSnapshot(db)
        let document = folder.file("empty.json")
        try Data(#"{"schema":1,"kind":"export","database_schema_version":1,"states":[]}"#.utf8).write(
            to: URL(fileURLWithPath: document))
        for command in [
            ["migrate"], ["migrate", "--dry-run"], ["import", document], ["prune", "--path", "tabs/compose"],
        ] {
            let result = try CLI.run([command[0], "--db", db] + command.dropFirst())
            // import and prune first read the file, as they can, with a warning saying the same.
            #expect(result.status == 3 && result.stderrLines.count <= 2, "\(result)")
            #expect(
                result.stderrLines.last?.contains(
                    "its schema version records say 3, but its tables are schema \(StateStore.latestSchemaVersion)'s exactly"
                ) == true, "\(result)")
            #expect(
                result.stderr.contains("statectl migrate --repair") && !result.stderr.contains("CREATE"), "\(result)")
            #expect(FileSnapshot(db) == file)
        }
        #expect(try CLI.dump(db) == before)
        #expect(try CLI.run(["migrate", "--repair", "--db", db]).status == 0)
        #expect(try CLI.run(["check", "--db", db]).status == 0)
        #expect(try CLI.run(["prune", "--db", db, "--path", "tabs/compose"]).status == 0)
    }

    @Test func oddNamesStayOnOneLineAndEmptyFilesAreNotPruned() throws {
        let folder = TemporaryFolder()
        let wide = folder.file("wide\nfolder")
        #expect(mkdir(wide, 0o777) == 0 && chmod(wide, 0o777) == 0)
        let migrated = try CLI.run(["migrate", "--db", wide + "/s.sqlite"])
        #expect(migrated.status == 0)
        #expect(migrated.stderrLines.count == 1, "\(migrated)")
        #expect(migrated.stderr.contains(#"wide\nfolder"#), "\(migrated)")
        let empty = folder.file("empty.txt")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        Self.expectOneLine(
            try CLI.run(["prune", "--db", empty, "--older-than", "1d"]), 3, containing: "statectl migrate")
        #expect(fileBytes(empty).isEmpty)
        // A type name with escapes is shown escaped, never sent to the terminal.
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(
            db, "UPDATE states SET type_name = 'A' || char(10) || 'B' || char(27) || '[2J' WHERE path = 'tabs/compose'")
        let inspect = try CLI.run(["inspect", "--db", db])
        #expect(!inspect.stdout.contains("\u{1B}"), "\(inspect)")
        #expect(inspect.stdout.contains(#"A\nB\u{1B}[2J"#), "\(inspect)")
        // So it is in the view of one state, where it stays on its `Type:` line.
        let one = try CLI.run(["inspect", "--db", db, "tabs/compose"])
        #expect(one.status == 0, "\(one)")
        #expect(!one.stdout.contains("\u{1B}"), "\(one)")
        #expect(
            one.stdout.split(separator: "\n").contains { $0.hasPrefix("Type:") && $0.hasSuffix(#"A\nB\u{1B}[2J"#) },
            "\(one)")
    }

    // MARK: A third pass: archives and descriptors

    /// Puts `json` as the main scene's archive of a demo database.
    static func archive(_ json: String, in db: String) throws {
        try rawSQL(
            db,
            "UPDATE hierarchy SET archive = CAST(X'\(Data(json.utf8).map { String(format: "%02X", $0) }.joined())' AS BLOB) WHERE scene = 'main' AND set_aside = 0"
        )
    }

    @Test func hostileArchivesAreSetAsideWithAReasonAndPrintedEscaped() throws {
        let folder = TemporaryFolder()
        // A restoration path over 1024 bytes: no state could ever be saved under it.
        var node = #"{"kind":"plain","children":[],"storyboardIdentifier":"inbox","restorationIdentifier":"leaf"}"#
        for index in 0..<40 {
            node =
                #"{"kind":"plain","children":[\#(node)],"storyboardIdentifier":"inbox","restorationIdentifier":"\#(String(repeating: "x", count: 29))\#(index)"}"#
        }
        let cases: [(String, String)] = [
            (#"{"format":2,"root":\#(node)}"#, "longer than 1024 UTF-8 bytes"),
            (
                #"{"format":-5,"root":{"kind":"plain","children":[],"storyboardIdentifier":"inbox"}}"#,
                "was never written"
            ),
            (
                #"{"format":2.5,"root":{"kind":"plain","children":[],"storyboardIdentifier":"inbox"}}"#,
                "wrong type or a number out of range"
            ),
        ]
        for (json, reason) in cases {
            let db = try Self.demoDatabase(in: folder)
            try Self.archive(json, in: db)
            let demo = try CLI.run(["demo", "--db", db])
            #expect(demo.status == 0, "\(demo)")
            #expect(demo.stderrLines.count <= 3, "\(demo)")
            let shown = try CLI.run(["inspect", "--db", db, "--hierarchy", "--set-aside"])
            #expect(shown.stdout.contains(reason), "\(reason): \(shown)")
            try FileManager.default.removeItem(atPath: db)
        }
        // Escapes and bidi controls from an archive never reach the terminal raw.
        let db = try Self.demoDatabase(in: folder)
        try Self.archive(
            #"{"format":2,"orientation":"p\u001b[2J","root":{"kind":"plain","children":[],"storyboardIdentifier":"in\u001b[31mRED\u202ebox"},"unarchived":[{"path":"a\u001b]0;x\u0007","typeName":"T\nx","reason":"r"}]}"#,
            in: db)
        let shown = try CLI.run(["inspect", "--db", db, "--hierarchy"])
        #expect(
            !shown.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" || $0 == "\u{07}" }, "\(shown)")
        #expect(shown.stdout.contains(#"\u{1B}[31mRED\u{202E}box"#), "\(shown)")
    }

    @Test func aPartialRebuildOfThousandsIsReportedBriefly() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        let children = (0..<3000).map { #"{"kind":"plain","children":[],"storyboardIdentifier":"nope\#($0)"}"# }.joined(
            separator: ",")
        try Self.archive(
            #"{"format":2,"root":{"kind":"plain","storyboardIdentifier":"inbox","children":[\#(children)]}}"#, in: db)
        let demo = try CLI.run(["demo", "--db", db])
        #expect(demo.stderrLines.count <= 25, "\(demo.stderrLines.count) lines")
        #expect(try CLI.tool("sqlite3", [db, "SELECT max(length(value)) < 10000 FROM metadata"]) == "1\n")
        let shown = try CLI.run(["inspect", "--db", db, "--hierarchy", "--set-aside"])
        #expect(shown.stdout.split(separator: "\n").allSatisfy { $0.count < 2_200 }, "\(shown.stdout.count) characters")
    }

    @Test func exportRefusesADescriptorOnItsOwnDatabase() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        let before = FileSnapshot(db)
        let result = try Self.shell("\"$STATECTL\" export --db '\(db)' -o /dev/fd/7 7<>'\(db)' 2>&1; echo \"exit $?\"")
        #expect(result.output.contains("it is the database being exported"), "\(result.output)")
        #expect(result.output.hasSuffix("exit 1\n"))
        #expect(FileSnapshot(db) == before)
    }

    @Test func aForeignUniqueIndexIsAFindingAndARefusedFileGetsNothingBesideIt() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "CREATE UNIQUE INDEX evil ON states(type_name)")
        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 1 && check.stdout.contains("the unique index evil"), "\(check)")
        // A damaged copy whose header says WAL: refused, and no -wal or -shm appears beside it.
        let damaged = folder.file("damaged.sqlite")
        try Data(fileBytes(db).prefix(100)).write(to: URL(fileURLWithPath: damaged))
        for command in ["inspect", "check", "migrate", "export"] {
            _ = try CLI.run([command, "--db", damaged])
            #expect(!FileManager.default.fileExists(atPath: damaged + "-wal"), "\(command)")
            #expect(!FileManager.default.fileExists(atPath: damaged + "-shm"), "\(command)")
        }
    }

    @Test func demoPrintsTheStoresWarnings() throws {
        let folder = TemporaryFolder()
        let shared = folder.file("shared")
        #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o777) == 0)
        let demo = try CLI.run(["demo", "--db", shared + "/state.sqlite"])
        #expect(demo.status == 0)
        #expect(demo.stderr.hasPrefix("statectl: warning: the folder"), "\(demo)")
    }
}
