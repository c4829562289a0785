import Foundation
import StateStoreSQLite
import Testing

@testable import StateStore

/// `statectl` at its edges, run as the built binary: closed descriptors, numbers out of range,
/// FIFOs and devices, other programs' databases, odd output targets, hostile documents.
/// Each case ends in one `statectl:` line and the right exit code, and leaves every byte.
@Suite(.hangGuard(minutes: 10)) struct BadInputCLITests {
    /// Runs `script` with `bash -c`, `$STATECTL` set to the built binary.
    static func shell(_ script: String) throws -> (status: Int32, output: String) {
        let (process, pipe) = try CLI.start("/bin/bash", ["-c", script], environment: ["STATECTL": CLI.executable])
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A demo database, for commands that need one.
    static func demoDatabase(in folder: TemporaryFolder) throws -> String {
        let db = folder.file("state.sqlite")
        let demo = try CLI.run(["demo", "--db", db])
        #expect(demo.status == 0, "\(demo)")
        return db
    }

    /// One line on stderr, starting `statectl:`, one full stop at the end.
    static func expectOneLine(
        _ result: CLIResult, _ status: Int32, containing text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderrLines.count == 1, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("statectl: "), "\(result)", sourceLocation: sourceLocation)
        #expect(!result.stderr.contains(".."), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(text), "\(result)", sourceLocation: sourceLocation)
    }

    // MARK: Crashes

    /// A database another process keeps locked past the busy timeout: one line that says to run
    /// the command again (statectl has no busy timeout to raise), exit 1, nothing changed.
    @Test func aLockHeldElsewhereSaysToRunTheCommandAgain() throws {
        let folder = TemporaryFolder("cli-busy")
        let path = folder.file("state.sqlite")
        do {
            let store = try StateStore(path: path)
            try store.save("kept", for: "root/a")
        }
        beforeRawSQLite()
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        let result = try CLI.run(["prune", "--db", path, "--path", "root/a"])
        try #require(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderr.hasPrefix(
                "statectl: the state database stayed locked by another process for longer than 5 s"), "\(result)")
        #expect(result.stderr.contains("Run the command again") && !result.stderr.contains("Options"), "\(result)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result)")
        #expect(
            try StateStore(path: path, options: .init(readOnly: true)).restore(String.self, for: "root/a") == "kept")
    }

    @Test func reportingSurvivesClosedDescriptors() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        // stderr closed: the error cannot be printed, the exit code still says what happened.
        #expect(try Self.shell(#""$STATECTL" inspect --db /nonexistent/x.sqlite 2>&-; echo $?"#).output == "3\n")
        #expect(try Self.shell(#""$STATECTL" --bogus 2>&-; echo $?"#).output == "2\n")
        // stdout closed: the output never arrived, so exit 1 (and a line on stderr), never a trap.
        #expect(try Self.shell("\"$STATECTL\" inspect --db '\(db)' >&-; echo $?").output == "1\n")
        #expect(
            try Self.shell("\"$STATECTL\" inspect --db '\(db)' 2>&1 >&- | head -1").output.hasPrefix(
                "statectl: cannot write the output"))
        #expect(try Self.shell("\"$STATECTL\" export --db '\(db)' >/dev/full; echo $?").output == "1\n")
        for listing in ["inspect", "inspect --json", "prune --older-than 0s --dry-run"] {
            #expect(
                try Self.shell("\"$STATECTL\" \(listing) --db '\(db)' 2>&1 >/dev/full; echo $?").output
                    == "statectl: cannot write the output: No space left on device.\n1\n", "\(listing)")
            #expect(
                try Self.shell("\"$STATECTL\" \(listing) --db '\(db)' | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}")
                    .output == "0\n", "\(listing)")
        }
        // A prune whose list cannot be written has still removed the states: it says so.
        let pruned = try Self.shell("\"$STATECTL\" prune --older-than 0s --db '\(db)' 2>&1 >/dev/full; echo $?").output
        #expect(
            pruned.hasPrefix("statectl: The states were removed and the removal committed")
                && pruned.hasSuffix("No space left on device.\n1\n"), "\(pruned)")
        #expect(try StateStore(path: db).entries().isEmpty)
        // A reader that left is not a failure, and SIGPIPE does not end the process.
        #expect(try Self.shell("\"$STATECTL\" export --db '\(db)' | true; echo ${PIPESTATUS[0]}").output == "0\n")
        #expect(try Self.shell("\"$STATECTL\" monitor --once >&- 2>&- <&-; echo $?").output == "0\n")
    }

    @Test(arguments: [
        ["monitor", "--interval", "1e300s"], ["monitor", "--interval", "1e19"],
        ["monitor", "--interval", "99999999999999999999d"],
        ["monitor", "--interval", "0"], ["monitor", "--interval", "-1s"],
        ["soak", "--memory-limit", "99999999999999999999"],
        ["soak", "--memory-limit", "1e400"], ["soak", "--duration", "1e300s"],
        ["prune", "--older-than", "9999999999w"],
        ["export", "--max-state-size", "2PiB"], ["import", "x.json", "--max-state-size", "0"],
    ])
    func outOfRangeNumbersAreUsageErrors(_ arguments: [String]) throws {
        Self.expectOneLine(try CLI.run(arguments), 2, containing: "--help`")
    }

    @Test func everyDurationOptionTakesTheSameGrammar() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        #expect(try CLI.run(["monitor", "--count", "1", "--interval", "1d"]).status == 0)
        #expect(try CLI.run(["monitor", "--count", "1", "--interval", "1.5s"]).status == 0)
        #expect(try CLI.run(["prune", "--db", db, "--older-than", "500ms", "--dry-run"]).status == 0)
        #expect(try CLI.run(["prune", "--db", db, "--older-than", "1d12h", "--dry-run"]).status == 0)
        // --duration 1d12h and --memory-limit 1.5G parse: the refusal is about --controllers.
        let soak = try CLI.run(["soak", "--duration", "1d12h", "--memory-limit", "1.5G", "--controllers", "1"])
        Self.expectOneLine(soak, 2, containing: "--controllers")
    }

    // MARK: Hangs

    @Test func aFIFOOrADeviceIsRefusedWithoutBeingRead() throws {
        let folder = TemporaryFolder()
        let fifo = folder.file("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        let document = folder.file("doc.json")
        try Data(#"{"schema":1,"kind":"export","database_schema_version":1,"states":[]}"#.utf8).write(
            to: URL(fileURLWithPath: document))
        for command in [
            "inspect", "check", "export", "migrate", "migrate --dry-run", "prune --older-than 1d", "import \(document)",
        ] {
            let arguments = command.split(separator: " ").map(String.init)
            Self.expectOneLine(try CLI.run(arguments + ["--db", fifo]), 3, containing: "FIFO")
        }
        for device in ["/dev/full", "/dev/zero"] {
            let result = try CLI.run(["inspect", "--db", device])
            Self.expectOneLine(result, 3, containing: "character device")
            #expect(!result.stderr.contains("migrate"))
        }
        let directory = try CLI.run(["migrate", "--db", folder.path])
        Self.expectOneLine(directory, 3, containing: "is a directory")
        // A FIFO standing in for /proc/meminfo.
        try FileManager.default.createDirectory(atPath: folder.file("root/proc"), withIntermediateDirectories: true)
        #expect(mkfifo(folder.file("root/proc/meminfo"), 0o600) == 0)
        Self.expectOneLine(
            try CLI.run(["monitor", "--once", "--root", folder.file("root")]), 3, containing: "not a regular file")
    }

    // MARK: Someone else's data

    @Test func anotherProgramsDatabaseIsRefusedByEveryCommand() throws {
        let folder = TemporaryFolder()
        let other = folder.file("other.sqlite")
        try CLI.tool(
            "sqlite3",
            [
                other,
                "CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts(name) VALUES ('ada');",
            ])
        let link = folder.file("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: other)
        let document = folder.file("doc.json")
        try Data(#"{"schema":1,"kind":"export","database_schema_version":1,"states":[]}"#.utf8).write(
            to: URL(fileURLWithPath: document))
        let before = FileSnapshot(other)
        for db in [other, link] {
            for command in [
                ["migrate"], ["migrate", "--dry-run"], ["prune", "--older-than", "1s"], ["import", document],
                ["inspect"], ["check"], ["export"],
            ] {
                let result = try CLI.run(command + ["--db", db])
                Self.expectOneLine(result, 3, containing: "another program")
                #expect(!result.stderr.contains("statectl migrate"), "\(command): \(result)")
            }
        }
        #expect(FileSnapshot(other) == before)
        #expect(!FileManager.default.fileExists(atPath: other + "-wal"))
    }

    @Test func exportWritesThroughDevicesFollowsLinksAndReplacesOnlyRegularFiles() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        // A symbolic link: the file it names is replaced, the link stays a link.
        let target = folder.file("backup.json"), link = folder.file("latest.json")
        #expect(FileManager.default.createFile(atPath: target, contents: Data("old".utf8)))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try CLI.run(["export", "--db", db, "--output", link]).status == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try CLI.run(["import", "--db", folder.file("copy.sqlite"), target]).status == 0)
        // A character device is written through, never replaced by a regular file.
        #expect(try CLI.run(["export", "--db", db, "--output", "/dev/null"]).status == 0)
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
        // /dev/stdout, a link into /proc, reaches the pipe it stands for.
        let piped = try Self.shell("\"$STATECTL\" export --db '\(db)' --output /dev/stdout | head -c 200")
        #expect(piped.output.contains("\"kind\": \"export\""))
        // A directory, and a link to nothing, are refused.
        Self.expectOneLine(try CLI.run(["export", "--db", db, "--output", folder.path]), 1, containing: "a directory")
        try FileManager.default.createSymbolicLink(
            atPath: folder.file("dangling.json"), withDestinationPath: folder.file("missing/x.json"))
        Self.expectOneLine(
            try CLI.run(["export", "--db", db, "--output", folder.file("dangling.json")]), 1,
            containing: "symbolic link")
    }

    // MARK: Silent loss

    /// Copies beside `db` the hot journal of another database, half-way through a transaction
    /// that spilled into it: its first one (`firstTransaction`: the journal records an empty
    /// database, as a new store's own switch to WAL does) or one after a commit.
    static func copyForeignJournal(beside db: String, in folder: TemporaryFolder, firstTransaction: Bool) throws {
        let other = folder.file("other.sqlite")
        beforeRawSQLite()
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(other, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(handle) }
        let rows =
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO t SELECT randomblob(500) FROM n;"
        let transaction =
            firstTransaction
            ? "BEGIN; CREATE TABLE t(x); \(rows)"
            : "CREATE TABLE t(x); \(rows) BEGIN; UPDATE t SET x = randomblob(500);"
        try #require(
            sqlite3_exec(handle, "PRAGMA journal_mode = DELETE; PRAGMA cache_size = 2; " + transaction, nil, nil, nil)
                == SQLITE_OK)
        try FileManager.default.copyItem(atPath: other + "-journal", toPath: db + "-journal")
        try #require(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
    }

    /// A rollback journal another database left beside a StateStore file (copied or renamed
    /// there; the store's own files use a WAL and never have one): SQLite would play it back
    /// into the file at the first read. Every command refuses before that, exit 3, the file byte
    /// for byte as it was; moved away as the message says, the database is whole.
    @Test func aJournalFromAnotherDatabaseIsNeverPlayedBack() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try Self.copyForeignJournal(beside: db, in: folder, firstTransaction: false)
        let before = FileSnapshot(db)
        let document = folder.file("empty.json")
        try Data(#"{"schema":1,"kind":"export","database_schema_version":1,"states":[]}"#.utf8).write(
            to: URL(fileURLWithPath: document))
        for arguments in [
            ["inspect"], ["check"], ["export"], ["prune", "--path", "x/y"], ["migrate"], ["migrate", "--repair"],
            ["import", document], ["rekey", "--clear"],
        ] {
            let result = try CLI.run([arguments[0], "--db", db] + arguments.dropFirst())
            Self.expectOneLine(result, 3, containing: "lies a rollback journal, \(db)-journal, that is not its own")
            #expect(result.stderr.contains("Move \(db)-journal out of the folder"), "\(result)")
            #expect(FileSnapshot(db) == before, "\(arguments)")
            #expect(FileManager.default.fileExists(atPath: db + "-journal"))
        }
        try FileManager.default.moveItem(atPath: db + "-journal", toPath: folder.file("moved-journal"))
        let checked = try CLI.run(["check", "--db", db])
        #expect(checked.status == 0 && checked.stdout.hasSuffix("Healthy.\n"), "\(checked)")
    }

    /// A store cut before its first checkpoint (its file one unmarked page, everything in the
    /// WAL) beside the journal of another database's first transaction (which records an empty
    /// database, as a new store's own switch to WAL does): played back, it would cut the file
    /// to nothing and SQLite would then delete the WAL. Refused; the files stay as they were.
    @Test func aJournalBesideAStoreWhoseDataIsInItsWALIsNeverPlayedBack() throws {
        let folder = TemporaryFolder()
        let live = folder.file("live.sqlite"), db = folder.file("copy.sqlite")
        let store = try StateStore(path: live)
        try store.save("only in the WAL", for: "root/compose")
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: live + suffix, toPath: db + suffix)
        }
        withExtendedLifetime(store) {}
        try Self.copyForeignJournal(beside: db, in: folder, firstTransaction: true)
        let file = FileSnapshot(db), wal = FileSnapshot(db + "-wal")
        for arguments in [["inspect"], ["rekey", "--clear"], ["migrate"]] {
            let result = try CLI.run([arguments[0], "--db", db] + arguments.dropFirst())
            Self.expectOneLine(result, 3, containing: "lies a rollback journal, \(db)-journal, that is not its own")
            #expect(FileSnapshot(db) == file && FileSnapshot(db + "-wal") == wal, "\(arguments)")
        }
        try FileManager.default.removeItem(atPath: db + "-journal")
        #expect(try StateStore(path: db).restore(String.self, for: "root/compose") == "only in the WAL")
    }

    /// A store not marked with StateStore's application id (as stores of schema 1 and 2 are),
    /// closed (no WAL), beside the journal of another database's first transaction: it looks
    /// like a new store's own switch to WAL in every other way, but it holds tables, and the
    /// switch never leaves more than one empty page. Refused.
    @Test func aJournalBesideAnUnmarkedStoreWithTablesIsNeverPlayedBack() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        // A schema-2 store, as the releases before the application id wrote it, closed.
        do {
            let connection = try Connection(path: db, options: .init())
            try connection.execute("PRAGMA journal_mode = WAL")
            try Migrator(migrations: Array(Migrator().migrations.prefix(2))).migrate(connection)
            try connection.execute(
                "INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes) VALUES ('root/a', 'String', 1, 1, 'json', \(Checksum.stored(Data("\"kept\"".utf8))), 1700000000000, CAST('\"kept\"' AS BLOB))"
            )
            // Everything in the file, the WAL empty: as a clean close leaves it.
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try Self.copyForeignJournal(beside: db, in: folder, firstTransaction: true)
        let file = FileSnapshot(db)
        for arguments in [["migrate"], ["inspect"]] {
            let result = try CLI.run([arguments[0], "--db", db])
            Self.expectOneLine(result, 3, containing: "lies a rollback journal, \(db)-journal, that is not its own")
            #expect(FileSnapshot(db) == file, "\(arguments)")
        }
        try FileManager.default.removeItem(atPath: db + "-journal")
        #expect(try StateStore(path: db).restore(String.self, for: "root/a") == "kept")
    }

    /// A copy that lost its `-wal` beside the `-shm` that lists its pages: refused by every
    /// command, `migrate` and `migrate --dry-run` included, and through a symbolic link to the
    /// file (SQLite names the companions after the link's target). The first connection to open
    /// it would have reset the index that says so, and the older file would have been read, and
    /// then written, as if whole.
    @Test func aLostWALIsRefusedByEveryCommandAndThroughALink() throws {
        let folder = TemporaryFolder()
        let live = folder.file("live.sqlite"), copy = folder.file("copy.sqlite"), link = folder.file("link.sqlite")
        let store = try StateStore(path: live)
        try store.save("only in the WAL", for: "root/compose")
        for suffix in ["", "-shm"] { try FileManager.default.copyItem(atPath: live + suffix, toPath: copy + suffix) }
        #expect(symlink(copy, link) == 0)
        let document = folder.file("one.json")
        try Data(
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[{"path":"root/a","type_name":"T","version":1,"encoding":"json","value":{}}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: document))
        let file = FileSnapshot(copy), index = FileSnapshot(copy + "-shm")
        for (database, arguments) in [
            (copy, ["migrate", "--dry-run"]), (copy, ["migrate"]), (link, ["inspect"]), (link, ["migrate"]),
            (link, ["prune", "--path", "root/compose"]), (link, ["import", document]),
        ] {
            let result = try CLI.run([arguments[0], "--db", database] + arguments.dropFirst())
            Self.expectOneLine(result, 3, containing: "The write-ahead log")
            #expect(FileSnapshot(copy) == file && FileSnapshot(copy + "-shm") == index, "\(database) \(arguments)")
            #expect(!FileManager.default.fileExists(atPath: copy + "-wal"))
        }
        withExtendedLifetime(store) {}
    }

    @Test func importRefusesDuplicateKeysAndOutOfRangeFields() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        let before = try CLI.dump(db)
        let state = #"{"path":"root/a","type_name":"T","version":1,"encoding":"json","value":{}}"#
        let documents = [
            // Two "states": the first (empty) one, with --replace, would have removed everything.
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[],"states":[\#(state)]}"#,
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[{"path":"root/a","path":"root/b","type_name":"T","version":1,"encoding":"json","value":{}}]}"#,
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[{"path":"root/a","type_name":"T","version":1,"generation":9223372036854775807,"encoding":"json","value":{}}]}"#,
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[{"path":"root/a","type_name":"T","version":99999999999,"encoding":"json","value":{}}]}"#,
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[{"path":"root/a\u0000b","type_name":"T","version":1,"encoding":"json","value":{}}]}"#,
        ]
        for (index, text) in documents.enumerated() {
            let file = folder.file("doc\(index).json")
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let result = try CLI.run(["import", "--replace", "--db", db, file])
            Self.expectOneLine(result, 1, containing: "Nothing was imported")
        }
        #expect(try CLI.dump(db) == before)
    }

    @Test func whatExportWritesImportAccepts() throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        // An application that raised its own limit keeps a 2 MiB state.
        let store = try StateStore(path: db, options: .init(maximumStateSize: 4 << 20))
        try store.save(
            encoded: Data(repeating: 0x41, count: 2 << 20), encoding: .binary, typeName: "Blob", version: 1,
            for: "root/big")
        let output = folder.file("backup.json")
        let refused = try CLI.run(["export", "--db", db, "--output", output])
        Self.expectOneLine(refused, 1, containing: "--max-state-size")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try CLI.run(["export", "--db", db, "--output", output, "--max-state-size", "4MiB"]).status == 0)
        let copy = folder.file("copy.sqlite")
        Self.expectOneLine(try CLI.run(["import", "--db", copy, output]), 1, containing: "--max-state-size")
        #expect(try CLI.run(["import", "--db", copy, output, "--max-state-size", "4MiB"]).status == 0)
        #expect(try CLI.tool("sqlite3", [copy, "SELECT length(bytes) FROM states"]) == "\(2 << 20)\n")

        // Rows whose paths are invalid are named, not dropped from the document.
        try rawSQL(
            db,
            "INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes) VALUES ('root//x', 'T', 1, 1, 'json', 0, 0, x'7b7d')"
        )
        Self.expectOneLine(
            try CLI.run(["export", "--db", db, "--max-state-size", "4MiB"]), 1, containing: "prune --invalid-paths")
    }

    @Test func rowsWithInvalidPathsAreShownCheckedAndPrunedAsSuch() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(
            db,
            """
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            SELECT path || char(0) || 'x', type_name, version, generation, encoding, checksum + 1, updated_at, bytes
            FROM states WHERE path = 'tabs/mail/inbox';
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES ('tabs//gap', 'T', 1, 1, 'json', 0, 0, x'7b7d');
            """)
        let inspect = try CLI.run(["inspect", "--db", db])
        #expect(inspect.stdout.components(separatedBy: "tabs/mail/inbox ").count == 2, "\(inspect)")  // shown once
        #expect(inspect.stdout.contains("tabs/mail/inbox\\0x"), "\(inspect)")
        #expect(inspect.stdout.contains("2 rows have paths that are not a valid restoration path"))
        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 1, "\(check)")
        #expect(check.stdout.contains("2 row(s) have a path that is not a valid restoration path"))
        // prune --path lists exactly what it removes; the invalid rows under it stay, and are named.
        let count = { try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states"]) }
        let pruned = try CLI.run(["prune", "--db", db, "--path", "tabs", "--json"])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(pruned.stdout.contains("\"count\": 3"), "\(pruned)")
        #expect(try count() == "2\n")
        let invalid = try CLI.run(["prune", "--db", db, "--invalid-paths"])
        #expect(invalid.stdout.contains("Removed 2 rows with invalid paths"), "\(invalid)")
        #expect(try count() == "0\n")
        #expect(try CLI.run(["check", "--db", db]).status == 0)
    }

    @Test func aGenerationThatCanNeverRiseIsAFinding() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "UPDATE states SET generation = 9223372036854775807 WHERE path = 'tabs/compose'")
        let check = try CLI.run(["check", "--db", db, "--json"])
        #expect(check.status == 1)
        #expect(check.stdout.contains(#""exhausted_generations": ["#), "\(check)")
    }

    @Test func databasePathsThatAreNotFilesAreRefused() throws {
        let folder = TemporaryFolder()
        let document = folder.file("doc.json")
        try Data(
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[{"path":"a","type_name":"T","version":1,"encoding":"json","value":{}}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: document))
        for db in [":memory:", "file:\(folder.file("x.sqlite"))", "file:x.sqlite?mode=memory"] {
            Self.expectOneLine(
                try CLI.run(["import", "--db", db, document]), 3, containing: "not a database file path")
        }
        #expect(!FileManager.default.fileExists(atPath: "file:\(folder.path)"))
        #expect(!FileManager.default.fileExists(atPath: "file:"))
    }

    @Test func aForeignTriggerOrADroppedTableStopsEveryCommand() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "CREATE TRIGGER divert BEFORE INSERT ON states BEGIN SELECT RAISE(IGNORE); END;")
        let document = folder.file("doc.json")
        try Data(
            #"{"schema":1,"kind":"export","database_schema_version":1,"states":[{"path":"new","type_name":"T","version":1,"encoding":"json","value":{}}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: document))
        let before = FileSnapshot(db)
        Self.expectOneLine(try CLI.run(["import", "--db", db, document]), 3, containing: "trigger divert on states")
        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 1, "\(check)")
        #expect(check.stdout.contains("trigger divert"), "\(check)")
        #expect(FileSnapshot(db) == before)

        let second = TemporaryFolder()
        let dropped = try Self.demoDatabase(in: second)
        try rawSQL(dropped, "DROP TABLE hierarchy")
        Self.expectOneLine(
            try CLI.run(["inspect", "--db", dropped, "--hierarchy"]), 3, containing: "the table hierarchy is missing")
    }

    @Test func aResetHeaderIsReportedAndRepairedByMigrate() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        try rawSQL(db, "PRAGMA user_version = 0")
        let check = try CLI.run(["check", "--db", db])
        #expect(check.status == 1, "\(check)")
        #expect(check.stdout.contains("user_version is 0"), "\(check)")
        #expect(try CLI.run(["migrate", "--db", db]).status == 0)
        #expect(try CLI.run(["check", "--db", db]).status == 0)
        #expect(try CLI.tool("sqlite3", [db, "PRAGMA user_version"]) == "\(StateStore.latestSchemaVersion)\n")
    }

    // MARK: Unclear errors

    @Test func aFileThatCanOnlyBeReadIsRead() throws {
        let folder = TemporaryFolder()
        let db = try Self.demoDatabase(in: folder)
        // Another user's readable file in a folder this user cannot write: as root, run as
        // `nobody`; otherwise take write permission away from the folder.
        let binary = folder.file("statectl")
        try FileManager.default.copyItem(atPath: CLI.executable, toPath: binary)
        #expect(chmod(folder.path, 0o755) == 0 && chmod(db, 0o644) == 0 && chmod(binary, 0o755) == 0)
        defer { chmod(folder.path, 0o700) }
        let asOther: String
        if geteuid() == 0 {
            // Without setpriv, or where nobody cannot run statectl, there is nothing to test as root.
            guard CLI.canRunAsNobody else { return }
            asOther = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "
        } else {
            #expect(chmod(folder.path, 0o555) == 0)
            asOther = ""
        }
        let before = FileSnapshot(db)
        let inspect = try Self.shell("\(asOther)'\(binary)' inspect --db '\(db)' 2>&1; echo \"exit $?\"")
        #expect(inspect.output.contains("tabs/compose"), "\(inspect.output)")
        #expect(inspect.output.hasSuffix("exit 0\n"), "\(inspect.output)")
        #expect(try Self.shell("\(asOther)'\(binary)' check --db '\(db)' >/dev/null 2>&1; echo $?").output == "0\n")
        #expect(FileSnapshot(db) == before)
    }

    @Test func aWideFolderIsReportedAndAWideFileOfOursTightened() throws {
        let folder = TemporaryFolder()
        let shared = folder.file("shared")
        #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o777) == 0)
        let db = shared + "/state.sqlite"
        let migrated = try CLI.run(["migrate", "--db", db])
        #expect(migrated.status == 0)
        #expect(
            migrated.stderr.hasPrefix("statectl: warning: the folder \(shared) is writable by other users"),
            "\(migrated)")
        #expect(chmod(shared, 0o755) == 0 && chmod(db, 0o644) == 0)
        #expect(try CLI.run(["migrate", "--db", db]).stderr.isEmpty)
        #expect(permissions(db) == 0o600)
    }
}
