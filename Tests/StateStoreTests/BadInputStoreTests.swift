import Foundation
import StateStoreSQLite
import Testing

@testable import StateStore

/// The store at its edges: paths that are not files, other programs' databases, schemas changed
/// by hand, rows written by other tools. Each case gets a typed error and leaves every byte.
@Suite(.hangGuard(minutes: 10)) struct BadInputStoreTests {
    // MARK: Paths

    @Test(arguments: ["", ":memory:", "file:state.sqlite", "FILE:/tmp/x.sqlite?mode=memory", "a\u{0}b.sqlite"])
    func pathsThatAreNotPlainFilesAreRefused(_ path: String) throws {
        #expect {
            try StateStore(path: path)
        } throws: { error in
            guard case StateStoreError.invalidDatabasePath(let refused, _) = error else { return false }
            return refused == path
        }
        // Nothing was created: no stray "file:" folder, no database.
        #expect(!FileManager.default.fileExists(atPath: "file:"))
        #expect(!FileManager.default.fileExists(atPath: "FILE:"))
        #expect(!FileManager.default.fileExists(atPath: "file:state.sqlite"))
        #expect(try StateStore.inMemory().schemaVersion == StateStore.latestSchemaVersion)
    }

    @Test func aFIFOADirectoryAndADeviceAreNotOpened() throws {
        let folder = TemporaryFolder()
        let fifo = folder.file("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, kind) in [
            (fifo, "a FIFO (named pipe)"), (folder.path, "a directory"), ("/dev/null", "a character device"),
        ] {
            for readOnly in [false, true] {
                #expect(throws: StateStoreError.notARegularFile(file: path, kind: kind)) {
                    try StateStore(path: path, options: .init(readOnly: readOnly))
                }
            }
        }
    }

    // MARK: Other programs' databases

    /// Another program has its WAL-mode database open, its pages still in the -wal (where
    /// the file's own header says nothing yet): opening it is refused by the real connection,
    /// which reads through the WAL, and neither file changes.
    @Test func anotherProgramsLiveWALDatabaseIsRefusedAndLeftAsItIs() throws {
        let folder = TemporaryFolder()
        let path = folder.file("live.sqlite")
        var handle: OpaquePointer?
        beforeRawSQLite()
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        for sql in [
            "PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0",
            "CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT)", "INSERT INTO accounts(name) VALUES ('ada')",
        ] {
            #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK)
        }
        let wal = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(wal > 0)
        let before = (FileSnapshot(path), FileSnapshot(path + "-wal"))
        for readOnly in [false, true] {
            #expect {
                try StateStore(path: path, options: .init(readOnly: readOnly))
            } throws: { error in
                guard case StateStoreError.notAStateStore(_, let reason) = error else { return false }
                return reason.contains("accounts")
            }
        }
        #expect(FileSnapshot(path) == before.0 && FileSnapshot(path + "-wal") == before.1)
        var count: Int32 = 0
        #expect(
            sqlite3_exec(
                handle, "SELECT count(*) FROM accounts",
                { context, _, values, _ in
                    context!.assumingMemoryBound(to: Int32.self).pointee = Int32(atoi(values![0]!))
                    return 0
                }, &count, nil) == SQLITE_OK)
        #expect(count == 1)
    }

    @Test func anotherProgramsDatabaseIsNeverAltered() throws {
        let folder = TemporaryFolder()
        let path = folder.file("other.sqlite")
        try CLI.tool(
            "sqlite3",
            [
                path,
                "CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts(name) VALUES ('ada');",
            ])
        let link = folder.file("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let before = FileSnapshot(path)
        for candidate in [path, link] {
            for readOnly in [false, true] {
                #expect {
                    try StateStore(path: candidate, options: .init(readOnly: readOnly))
                } throws: { error in
                    guard case StateStoreError.notAStateStore(let file, let reason) = error else { return false }
                    return file == candidate && reason.contains("accounts")
                }
            }
            #expect(throws: StateStoreError.self) { try StateStore.pendingMigrations(at: candidate) }
        }
        #expect(FileSnapshot(path) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        // Marked by another application: refused even when it holds no tables.
        let marked = folder.file("marked.sqlite")
        try CLI.tool("sqlite3", [marked, "PRAGMA application_id = 42"])
        #expect { try StateStore(path: marked) } throws: { error in
            if case StateStoreError.notAStateStore(_, let reason) = error { return reason.contains("0x0000002A") }
            return false
        }
    }

    @Test func ourDatabasesCarryTheApplicationIDAndOlderOnesAreRecognised() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        try StateStore(path: path).save(Draft(to: [], subject: "s", body: ""), for: "root")
        #expect(try CLI.tool("sqlite3", [path, "PRAGMA application_id"]) == "\(StateStore.applicationID)\n")
        // A schema-2 database from before the mark, as the migrator left it, opens, migrates and gets it.
        let old = folder.file("old.sqlite")
        #expect(FileManager.default.createFile(atPath: old, contents: nil))
        for migration in EmbeddedMigrations.all where migration.version <= 2 { try rawSQL(old, migration.sql) }
        let bytes = Data(#"{"attachments":{},"body":"","subject":"s","to":[]}"#.utf8)
        try rawSQL(
            old,
            """
            CREATE TABLE schema_migrations(version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;
            INSERT INTO schema_migrations VALUES (1, 'initial', 0), (2, 'states_rowid', 0);
            PRAGMA user_version = 2;
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES ('root', 'Draft', 1, 1, 'json', \(StoredState.checksum(of: bytes)), 0, CAST('\(String(decoding: bytes, as: UTF8.self))' AS BLOB));
            """)
        #expect(try CLI.tool("sqlite3", [old, "PRAGMA application_id"]) == "0\n")
        let store = try StateStore(path: old)
        #expect(try store.restore(Draft.self, for: "root")?.subject == "s")
        #expect(try CLI.tool("sqlite3", [old, "PRAGMA application_id"]) == "\(StateStore.applicationID)\n")
    }

    // MARK: Schemas changed by hand

    @Test func aForeignTriggerIsRefusedBeforeAnyWrite() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        try StateStore(path: path).save(Draft(to: [], subject: "kept", body: ""), for: "root")
        try rawSQL(path, "CREATE TRIGGER divert BEFORE INSERT ON states BEGIN SELECT RAISE(IGNORE); END;")
        let before = FileSnapshot(path)
        for readOnly in [false, true] {
            #expect {
                try StateStore(path: path, options: .init(readOnly: readOnly))
            } throws: { error in
                guard case StateStoreError.schemaMismatch(_, let detail) = error else { return false }
                return detail.contains("trigger divert on states")
            }
        }
        #expect(FileSnapshot(path) == before)
    }

    /// A refused open removes no `-wal` or `-shm`, not even ones that were not there when it
    /// began: by the time it is refused, another process may have made them and be committing
    /// into them (an app launching, or migrating, while `statectl inspect` waits for it), and a
    /// removed `-wal` takes its synced commits with it. Here they are the ones SQLite made
    /// for the refused open itself, which a removal made without SQLite's locks cannot tell
    /// from another process's.
    @Test func aRefusedOpenRemovesNoWALOrIndexBesideTheFile() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        try StateStore(path: path).save(Draft(to: [], subject: "kept", body: ""), for: "root")
        try rawSQL(path, "CREATE TRIGGER divert BEFORE INSERT ON states BEGIN SELECT RAISE(IGNORE); END;")
        for readOnly in [false, true] {
            for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
            #expect(throws: StateStoreError.self) { try StateStore(path: path, options: .init(readOnly: readOnly)) }
            #expect(FileManager.default.fileExists(atPath: path + "-wal"), "read-only \(readOnly)")
            #expect(FileManager.default.fileExists(atPath: path + "-shm"), "read-only \(readOnly)")
        }
    }

    /// A file cut short (a partial copy) is refused from its header, before SQLite opens it:
    /// nothing appears beside it.
    @Test(arguments: [100, 4096, 8192])
    func aFileCutShortIsRefusedBeforeSQLiteOpensIt(keeping bytes: Int) throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite"), cut = folder.file("cut.sqlite")
        do {
            let store = try StateStore(path: path)
            for index in 0..<20 {
                try store.save(
                    Draft(to: [], subject: String(repeating: "x", count: 2000), body: "\(index)"),
                    for: RestorationPath(validating: "root/\(index)"))
            }
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(whole.count > bytes)
        try whole.prefix(bytes).write(to: URL(fileURLWithPath: cut))
        for readOnly in [false, true] {
            #expect {
                try StateStore(path: cut, options: .init(readOnly: readOnly))
            } throws: { error in
                guard case StateStoreError.corrupt(_, let failure) = error else { return false }
                return failure.message.hasPrefix("the file is \(bytes) bytes, \((bytes + 4095) / 4096) of the ")
            }
            #expect(!FileManager.default.fileExists(atPath: cut + "-wal"))
            #expect(!FileManager.default.fileExists(atPath: cut + "-shm"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: cut)) == whole.prefix(bytes))
    }

    @Test(arguments: [
        "DROP TABLE hierarchy", "DROP TABLE metadata", "ALTER TABLE states DROP COLUMN updated_at",
        "DROP INDEX quarantine_by_path",
    ])
    func aChangedTableIsRefusedAtOpen(_ edit: String) throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        try StateStore(path: path).save(Draft(to: [], subject: "kept", body: ""), for: "root")
        try rawSQL(path, edit)
        #expect(throws: StateStoreError.self) { try StateStore(path: path) }
        do {
            _ = try StateStore(path: path)
        } catch {
            guard case .schemaMismatch = error else {
                Issue.record("\(error)")
                return
            }
        }
    }

    @Test func aResetSchemaVersionIsRepairedOrRefusedNeverReapplied() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        try StateStore(path: path).save(Draft(to: [], subject: "kept", body: ""), for: "root")
        // The header alone reset: schema_migrations still knows; a read-write open repairs it.
        try rawSQL(path, "PRAGMA user_version = 0")
        #expect(try StateStore(path: path, options: .init(readOnly: true)).check().headerSchemaVersion == 0)
        #expect(try StateStore(path: path, options: .init(readOnly: true)).check().isHealthy == false)
        _ = try StateStore(path: path)
        let health = try StateStore(path: path, options: .init(readOnly: true)).check()
        #expect(health.headerSchemaVersion == StateStore.latestSchemaVersion)
        #expect(health.isHealthy)
        // Both records gone: refused with what happened, not "table states already exists".
        try rawSQL(path, "PRAGMA user_version = 0; DROP TABLE schema_migrations")
        let before = FileSnapshot(path)
        #expect { try StateStore(path: path) } throws: { error in
            if case StateStoreError.schemaMismatch(_, let detail) = error {
                return detail.contains("records no schema version")
            }
            return false
        }
        #expect(FileSnapshot(path) == before)
        // openOrRecover puts the records right in place rather than set the states aside; so it
        // does when they were set back to an older version.
        let (repaired, recovery) = try StateStore.openOrRecover(path: path)
        #expect(recovery == nil)
        #expect(try repaired.restore(Draft.self, for: "root")?.subject == "kept")
        try rawSQL(path, "PRAGMA user_version = 3; DELETE FROM schema_migrations WHERE version > 3")
        #expect { try StateStore(path: path) } throws: { error in
            if case StateStoreError.schemaMismatch(_, let detail) = error {
                return detail.contains("its schema version records say 3")
            }
            return false
        }
        let (again, none) = try StateStore.openOrRecover(path: path)
        #expect(none == nil)
        #expect(try again.restore(Draft.self, for: "root")?.subject == "kept")
        #expect(try again.check().isHealthy)
        // A version table made again in another shape holds only records: it is made afresh,
        // and the states stay.
        try rawSQL(
            path,
            "PRAGMA user_version = 0; DROP TABLE schema_migrations; CREATE TABLE schema_migrations(version INTEGER, name TEXT, applied_at INTEGER)"
        )
        let (remade, notMoved) = try StateStore.openOrRecover(path: path)
        #expect(notMoved == nil)
        #expect(try remade.restore(Draft.self, for: "root")?.subject == "kept")
        #expect(try remade.schemaRecords().isIntact)
        // Records gone beside a change the repair does not make (a trigger): openOrRecover
        // moves the file aside rather than fail the launch, and the fresh one, without the
        // trigger, holds the states; not while another store of this process has it open.
        try rawSQL(
            path, "PRAGMA user_version = 0; CREATE TRIGGER t AFTER INSERT ON schema_migrations BEGIN SELECT 1; END")
        #expect { try StateStore.openOrRecover(path: path) } throws: { error in
            guard case StateStoreError.busy(let failure) = error else { return false }
            return failure.message.contains("is open in this process")
        }
        _ = consume repaired
        _ = consume again
        _ = consume remade
        let (fresh, moved) = try StateStore.openOrRecover(path: path)
        #expect(moved != nil)
        #expect(moved?.salvage.states == 1)
        #expect(try fresh.restore(Draft.self, for: "root")?.subject == "kept")
        #expect(try fresh.check().isHealthy)
    }

    // MARK: Rows written by other tools

    @Test func anOversizeRowIsRefusedUnreadAndQuarantinedWhole() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        let store = try StateStore(path: path)
        try store.save(Draft(to: [], subject: "small", body: ""), for: "root/small")
        let size = 48 << 20
        try rawSQL(
            path,
            """
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES ('root/huge', 'T', 1, 1, 'binary', 0, 0, randomblob(\(size)))
            """)
        let digest = try CLI.tool(
            "sqlite3",
            [
                path,
                "SELECT length(bytes), hex(substr(bytes, 1, 32)), hex(substr(bytes, \(size - 31), 32)) FROM states WHERE path = 'root/huge'",
            ])
        #expect(throws: StateStoreError.stateTooLarge(path: "root/huge", byteCount: size, limit: 1 << 20)) {
            try store.state(at: "root/huge")
        }
        #expect(throws: StateStoreError.stateTooLarge(path: "root/huge", byteCount: size, limit: 1 << 20)) {
            try store.states(maximumSize: 1 << 20)
        }
        #expect(try store.quarantine("root/huge", reason: "too large"))
        #expect(try store.state(at: "root/huge") == nil)
        let moved = try CLI.tool(
            "sqlite3",
            [
                path,
                "SELECT length(bytes), hex(substr(bytes, 1, 32)), hex(substr(bytes, \(size - 31), 32)) FROM quarantine WHERE path = 'root/huge'",
            ])
        #expect(moved == digest)
        #expect(try store.restore(Draft.self, for: "root/small")?.subject == "small")
    }

    @Test func rowsWithInvalidPathsAreListedCheckedAndRemovedOnlyAsSuch() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        let store = try StateStore(path: path)
        try store.save(Draft(to: [], subject: "a", body: ""), for: "root/a")
        try rawSQL(
            path,
            """
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes) VALUES
              ('root//empty', 'T', 1, 1, 'json', 0, 0, x'7b7d'),
              ('root/a' || char(0) || 'hidden', 'T', 1, 1, 'json', 0, 0, x'7b7d'),
              (CAST(x'726f6f742fff' AS TEXT), 'T', 1, 1, 'json', 0, 0, x'7b7d')
            """)
        // The row with a NUL is not shown as a second "root/a".
        #expect(try store.entries().map(\.path) == ["root/a"])
        let invalid = try store.invalidRows()
        #expect(invalid.count == 3)
        #expect(invalid.map(\.path).contains("root/a\u{0}hidden"))
        #expect(try store.check().invalidRows == invalid)
        #expect(try !store.check().isHealthy)
        // A prefix prune removes only what it can list.
        let removed = try store.write { (transaction) throws(StateStoreError) in
            try transaction.removeEntries(under: "root")
        }
        #expect(removed.map(\.path) == ["root/a"])
        #expect(try CLI.tool("sqlite3", [path, "SELECT count(*) FROM states"]) == "3\n")
        #expect(
            try store.write { (transaction) throws(StateStoreError) in try transaction.removeInvalidRows() } == invalid)
        #expect(try CLI.tool("sqlite3", [path, "SELECT count(*) FROM states"]) == "0\n")
    }

    @Test func generationsAndVersionsFromOutsideAreBounded() throws {
        let store = try StateStore.inMemory()
        for (generation, version) in [
            (Int64.max, 1), (0, 1), (StoredState.maximumGeneration + 1, 1), (1, -1), (1, Int(Int32.max) + 1),
        ] {
            let state = StoredState(
                path: "root", typeName: "T", version: version, generation: generation, encoding: .json,
                updatedAt: Date(), bytes: Data("{}".utf8))
            #expect(throws: StateStoreError.self) {
                try store.write { (transaction) throws(StateStoreError) in try transaction.insert(verbatim: state) }
            }
        }
        #expect(try store.entries().isEmpty)
    }

    @Test func checkReportsAGenerationThatCanNoLongerRise() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        try StateStore(path: path).save(Draft(to: [], subject: "a", body: ""), for: "root")
        try rawSQL(path, "UPDATE states SET generation = 9223372036854775807")
        let health = try StateStore(path: path, options: .init(readOnly: true)).check()
        #expect(health.exhaustedGenerations == ["root"])
        #expect(!health.isHealthy)
    }

    // MARK: Permissions

    @Test func aWideFileOfOursIsTightenedAndAWideFolderReported() throws {
        let folder = TemporaryFolder()
        let shared = folder.file("shared")
        #expect(mkdir(shared, 0o777) == 0)
        #expect(chmod(shared, 0o777) == 0)
        let path = shared + "/state.sqlite"
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        let store = try StateStore(path: path)
        #expect(permissions(path) == 0o600)
        #expect(store.warnings.count == 1)
        #expect(store.warnings.first?.contains("writable by other users") == true)
        #expect(permissions(shared) == 0o777)
    }
}

/// Errors carry typed result codes and, for the file system, `errno`.
@Suite struct ErrorDetailTests {
    @Test func resultCodesHaveNamesAndPrimaryCodes() {
        #expect(SQLiteResultCode.busySnapshot.primaryResultCode == .busy)
        #expect(SQLiteResultCode.constraintUnique.primaryResultCode == .constraint)
        #expect(SQLiteResultCode.busy.description == "database is locked (5)")
    }

    @Test func aFolderThatCannotBeMadeIsAFileSystemFailureWithErrno() throws {
        let folder = TemporaryFolder()
        let blocker = folder.file("file")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data()))
        #expect(
            throws: StateStoreError.fileSystem(
                FileSystemFailure(operation: .stat, path: blocker + "/app/state.sqlite", errno: ENOTDIR))
        ) {
            try StateStore(path: blocker + "/app/state.sqlite")
        }
        // A folder that cannot be created for another reason: the operation and errno say which.
        let locked = folder.file("locked")
        #expect(mkdir(locked, 0o500) == 0)
        if geteuid() != 0 {
            #expect(
                throws: StateStoreError.fileSystem(
                    FileSystemFailure(operation: .createFolder, path: locked + "/app", errno: EACCES))
            ) {
                try StateStore(path: locked + "/app/state.sqlite")
            }
        }
    }

    @Test func damageFoundAtOpenCarriesTheCheckAsItsSQL() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        let store = try StateStore(path: path)
        for index in 0..<200 {
            try store.save(
                Draft(to: [], subject: String(repeating: "x", count: 500), body: "\(index)"),
                for: RestorationPath(validating: "root/\(index)"))
        }
        _ = consume store
        // Overwrite a page in the middle of the table's b-tree.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 8 * 4096)
        handle.write(Data(repeating: 0xA5, count: 4096))
        try handle.close()
        #expect { try StateStore(path: path, options: .init(openCheck: .quick)) } throws: { error in
            guard case StateStoreError.corrupt(_, let failure) = error else { return false }
            return failure.resultCode == .corrupt && failure.sql != nil
        }
    }
}
