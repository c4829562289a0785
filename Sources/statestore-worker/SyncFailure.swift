import Foundation
import StateStore
import StateStoreCrashVFS
import StateStoreCrypto
import StateStoreSQLite

/// `statestore-worker sync-fails FOLDER`: storage whose sync fails with an I/O error (through
/// the crash VFS, which then syncs nothing) under each operation that syncs before it returns.
/// A store's commits (`synchronous=normal`) do not sync, so `synchronize()`, an import and a
/// rekey must throw ``StateStoreError/notSynced(file:_:)`` after their commit, and what they
/// committed must be in the database when it is opened again. A schema repair commits with
/// `synchronous=full`, so its commit itself fails: it must throw a failure that may pass and
/// change nothing, and `openOrRecover` must not move the file aside for it. Prints one
/// `sync-fails OPERATION committed|left in place|WRONG: …` line each; exits 1 when one was wrong.
enum SyncFailure {
    struct Note: Codable, Sendable, Equatable { var text: String }

    static func run(folder: String) -> Never {
        guard statestore_crashvfs_register(1) == 0 else { fail("sync-fails: the crash VFS could not be registered") }
        var wrong = 0
        let operations = ["synchronize", "import", "rekey", "repair", "open-or-recover"]
        for operation in operations {
            let outcome: String
            do {
                outcome = try check(operation, in: folder + "/" + operation)
            } catch {
                outcome = "WRONG: \(error)"
            }
            print("sync-fails \(operation) \(outcome)")
            if !outcome.hasPrefix("committed") && !outcome.hasPrefix("left in place") { wrong += 1 }
        }
        exit(wrong == 0 ? 0 : 1)
    }

    /// Runs `operation` with every sync failing. A store's operations run beside another that
    /// holds the database open with a WAL already begun (as an application does), so that their
    /// commit appends to it (SQLite syncs the header of a WAL it begins) and only the sync after
    /// it fails.
    static func check(_ operation: String, in folder: String) throws -> String {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database = folder + "/state.sqlite"
        let key = try StateKey(bytes: [UInt8](repeating: 9, count: 32))
        let options = StateStore.Options(backgroundCheck: .off)
        try StateStore(path: database, options: options).save(Note(text: "before"), for: "app/note")
        // Opened before the crash VFS tracks the folder: its own calls go through untouched.
        var app: StateStore?
        switch operation {
        case "repair", "open-or-recover":
            // Version records erased outside StateStore, the tables intact: what a repair puts right.
            try execute(database, "PRAGMA user_version = 0; DROP TABLE schema_migrations")
        default:
            app = try StateStore(path: database, options: options)
            try app!.save(Note(text: "open"), for: "app/open")
        }
        let document: StateExport?
        if operation == "import" {
            let source = try StateStore.inMemory()
            try source.save(Note(text: "imported"), for: "imported/note")
            document = try StateExport(store: source)
        } else {
            document = nil
        }

        statestore_crashvfs_begin(folder, 1, 0, STATESTORE_CRASH_KEEP_ALL)
        statestore_crashvfs_fail_syncs(1)
        var thrown: (any Error)?
        var recovery: StateStore.Recovery?
        do {
            switch operation {
            case "synchronize":
                let store = try StateStore(path: database, options: options)
                try store.save(Note(text: "after"), for: "app/note")
                try store.synchronize()
            case "import":
                try StateStore(path: database, options: options).importStates(document!)
            case "rekey":
                try StateStore.rekey(at: database, from: nil, to: StateKeyring(key))
            case "repair":
                try StateStore.repairSchemaVersion(at: database)
            default:
                recovery = try StateStore.openOrRecover(path: database, options: options).recovery
            }
        } catch {
            thrown = error
        }
        statestore_crashvfs_end()
        withExtendedLifetime(app) {}
        app = nil

        let movedAside = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".broken-") }
        if operation == "repair" || operation == "open-or-recover" {
            // A failure that may pass says nothing of the file: thrown, nothing written or moved,
            // and the repair succeeds once the storage syncs again.
            guard let error = thrown as? StateStoreError, error.isTransient, recovery == nil, movedAside.isEmpty else {
                return
                    "WRONG: recovery \(String(describing: recovery)), thrown \(String(describing: thrown)), moved aside \(movedAside)"
            }
            var salvaging = StateStore.Options(readOnly: true)
            salvaging.salvage = true
            let before = try StateStore(path: database, options: salvaging).schemaRecords()
            guard !before.isIntact else { return "WRONG: the failed repair changed the records" }
            let (store, again) = try StateStore.openOrRecover(path: database, options: options)
            let note = try store.restore(Note.self, for: "app/note")
            return again == nil && note == Note(text: "before")
                ? "left in place (\(error.sqliteFailure?.extendedResultCode ?? .ok))"
                : "WRONG: \(String(describing: again)), the note is \(String(describing: note))"
        }
        guard case .notSynced(let file, let failure)? = thrown as? StateStoreError else {
            return "WRONG: it threw \(String(describing: thrown)), not notSynced"
        }
        guard file.hasSuffix("/state.sqlite"), failure.extendedResultCode == .ioErrorFsync else {
            return "WRONG: notSynced(\(file), \(failure))"
        }
        switch operation {
        case "synchronize":
            let note = try StateStore(path: database, options: options).restore(Note.self, for: "app/note")
            return note == Note(text: "after") ? "committed" : "WRONG: the note is \(String(describing: note))"
        case "import":
            let note = try StateStore(path: database, options: options).restore(Note.self, for: "imported/note")
            return note == Note(text: "imported") ? "committed" : "WRONG: the import is \(String(describing: note))"
        case "rekey":
            // The row itself, read without a key: a store given the key would record it on its own.
            let keyID = try StateStore(path: database, options: .init(readOnly: true)).state(at: "app/note")?.keyID
            return keyID == key.id ? "committed" : "WRONG: the note is sealed with \(String(describing: keyID))"
        default:
            return "WRONG: no check for \(operation)"
        }
    }

    /// Runs `sql` on the database at `path` outside StateStore.
    static func execute(_ path: String, _ sql: String) throws {
        var handle: OpaquePointer?
        defer { sqlite3_close_v2(handle) }
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK
        else {
            throw NSError(
                domain: "sync-fails", code: 1,
                userInfo: [NSLocalizedDescriptionKey: "\(sql): \(String(cString: sqlite3_errmsg(handle)))"])
        }
    }
}
