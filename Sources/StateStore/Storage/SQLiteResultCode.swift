import Glibc
import StateStoreSQLite

/// An SQLite result code, primary or extended, with SQLite's names as constants, so errors can
/// be matched without importing SQLite's C module.
///
/// ```swift
/// do {
///     try store.save(draft, for: "root/inbox/compose")
/// } catch {
///     if error.sqliteFailure?.resultCode == .busy { retryLater() }  // error is a StateStoreError
/// }
/// ```
///
/// The primary code is the low 8 bits of an extended one (``primaryResultCode``):
/// ``busySnapshot`` is a kind of ``busy``. See <https://www.sqlite.org/rescode.html>.
public struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary result code: the low 8 bits.
    public var primaryResultCode: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xFF) }

    /// SQLite's English text for the code (`sqlite3_errstr`) and the number: `database is locked (5)`.
    public var description: String { "\(String(cString: sqlite3_errstr(rawValue))) (\(rawValue))" }

    // MARK: Primary codes

    /// `SQLITE_OK`: the operation succeeded; not an error.
    public static let ok = Self(rawValue: SQLITE_OK)
    /// `SQLITE_ERROR`: a generic error, when no more specific code applies (an SQL syntax error, a missing table).
    public static let error = Self(rawValue: SQLITE_ERROR)
    /// `SQLITE_INTERNAL`: a malfunction inside SQLite or an extension; a bug, not a problem with the data.
    public static let `internal` = Self(rawValue: SQLITE_INTERNAL)
    /// `SQLITE_PERM`: the access mode asked for a newly created database could not be given.
    public static let permission = Self(rawValue: SQLITE_PERM)
    /// `SQLITE_ABORT`: an operation was stopped before it finished, by a rollback or a callback that asked it to.
    public static let abort = Self(rawValue: SQLITE_ABORT)
    /// `SQLITE_BUSY`: the database file is locked by another connection, usually in another process.
    public static let busy = Self(rawValue: SQLITE_BUSY)
    /// `SQLITE_LOCKED`: a conflict inside the same connection (or shared cache), such as dropping a table a
    /// statement is reading.
    public static let locked = Self(rawValue: SQLITE_LOCKED)
    /// `SQLITE_NOMEM`: SQLite could not allocate the memory it needed.
    public static let noMemory = Self(rawValue: SQLITE_NOMEM)
    /// `SQLITE_READONLY`: a write on a connection that may not write (opened read-only, or a file without
    /// write permission).
    public static let readOnly = Self(rawValue: SQLITE_READONLY)
    /// `SQLITE_INTERRUPT`: the operation was interrupted by `sqlite3_interrupt`.
    public static let interrupt = Self(rawValue: SQLITE_INTERRUPT)
    /// `SQLITE_IOERR`: the operating system reported an I/O error; the extended code says in which
    /// operation (``ioErrorRead``, ``ioErrorWrite``, ``ioErrorFsync``, ...).
    public static let ioError = Self(rawValue: SQLITE_IOERR)
    /// `SQLITE_CORRUPT`: the database file is damaged.
    public static let corrupt = Self(rawValue: SQLITE_CORRUPT)
    /// `SQLITE_NOTFOUND`: a file-control opcode or VFS system call was not recognised (not a missing row).
    public static let notFound = Self(rawValue: SQLITE_NOTFOUND)
    /// `SQLITE_FULL`: a write failed because the disk is full, or the database reached `PRAGMA max_page_count`.
    public static let full = Self(rawValue: SQLITE_FULL)
    /// `SQLITE_CANTOPEN`: SQLite could not open a file: the database, its journal or WAL, or a temporary file.
    public static let cannotOpen = Self(rawValue: SQLITE_CANTOPEN)
    /// `SQLITE_PROTOCOL`: the file-locking protocol failed; in WAL mode, a lock could not be taken after many
    /// retries while other connections raced for it.
    public static let `protocol` = Self(rawValue: SQLITE_PROTOCOL)
    /// `SQLITE_SCHEMA`: the schema changed after a statement was prepared, and it could not be prepared again.
    public static let schema = Self(rawValue: SQLITE_SCHEMA)
    /// `SQLITE_TOOBIG`: a string, BLOB or row is larger than SQLite's length limit.
    public static let tooBig = Self(rawValue: SQLITE_TOOBIG)
    /// `SQLITE_CONSTRAINT`: an SQL constraint was violated (`NOT NULL`, `UNIQUE`, `CHECK`, a primary or
    /// foreign key); the extended code says which kind.
    public static let constraint = Self(rawValue: SQLITE_CONSTRAINT)
    /// `SQLITE_MISMATCH`: a value of the wrong datatype where SQLite requires one, such as a rowid that is
    /// not an integer.
    public static let mismatch = Self(rawValue: SQLITE_MISMATCH)
    /// `SQLITE_MISUSE`: the SQLite interface was used in a way it does not allow, such as a statement used
    /// after it was finalized.
    public static let misuse = Self(rawValue: SQLITE_MISUSE)
    /// `SQLITE_RANGE`: a parameter index given to `sqlite3_bind_*` or a column index given to
    /// `sqlite3_column_*` is out of range.
    public static let range = Self(rawValue: SQLITE_RANGE)
    /// `SQLITE_NOTADB`: the file is not an SQLite database (its header is not SQLite's).
    public static let notADatabase = Self(rawValue: SQLITE_NOTADB)

    // MARK: Extended codes the store meets

    /// A read transaction's snapshot went stale under WAL (`SQLITE_BUSY_SNAPSHOT`).
    public static let busySnapshot = Self(rawValue: SQLITE_BUSY | (2 << 8))
    /// `SQLITE_IOERR_READ`.
    public static let ioErrorRead = Self(rawValue: SQLITE_IOERR | (1 << 8))
    /// `SQLITE_IOERR_WRITE`.
    public static let ioErrorWrite = Self(rawValue: SQLITE_IOERR | (3 << 8))
    /// `SQLITE_IOERR_FSYNC`.
    public static let ioErrorFsync = Self(rawValue: SQLITE_IOERR | (4 << 8))
    /// `SQLITE_READONLY_CANTINIT`: a read-only connection could not create the `-shm` index.
    public static let readOnlyCannotInitialize = Self(rawValue: SQLITE_READONLY | (5 << 8))
    /// `SQLITE_CONSTRAINT_CHECK`.
    public static let constraintCheck = Self(rawValue: SQLITE_CONSTRAINT | (1 << 8))
    /// `SQLITE_CONSTRAINT_NOTNULL`.
    public static let constraintNotNull = Self(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`.
    public static let constraintPrimaryKey = Self(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    /// `SQLITE_CONSTRAINT_UNIQUE`.
    public static let constraintUnique = Self(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    /// `SQLITE_CONSTRAINT_DATATYPE`: a value of the wrong type for a STRICT column.
    public static let constraintDatatype = Self(rawValue: SQLITE_CONSTRAINT | (12 << 8))
}

/// A failure of the file system rather than of SQLite: creating the database's folder or file,
/// or moving a broken database aside. `errno` is the C error number.
public struct FileSystemFailure: Sendable, Hashable, CustomStringConvertible {
    /// What was being done.
    public enum Operation: String, Sendable, Hashable {
        /// Creating a folder: the database's, or the scene claim folder beside the database.
        case createFolder = "create the folder"
        /// Creating or opening a file: the database, a scene's claim file, or a lock file.
        case createFile = "create or open the file"
        /// Renaming a file, such as moving a broken database aside.
        case move = "move"
        /// Looking at a file or folder to learn what it is (`stat` and the like).
        case stat = "look at"
        /// Taking or testing a lock on a file, such as a scene's claim.
        case lock = "lock"
    }

    /// What was being done when it failed.
    public var operation: Operation
    /// The file or folder the operation was on.
    public var path: String
    /// The C error number (`ENOENT`, `EACCES`, `ENOSPC`, ...).
    public var errno: Int32

    /// A failure of `operation` on `path` with the C error number `errno`.
    public init(operation: Operation, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `strerror(errno)`: "Permission denied".
    public var message: String { String(cString: strerror(errno)) }

    public var description: String { "cannot \(operation.rawValue) \(path): \(message) (errno \(errno))" }
}
