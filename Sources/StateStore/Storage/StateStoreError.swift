import Glibc

/// The SQLite side of a failure: the result code, SQLite's own message and the SQL that failed.
///
/// See <https://www.sqlite.org/rescode.html> for the codes.
public struct SQLiteFailure: Sendable, Hashable, CustomStringConvertible {
    /// The primary result code (``SQLiteResultCode/busy``, ``SQLiteResultCode/corrupt``, ...).
    public var resultCode: SQLiteResultCode { extendedResultCode.primaryResultCode }
    /// The extended result code (``SQLiteResultCode/ioErrorWrite``, ``SQLiteResultCode/busySnapshot``, ...).
    public var extendedResultCode: SQLiteResultCode
    /// SQLite's message for the failure (`sqlite3_errmsg`), or what the check found.
    public var message: String
    /// The statement that failed, when there was one.
    public var sql: String?

    /// A failure with the given code and message; `sql` is `nil` when no statement was involved.
    public init(extendedResultCode: SQLiteResultCode, message: String, sql: String? = nil) {
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(extendedResultCode): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}

/// Every failure the store reports. Each case says what went wrong and, in its
/// ``description``, what to do about it. None of them leaves the user's data altered.
public enum StateStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite could not open the file (`SQLITE_CANTOPEN`: permissions, a missing folder).
    case cannotOpen(file: String, SQLiteFailure)
    /// The file system refused what the store needed before SQLite could open the file:
    /// creating its folder or the file, or moving a broken database aside.
    case fileSystem(FileSystemFailure)
    /// The file exists but is not an SQLite database (`SQLITE_NOTADB`). It was not modified.
    case notADatabase(file: String, SQLiteFailure)
    /// The database is damaged (`SQLITE_CORRUPT`, or what `PRAGMA quick_check` found, in the
    /// failure's message). It was not modified.
    case corrupt(file: String, SQLiteFailure)
    /// The database was migrated by a newer build than this one. It was not modified.
    case schemaTooNew(file: String, found: Int, supported: Int)
    /// The `-wal` file is missing while the `-shm` index says it held `frames` committed
    /// pages not yet in the database file. Nothing was opened or changed.
    case walMissing(file: String, frames: Int)
    /// A rollback journal, `journal`, lies beside a database that uses a WAL and has none of its
    /// own once created: it came from another database, and SQLite would play it back into this
    /// file. Nothing was opened or changed.
    case strayJournal(file: String, journal: String)
    /// A read-only open met a database whose schema this build would first have to migrate.
    case schemaTooOld(file: String, found: Int, required: Int)
    /// A write was attempted on a database opened read-only, or on a read-only file.
    case readOnly(file: String, SQLiteFailure?)
    /// The disk (or the database's `max_page_count`) is full. The write was rolled back; earlier states are intact.
    case diskFull(SQLiteFailure)
    /// Another connection held the database locked for longer than the busy timeout.
    case busy(SQLiteFailure)
    /// A stored state could not be decoded as the requested type.
    case decodingFailed(path: RestorationPath, reason: String)
    /// A state could not be encoded.
    case encodingFailed(path: RestorationPath, reason: String)
    /// A stored state's bytes no longer match the checksum written with them.
    case checksumMismatch(path: RestorationPath)
    /// An encoded state is larger than ``StateStore/Options/maximumStateSize``.
    case stateTooLarge(path: RestorationPath, byteCount: Int, limit: Int)
    /// A restoration path is empty, too long, or has a component SQLite paths cannot hold.
    case invalidPath(String, reason: String)
    /// Any other SQLite failure.
    case sqlite(SQLiteFailure)
    /// The path names something that is not a database file: empty, `":memory:"` (use
    /// ``StateStore/inMemory(options:)``), an SQLite URI (`file:...`), or a name with a NUL byte.
    case invalidDatabasePath(String, reason: String)
    /// The path exists but is not a regular file (a directory, a FIFO, a device, a socket).
    /// Nothing was opened: reading a FIFO or a device could block or never end.
    case notARegularFile(file: String, kind: String)
    /// The name the store opened its database file by no longer names that file: it was moved,
    /// replaced or removed after the open. The store keeps using the file it opened; nothing
    /// was changed. (Found by the integrity check after open, which then reports nothing else.)
    case fileReplaced(file: String)
    /// The file is an SQLite database that belongs to another program: it is not marked with
    /// StateStore's `PRAGMA application_id` and holds tables of its own. It was not modified.
    case notAStateStore(file: String, reason: String)
    /// The database is marked as StateStore's but its tables, columns or triggers are not the ones
    /// this schema version defines (an outside edit). Nothing was written.
    case schemaMismatch(file: String, detail: String)
    /// A state's stored fields are outside what the store can keep using (a generation that can
    /// no longer rise, a negative version, a time out of range).
    case invalidState(path: RestorationPath, reason: String)
    /// The state at `path` is sealed with the key `found`, and this store was given another key
    /// (`configured`) or none (`nil`). The row is left exactly as it is — never quarantined,
    /// never saved over — so the app started again with the right key finds it.
    case keyMismatch(path: RestorationPath, found: String, configured: String?)
    /// The state at `path` is sealed with the configured key `keyID`, but its bytes do not
    /// authenticate: they were altered, or copied from another row, outside StateStore.
    case sealedStateUnopenable(path: RestorationPath, keyID: String)
    /// The database records that its states are sealed with key `keyID`, and this store was not
    /// given that key (no key at all, or a keyring without it): it writes nothing into the
    /// database. Nothing was written.
    case keyRequired(file: String, keyID: String)
    /// A sealer's key id is not 1 to 64 printable ASCII characters other than `,`.
    case invalidKeyID(String)
    /// An option of ``StateStore/Options`` is out of its range (`name` is its name, `reason`
    /// says the range); nothing was opened.
    case invalidOption(name: String, reason: String)
    /// What was written is committed to the database at `file`, but syncing it to storage
    /// failed (an I/O error from `fdatasync`): it survives the process, and may not survive a
    /// power cut. Thrown by ``StateStore/synchronize()`` and by
    /// the operations that sync before they return (an import, a rekey) after their change
    /// was committed: do not make the change again.
    case notSynced(file: String, SQLiteFailure)

    /// Whether the same operation may succeed later, unchanged: a full disk, a lock held too
    /// long, an I/O error, memory. Other errors (a state too large, an invalid path, a
    /// constraint) fail the same way every time. Not ``notSynced(file:_:)``, whose change was
    /// made: made again, it would be made twice.
    public var isTransient: Bool {
        switch self {
        case .diskFull, .busy, .readOnly, .cannotOpen:
            return true
        case .fileSystem(let failure):
            return [ENOSPC, EDQUOT, EIO, EAGAIN, EINTR, EMFILE, ENFILE, EACCES, EPERM, EROFS].contains(failure.errno)
        case .sqlite(let failure):
            return [.ioError, .noMemory, .interrupt, .protocol].contains(failure.resultCode)
        default:
            return false
        }
    }

    /// The SQLite details behind the error, when SQLite reported it.
    public var sqliteFailure: SQLiteFailure? {
        switch self {
        case .cannotOpen(_, let failure), .diskFull(let failure), .busy(let failure), .sqlite(let failure),
            .notADatabase(_, let failure), .corrupt(_, let failure), .notSynced(_, let failure):
            failure
        case .readOnly(_, let failure):
            failure
        default:
            nil
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let file, let failure):
            "Cannot open the state database at \(file): \(failure.message). Check that the folder exists and is writable by this user."
        case .fileSystem(let failure):
            "Cannot open the state database: \(failure). Check that the folder exists and is writable by this user."
        case .notADatabase(let file, _):
            "\(file) is not an SQLite database. It was left untouched; move it aside (or point --db elsewhere) to start a new store."
        case .corrupt(let file, let failure):
            // `.quick` for what `quick_check` found; else `.full`, which finds all of that and
            // what only `integrity_check` finds (a statement that met an index entry naming the
            // wrong row fails as corrupt too).
            "The state database at \(file) is damaged (\(failure.message)). It was left untouched; restore a backup, or use StateStore.openOrRecover with openCheck: \(failure.sql?.contains("quick_check") == true ? ".quick" : ".full") to move it aside and start a fresh one holding every state that can still be read (`statectl recover` does the same)."
        case .schemaTooNew(let file, let found, let supported):
            "The state database at \(file) has schema version \(found), newer than the \(supported) this build knows. It was left untouched; run a newer build of the app or statectl."
        case .walMissing(let file, let frames):
            "The write-ahead log \(file)-wal is missing, but \(file)-shm shows \(frames) committed pages that were only in it. Nothing was changed: put the -wal file back beside the database, or use StateStore.openOrRecover (or `statectl recover`) to set the files aside and start a fresh database holding what the file itself still has."
        case .strayJournal(let file, let journal):
            "Beside the state database at \(file) lies a rollback journal, \(journal), that is not its own: the database uses a write-ahead log, so the journal came from another database (a file copied or renamed beside it), and SQLite would play it back into this one. Nothing was opened or changed. Move \(journal) out of the folder (keep it with the database it belongs to), then run again."
        case .schemaTooOld(let file, let found, let required):
            "The state database at \(file) has schema version \(found) and this build reads version \(required). Run `statectl migrate --db \(file)` first."
        case .readOnly(let file, _):
            "The state database at \(file) is read-only here. Open it without the read-only option, or fix the file's permissions."
        case .diskFull(let failure):
            "The disk holding the state database is full (\(failure.message)). The write was rolled back and earlier states are intact; free some space and save again."
        case .busy(let failure):
            "The state database stayed locked by another connection longer than the busy timeout (\(failure.message)). Retry, or raise StateStore.Options.busyTimeout."
        case .decodingFailed(let path, let reason):
            "The state at \(path) could not be decoded: \(reason). Quarantine it (StateStore.quarantine) or migrate the type."
        case .encodingFailed(let path, let reason):
            "The state for \(path) could not be encoded: \(reason)."
        case .checksumMismatch(let path):
            "The state at \(path) no longer matches its checksum; it was changed outside StateStore. Quarantine it; `statectl inspect --quarantine` shows it."
        case .stateTooLarge(let path, let byteCount, let limit):
            "The state for \(path) encodes to \(byteCount) bytes, over the \(limit)-byte limit. Keep large data in files or caches and store a reference, or raise StateStore.Options.maximumStateSize."
        case .invalidPath(let path, let reason):
            "\"\(path)\" is not a valid restoration path: \(reason)."
        case .sqlite(let failure):
            failure.description
        case .invalidDatabasePath(let path, let reason):
            "\(path.debugDescription) is not a database file path: \(reason)."
        case .notARegularFile(let file, let kind):
            "\(file) is \(kind), not a database file. Nothing was opened or changed; point --db (or the path) at a regular file, or at a path that does not exist yet."
        case .fileReplaced(let file):
            "\(file) is no longer the state database this store opened: it was moved, replaced or removed after the open. Nothing was changed; the store keeps writing to the file it opened, which the next launch will not find at this path unless it is put back."
        case .notAStateStore(let file, let reason):
            "\(file) is an SQLite database of another program (\(reason)). It was left untouched; point --db (or the path) at a StateStore database or at a new file."
        case .schemaMismatch(let file, let detail):
            "The state database at \(file) does not have the schema StateStore wrote (\(detail)); it was changed outside StateStore. Nothing was written; restore a backup, or use StateStore.openOrRecover (or `statectl recover`) to move it aside and start a fresh one holding every state that can still be read."
        case .invalidState(let path, let reason):
            "The state at \(path) cannot be used: \(reason)."
        case .keyMismatch(let path, let found, let configured):
            "The state at \(path) is sealed with key \(found), and this store "
                + (configured.map { "was given key \($0)" } ?? "was given no key")
                + ". It was left untouched and will not be saved over; start again with the key it was sealed with (StateStore.Options.sealer, or statectl's --key-file / --credential)."
        case .keyRequired(let file, let keyID):
            "The state database at \(file) is sealed with key \(keyID), which this store was not given, so it writes nothing into it; nothing was written. Start again with that key (StateStore.Options.sealer, or statectl's --key-file / --credential; a new key beside it: StateKeyring(new, previous: [old])), or change the database's key first (`statectl rekey`)."
        case .invalidKeyID(let keyID):
            "The sealer's key id \(keyID.debugDescription) is not 1 to 64 printable ASCII characters other than \",\"; nothing was opened."
        case .invalidOption(let name, let reason):
            "StateStore.Options.\(name) \(reason); nothing was opened."
        case .notSynced(let file, let failure):
            "The change was committed to the state database at \(file), but syncing it to storage failed (\(failure.message)): it survives the application, and may not survive a power cut. Do not make the change again; check the storage (an I/O error here usually means failing hardware, see the kernel log) and copy the database to healthy storage: a later sync that succeeds does not prove this one's writes reached it."
        case .sealedStateUnopenable(let path, let keyID):
            "The state at \(path) is sealed with key \(keyID), but its bytes do not open with it: they were altered, or copied from another row, outside StateStore. Quarantine it; `statectl inspect --quarantine` shows it."
        }
    }
}
