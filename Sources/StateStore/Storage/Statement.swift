import Foundation
import StateStoreSQLite

/// A prepared statement, owned by one ``Connection`` and reused for every execution.
///
/// Not thread-safe: it is only touched while its connection's lock is held.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    unowned let connection: Connection

    init(connection: Connection, sql: String, persistent: Bool) throws(StateStoreError) {
        self.connection = connection
        self.sql = sql
        var handle: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, flags, &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw connection.error(code, sql: sql)
        }
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Binding (1-based indices, as in SQLite)

    /// Binds all of `value`'s UTF-8 bytes, a NUL inside included (a C string would end there).
    func bind(_ value: String, at index: Int32) {
        var value = value
        value.withUTF8 { bytes in
            // An empty buffer may have no address, and a NULL pointer would bind NULL, not "".
            let base = bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(bitPattern: 1)!
            sqlite3_bind_text(
                handle, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), csqlite_transient())
        }
    }

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ value: Int, at index: Int32) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, value)
    }

    func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    /// Binds a blob of `count` zeros that SQLite writes without holding them in memory: the room
    /// that incremental blob I/O (``Connection/copyBlob(column:from:row:of:to:row:offset:count:)``)
    /// then fills.
    func bindZeroBlob(count: Int, at index: Int32) {
        sqlite3_bind_zeroblob64(handle, index, sqlite3_uint64(count))
    }

    /// Binds bytes without copying them: the buffer must stay valid until ``reset()``.
    func bindBorrowed(_ bytes: UnsafeRawBufferPointer, at index: Int32) {
        // A zero-length blob still needs a non-NULL pointer, or SQLite stores NULL.
        let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        sqlite3_bind_blob64(handle, index, base, sqlite3_uint64(bytes.count), csqlite_static())
    }

    // MARK: Stepping

    /// Steps once: `true` when a row is available, `false` when the statement is done.
    ///
    /// A step that fails resets the statement and drops its bindings before it throws: a
    /// cached statement left halted would refuse the next caller's bindings (`SQLITE_MISUSE`)
    /// and then run again with the failed caller's (another path's row, read as this one's).
    func step() throws(StateStoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(code, sql: sql)
            reset()
            throw error
        }
    }

    /// Binds column `column` of the row `other` is on (a statement of any connection) as it is,
    /// its type and value, at parameter `index`.
    func bind(column: Int32, of other: Statement, at index: Int32) {
        sqlite3_bind_value(handle, index, sqlite3_column_value(other.handle, column))
    }

    /// Runs the statement to completion, ignoring any rows.
    func run() throws(StateStoreError) {
        defer { reset() }
        while try step() {}
    }

    /// Resets the statement and drops its bindings, so borrowed buffers are released.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns (0-based indices, as in SQLite)

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func int(_ column: Int32) -> Int {
        Int(sqlite3_column_int64(handle, column))
    }

    func double(_ column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// The column as text, all of its bytes (a NUL inside does not end it); invalid UTF-8 is
    /// repaired with U+FFFD. Use ``validText(_:)`` where the exact bytes matter.
    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as text when its bytes are valid UTF-8, else `nil`.
    func validText(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(validating: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column's bytes. SQLite returns no pointer for a non-empty value only when it ran
    /// out of memory converting it: that is an error, never an empty (and so "damaged") value.
    /// The blob is fetched before its size, as <https://www.sqlite.org/c3ref/column_blob.html> advises.
    func data(_ column: Int32) throws(StateStoreError) -> Data {
        let bytes = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0 else { return Data() }
        guard let bytes else { throw connection.error(SQLITE_NOMEM, sql: sql) }
        return Data(bytes: bytes, count: count)
    }
}

extension Data {
    /// `withUnsafeBytes` for closures with typed throws.
    func withBorrowedBytes<R>(
        _ body: (UnsafeRawBufferPointer) throws(StateStoreError) -> R
    ) throws(StateStoreError) -> R {
        try withUnsafeBytes { raw in Result { () throws(StateStoreError) -> R in try body(raw) } }.get()
    }
}
