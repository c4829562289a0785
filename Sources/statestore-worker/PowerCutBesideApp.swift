import Foundation
import StateStore
import StateStoreCrashVFS
import StateStoreCrypto

/// Maintenance while an application holds the database open, then a power cut: `importStates`
/// and `StateStore.rekey(at:from:to:)` must be on storage when they return. The application's
/// open connection keeps the closing maintenance connection from checkpointing (only the last
/// one does), so nothing syncs them but themselves. Each operation runs in a folder of its own
/// under FOLDER, through the crash VFS with every unsynced write dropped at the cut; prints one
/// `beside-app OPERATION kept|LOST` line each and exits 1 when one was lost.
enum PowerCutBesideApp {
    static func run(folder: String) -> Never {
        guard statestore_crashvfs_register(1) == 0 else { fail("beside-app: the crash VFS could not be registered") }
        var lost = 0
        for operation in ["import", "rekey"] {
            do {
                let kept = try cut(during: operation, in: folder + "/" + operation)
                print("beside-app \(operation) \(kept ? "kept" : "LOST")")
                if !kept { lost += 1 }
            } catch {
                fail("beside-app \(operation): \(error)")
            }
        }
        exit(lost == 0 ? 0 : 1)
    }

    struct Note: Codable, Sendable, Equatable { var text: String }

    /// Runs `operation` beside an open store, cuts the power, and says whether what it wrote is there.
    static func cut(during operation: String, in folder: String) throws -> Bool {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database = folder + "/state.sqlite"
        let key = try StateKey(bytes: [UInt8](repeating: 7, count: 32))
        // The document to import, from a store outside the folder the cut is in.
        let source = folder + "-source.sqlite"
        for suffix in ["", "-wal", "-shm"] { unlink(source + suffix) }
        let document: StateExport
        do {
            let store = try StateStore(path: source, options: .init(backgroundCheck: .off))
            try store.save(Note(text: "imported"), for: "imported/note")
            document = try StateExport(store: store)
        }
        statestore_crashvfs_begin(folder, 1, 0, STATESTORE_CRASH_DROP_ALL)
        do {
            let app = try StateStore(path: database, options: .init(backgroundCheck: .off))
            try app.save(Note(text: "before"), for: "app/note")
            try app.synchronize()
            if operation == "import" {
                try StateStore(path: database, options: .init(backgroundCheck: .off)).importStates(document)
            } else {
                try StateStore.rekey(at: database, from: nil, to: StateKeyring(key))
            }
            statestore_crashvfs_crash_now()
        }
        statestore_crashvfs_end()
        if operation == "import" {
            return try StateStore(path: database).restore(Note.self, for: "imported/note") == Note(text: "imported")
        }
        // The row itself, read without a key: a store given the key would record it as the
        // database's on its own.
        return try StateStore(path: database, options: .init(readOnly: true)).state(at: "app/note")?.keyID == key.id
    }
}
