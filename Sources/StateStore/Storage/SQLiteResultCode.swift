import Glibc
import StateStoreSQLite

/// An SQLite result code, primary or extended, with SQLite's names as constants, so errors can
/// be matched without importing SQLite's C module.
///
/// ```swift
/// catch let error as StateStoreError {
///     if error.sqliteFailure?.resultCode == .busy { retryLater() }
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

    public static let ok = Self(rawValue: SQLITE_OK)
    public static let error = Self(rawValue: SQLITE_ERROR)
    public static let `internal` = Self(rawValue: SQLITE_INTERNAL)
    public static let permission = Self(rawValue: SQLITE_PERM)
    public static let abort = Self(rawValue: SQLITE_ABORT)
    public static let busy = Self(rawValue: SQLITE_BUSY)
    public static let locked = Self(rawValue: SQLITE_LOCKED)
    public static let noMemory = Self(rawValue: SQLITE_NOMEM)
    public static let readOnly = Self(rawValue: SQLITE_READONLY)
    public static let interrupt = Self(rawValue: SQLITE_INTERRUPT)
    public static let ioError = Self(rawValue: SQLITE_IOERR)
    public static let corrupt = Self(rawValue: SQLITE_CORRUPT)
    public static let notFound = Self(rawValue: SQLITE_NOTFOUND)
    public static let full = Self(rawValue: SQLITE_FULL)
    public static let cannotOpen = Self(rawValue: SQLITE_CANTOPEN)
    public static let `protocol` = Self(rawValue: SQLITE_PROTOCOL)
    public static let schema = Self(rawValue: SQLITE_SCHEMA)
    public static let tooBig = Self(rawValue: SQLITE_TOOBIG)
    public static let constraint = Self(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = Self(rawValue: SQLITE_MISMATCH)
    public static let misuse = Self(rawValue: SQLITE_MISUSE)
    public static let range = Self(rawValue: SQLITE_RANGE)
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
        case createFolder = "create the folder"
        case createFile = "create or open the file"
        case move = "move"
        case stat = "look at"
        case lock = "lock"
    }

    public var operation: Operation
    /// The file or folder the operation was on.
    public var path: String
    /// The C error number (`ENOENT`, `EACCES`, `ENOSPC`, ...).
    public var errno: Int32

    public init(operation: Operation, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `strerror(errno)`: "Permission denied".
    public var message: String { String(cString: strerror(errno)) }

    public var description: String { "cannot \(operation.rawValue) \(path): \(message) (errno \(errno))" }
}
