import Foundation
import StateStoreSQLite

/// One SQLite connection: explicit open flags, the store's pragmas, a cache of
/// prepared statements, and `BEGIN IMMEDIATE` write transactions.
///
/// The only type (with ``Statement``) that calls SQLite. Not thread-safe on its own:
/// ``StateStore`` keeps it inside a lock.
final class Connection {
    let handle: OpaquePointer
    let path: String
    let readOnly: Bool
    /// The file this connection holds SQLite's locks on, counted in ``OpenDatabaseFiles`` from
    /// its open until it closes; `nil` in memory, and for an immutable open (which takes none).
    private let lockedFile: FileIdentity?
    private var statements: [StatementKey: Statement] = [:]
    /// Rises with every commit made through ``writeTransaction(countsAsChange:_:)`` that counts,
    /// and every time ``noteOtherConnectionsCommits()`` finds another connection committed.
    private(set) var changeCount: UInt64 = 0
    /// `PRAGMA data_version` when last read; `nil` before the first read.
    private var dataVersion: Int64?
    /// Set once the store has put the file in WAL mode (this connection, read-write).
    var usesWAL = false
    /// The start of the wal-index as SQLite itself maps it (``walIndexMark()``), borrowed
    /// once a read transaction has mapped it; `nil` before, or when there is none.
    private var walIndexHeader: UnsafeRawPointer?
    private var walIndexLookedUp = false
    /// The wal-index header (``walIndexMark()``) as it was when every commit was last
    /// accounted for through `PRAGMA data_version`.
    private var walIndexMarkSeen: WALIndexMark?

    struct OpenOptions {
        var readOnly = false
        var create = true
        var busyTimeout: Duration = .seconds(5)
        /// Read the file as one that cannot change (`immutable=1`): no locks, no `-shm`, no WAL.
        /// Only for a read-only open of a file with no WAL pages; see ``StateStore/connect(to:options:)``.
        var immutable = false
    }

    init(path: String, options: OpenOptions) throws(StateStoreError) {
        self.path = path
        self.readOnly = options.readOnly
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        if options.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if options.create { flags |= SQLITE_OPEN_CREATE }
        }
        var name = path
        if options.immutable {
            flags |= SQLITE_OPEN_URI
            name = Self.immutableURI(for: path)
        }
        _ = SQLiteLog.installed  // before SQLite initialises: the log can only be set up then
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(name, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw .cannotOpen(
                file: path, SQLiteFailure(extendedResultCode: SQLiteResultCode(rawValue: code), message: message))
        }
        self.handle = handle
        if !options.immutable, let name = sqlite3_db_filename(handle, "main"), name.pointee != 0,
            let file = try? FileIdentity.of(String(cString: name)).get()
        {
            OpenDatabaseFiles.opened(file)
            lockedFile = file
        } else {
            lockedFile = nil
        }
        // Validated by the store: 0 ... Int32.max milliseconds.
        sqlite3_busy_timeout(handle, Int32(clamping: options.busyTimeout.saturatingMilliseconds))
        // Defensive mode: no writes to the schema through PRAGMA writable_schema and
        // friends, so a hostile import cannot corrupt the file on purpose.
        var ignored: Int32 = 0
        _ = csqlite_db_config_int(handle, SQLITE_DBCONFIG_DEFENSIVE, 1, &ignored)
        // Until the store has accepted the file, closing must not checkpoint: a refused file
        // (newer schema, damage) keeps its -wal exactly as it was. See ``checkpointsOnClose``.
        checkpointsOnClose = false
    }

    /// `file:/absolute/path?immutable=1`, every byte but the unreserved ones and `/` percent-encoded.
    /// See <https://www.sqlite.org/uri.html>.
    static func immutableURI(for path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var uri = "file:"
        for byte in absolute.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                uri.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                uri += String(format: "%%%02X", byte)
            }
        }
        return uri + "?immutable=1"
    }

    /// The store's integrity check after open. While it holds its snapshot, commits here make
    /// no attempt to checkpoint (`sqlite3_wal_autocheckpoint` 0), and the next commit after it
    /// lets go makes them again: a snapshot taken while the WAL held nothing (the usual case
    /// at launch, a clean close having removed it) keeps every frame from being copied back,
    /// and each commit past the 1,000-page mark would otherwise pay for a checkpoint that can
    /// copy nothing (saves took 7–25 times as long on a 1.4 GB file while the check read it).
    weak var pausingCheckpoints: BackgroundChecker?
    private var checkpointsPaused = false

    /// Pauses or resumes the automatic checkpoint as ``pausingCheckpoints`` needs.
    private func followCheckpointPause() {
        let pause = pausingCheckpoints?.isHoldingSnapshot.load(ordering: .relaxed) ?? false
        guard pause != checkpointsPaused else { return }
        checkpointsPaused = pause
        sqlite3_wal_autocheckpoint(handle, pause ? 0 : 1000)
    }

    /// Whether closing the last connection copies the WAL into the database and deletes it
    /// (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`, inverted). Off from open until the store accepts the file.
    var checkpointsOnClose: Bool {
        get {
            var value: Int32 = 0
            _ = csqlite_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, -1, &value)
            return value == 0
        }
        set {
            var ignored: Int32 = 0
            _ = csqlite_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, newValue ? 0 : 1, &ignored)
        }
    }

    /// Syncs the WAL (or rollback journal) file to storage: every transaction committed so far
    /// then survives a power cut, whatever `PRAGMA synchronous` says. One `fdatasync` (and, the
    /// first time, one of the folder, which SQLite's unix VFS does for a new WAL). Nothing to do
    /// when no journal file is open. A failed sync throws ``StateStoreError/notSynced(file:_:)``.
    func syncJournal() throws(StateStoreError) {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) == SQLITE_OK,
            let file, let sync = file.pointee.pMethods?.pointee.xSync
        else { return }
        let code = sync(file, SQLITE_SYNC_NORMAL)
        guard code == SQLITE_OK else {
            throw .notSynced(
                file: path,
                SQLiteFailure(
                    extendedResultCode: SQLiteResultCode(rawValue: code),
                    message: "the WAL could not be synced to storage (\(String(cString: sqlite3_errstr(code))))",
                    sql: nil
                ))
        }
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
        if let lockedFile { OpenDatabaseFiles.closed(lockedFile) }
    }

    // MARK: Errors

    /// Turns an SQLite result code into the store's typed error.
    func error(_ code: Int32, sql: String?) -> StateStoreError {
        let extended = code == sqlite3_errcode(handle) ? sqlite3_extended_errcode(handle) : code
        let failure = SQLiteFailure(
            extendedResultCode: SQLiteResultCode(rawValue: extended),
            message: String(cString: sqlite3_errmsg(handle)),
            sql: sql
        )
        switch extended & 0xFF {
        case SQLITE_NOTADB: return .notADatabase(file: path, failure)
        case SQLITE_CORRUPT: return .corrupt(file: path, failure)
        case SQLITE_FULL: return .diskFull(failure)
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy(failure)
        case SQLITE_READONLY: return .readOnly(file: path, failure)
        case SQLITE_CANTOPEN: return .cannotOpen(file: path, failure)
        default: return .sqlite(failure)
        }
    }

    // MARK: Statements

    /// The prepared statement for `sql`, prepared on first use and kept for the connection's life.
    func cached(_ sql: String) throws(StateStoreError) -> Statement {
        let key = StatementKey(sql: sql)
        if let statement = statements[key] { return statement }
        let statement = try Statement(connection: self, sql: sql, persistent: true)
        statements[key] = statement
        return statement
    }

    /// A statement's SQL as the cache's key, hashed by its length and its first and last 32
    /// bytes, and compared whole. Hashing the whole text cost more than the rest of a lookup:
    /// a save's statement is 900 bytes, and the writer looks up nine statements a push + pop
    /// (hashing them whole was 2 % of its instructions). Two statements of one length that
    /// share those bytes only share a bucket.
    private struct StatementKey: Hashable {
        var sql: String

        func hash(into hasher: inout Hasher) {
            var sql = sql
            sql.withUTF8 { bytes in
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.prefix(32))))
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(32))))
            }
        }
    }

    /// Runs one or more statements that take no parameters (`sqlite3_exec`).
    func execute(_ sql: String) throws(StateStoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else { throw error(code, sql: sql) }
    }

    /// The first column of the first row of a statement without parameters, as an integer.
    func scalarInt(_ sql: String) throws(StateStoreError) -> Int64? {
        let statement = try Statement(connection: self, sql: sql, persistent: false)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// Every row's first column of a statement without parameters, as text.
    func strings(_ sql: String) throws(StateStoreError) -> [String] {
        let statement = try Statement(connection: self, sql: sql, persistent: false)
        var result: [String] = []
        while try statement.step() { result.append(statement.string(0)) }
        return result
    }

    /// The name SQLite opened the main database by (absolute; its `-wal` and `-shm` are named
    /// after it), or `nil` for a database in memory.
    var fileName: String? {
        guard let name = sqlite3_db_filename(handle, "main"), name.pointee != 0 else { return nil }
        return String(cString: name)
    }

    /// The messages of an integrity pragma (`quick_check`, `integrity_check`). SQLite can stop
    /// one with `SQLITE_CORRUPT` after its first messages (a damaged tree met on a later pass):
    /// the messages so far are returned then, the error's own last. With none yet, it throws.
    func integrityMessages(_ sql: String) throws(StateStoreError) -> [String] {
        let statement = try Statement(connection: self, sql: sql, persistent: false)
        var result: [String] = []
        do throws(StateStoreError) {
            while try statement.step() { result.append(statement.string(0)) }
        } catch {
            guard case .corrupt(_, let failure) = error, !result.isEmpty else { throw error }
            result.append(failure.message)
        }
        return result
    }

    // MARK: Transactions

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up
    /// front, so the busy timeout applies and no `SQLITE_BUSY_SNAPSHOT` can surface
    /// half-way. Commits when `body` returns, rolls back when it throws.
    ///
    /// A commit raises ``changeCount`` unless `countsAsChange` is `false` (the write-behind
    /// writer, whose writes the restoration layer already knows).
    func writeTransaction<T>(
        countsAsChange: Bool = true, _ body: () throws(StateStoreError) -> T
    ) throws(StateStoreError) -> T {
        if readOnly { throw .readOnly(file: path, nil) }
        if pausingCheckpoints != nil || checkpointsPaused { followCheckpointPause() }
        try cached("BEGIN IMMEDIATE").run()
        do {
            if !countsAsChange { noteOtherConnectionsCommitsIfAny() }
            let result = try body()
            try cached("COMMIT").run()
            if countsAsChange {
                changeCount &+= 1
            } else {
                // The writer's commit moved the wal-index mark: account for it here, off the
                // main actor, so an appearance finds the mark where it was left. The pragma
                // also sees any other connection's commit that came in after ours.
                noteOtherConnectionsCommits()
            }
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 {
                _ = try? cached("ROLLBACK").run()
            }
            throw error
        }
    }

    /// Reads `PRAGMA data_version`, which changes only when *another* connection (another
    /// process, or another store object on the same file) commits, and raises ``changeCount``
    /// when it changed since the last read. Costs no table access: the pragma only starts a read
    /// transaction, which looks at the WAL index. See <https://www.sqlite.org/pragma.html#pragma_data_version>.
    func noteOtherConnectionsCommits() {
        let mark = walIndexMark()
        guard let statement = try? cached("PRAGMA data_version") else { return }
        defer { statement.reset() }
        guard (try? statement.step()) == true else { return }
        let version = statement.int64(0)
        if let dataVersion, dataVersion != version { changeCount &+= 1 }
        dataVersion = version
        // Every commit in the mark read before the pragma is now accounted for (one that came
        // in between is seen by the pragma, and makes the next check run it again: harmless).
        walIndexMarkSeen = mark
        if !walIndexLookedUp { lookUpWALIndex() }
    }

    /// ``noteOtherConnectionsCommits()``, skipped when the wal-index header (``walIndexMark()``)
    /// shows that nobody committed since every commit was last accounted for. Reading the mark
    /// is four loads from memory SQLite already maps; the pragma starts a read transaction (two
    /// `fcntl` locks and a statement), which on the main actor was the larger part of restoring
    /// from the cache.
    func noteOtherConnectionsCommitsIfAny() {
        if let seen = walIndexMarkSeen, let now = walIndexMark(), now == seen { return }
        noteOtherConnectionsCommits()
    }

    /// What the wal-index header says of the WAL's content: the commit counter, the last
    /// valid frame and the WAL's salts. Any commit that changes the database moves one of
    /// them (a commit appends frames; a WAL started afresh gets new salts).
    struct WALIndexMark: Equatable {
        var change: UInt32, maxFrame: UInt32, salt1: UInt32, salt2: UInt32
    }

    /// ``WALIndexMark`` read from the first copy of the wal-index header at the start of the
    /// `-shm` file (`iChange` at offset 8, `isInit` at 12, `mxFrame` at 16, `aSalt` at 32, in
    /// native byte order; see <https://www.sqlite.org/walformat.html>), or `nil` when there is
    /// no initialised WAL index to read.
    ///
    /// Read from SQLite's own mapping of the file, never through a descriptor of ours: closing
    /// any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
    /// included. Another process may be writing the header: a torn read differs from the
    /// mark seen, and costs one pragma.
    private func walIndexMark() -> WALIndexMark? {
        guard let header = walIndexHeader, header.load(fromByteOffset: 12, as: UInt8.self) != 0 else { return nil }
        return WALIndexMark(
            change: header.load(fromByteOffset: 8, as: UInt32.self),
            maxFrame: header.load(fromByteOffset: 16, as: UInt32.self),
            salt1: header.load(fromByteOffset: 32, as: UInt32.self),
            salt2: header.load(fromByteOffset: 36, as: UInt32.self)
        )
    }

    /// Borrows SQLite's mapping of the wal-index's first region through the VFS's `xShmMap`
    /// (region 0 of 32 KiB, without extending it), once a read transaction in WAL mode has
    /// mapped it; it stays mapped until the connection closes.
    private func lookUpWALIndex() {
        guard usesWAL, !readOnly else {
            walIndexLookedUp = true
            return
        }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
            let file, let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2,
            let map = methods.pointee.xShmMap
        else {
            walIndexLookedUp = true  // a VFS without shared memory: the pragma every time
            return
        }
        var region: UnsafeMutableRawPointer?
        // No region yet (nothing mapped it so far): looked up again after the next pragma.
        guard map(file, 0, 32 * 1024, 0, &region) == SQLITE_OK, let region else { return }
        walIndexHeader = UnsafeRawPointer(region)
        walIndexLookedUp = true
    }

    /// Runs `body` in a deferred read transaction, so several queries see one snapshot.
    func readTransaction<T>(_ body: () throws(StateStoreError) -> T) throws(StateStoreError) -> T {
        try cached("BEGIN DEFERRED").run()
        defer { if sqlite3_get_autocommit(handle) == 0 { _ = try? cached("COMMIT").run() } }
        return try body()
    }

    /// The rowid of the last row inserted (`sqlite3_last_insert_rowid`).
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Copies `count` bytes, from byte `start` on, of `table.column` of row `source` (in the
    /// database of `reader`, this connection's own when `nil`) into the same bytes of
    /// `target.column` of row `destination` (which must already hold a blob at least that long,
    /// e.g. a `zeroblob`), a megabyte at a time through SQLite's incremental blob I/O, so a state
    /// of any size is moved without ever being held in memory whole. See
    /// <https://www.sqlite.org/c3ref/blob_open.html>.
    func copyBlob(
        column: String, from table: String, row source: Int64, of reader: Connection? = nil, to target: String,
        row destination: Int64, offset start: Int = 0, count: Int
    ) throws(StateStoreError) {
        var writer: OpaquePointer?
        defer { sqlite3_blob_close(writer) }
        let code = sqlite3_blob_open(handle, "main", target, column, destination, 1, &writer)
        guard code == SQLITE_OK else { throw error(code, sql: nil) }
        var offset = start
        try (reader ?? self).readBlob(column: column, of: table, row: source, from: start, count: count) {
            (chunk) throws(StateStoreError) in
            let code = sqlite3_blob_write(writer, chunk.baseAddress, Int32(chunk.count), Int32(offset))
            guard code == SQLITE_OK else { throw error(code, sql: nil) }
            offset += chunk.count
        }
    }

    /// Reads the blob in `column` of `table`'s row `row` (by rowid) a chunk of at most 1 MiB at a
    /// time, in order, passing each to `body`: a row of any size is read in fixed memory. Reads
    /// the bytes from `start` on, `count` of them (all that follow when `nil`); a range past the
    /// blob's end is an error (`SQLITE_ERROR`). Opens the blob read-only (`sqlite3_blob_open`);
    /// inside a transaction, it reads that transaction's snapshot. An empty range calls `body`
    /// never.
    func readBlob(
        column: String, of table: String, row: Int64, from start: Int = 0, count: Int? = nil,
        _ body: (UnsafeRawBufferPointer) throws(StateStoreError) -> Void
    ) throws(StateStoreError) {
        var reader: OpaquePointer?
        defer { sqlite3_blob_close(reader) }
        var code = sqlite3_blob_open(handle, "main", table, column, row, 0, &reader)
        guard code == SQLITE_OK else { throw error(code, sql: nil) }
        let end = count.map { start + $0 } ?? Int(sqlite3_blob_bytes(reader))
        guard end > start else { return }
        let chunk = min(end - start, Self.blobChunk)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset = start
        while offset < end {
            let length = min(chunk, end - offset)
            code = sqlite3_blob_read(reader, buffer, Int32(length), Int32(offset))
            guard code == SQLITE_OK else { throw error(code, sql: nil) }
            try body(UnsafeRawBufferPointer(start: buffer, count: length))
            offset += length
        }
    }

    /// The XXH64 checksum, as stored (``Checksum/stored(_:)``), of the blob in `column` of
    /// `table`'s row `row`, read a chunk at a time (``readBlob(column:of:row:from:count:_:)``).
    func storedChecksum(ofBlob column: String, in table: String, row: Int64) throws(StateStoreError) -> Int64 {
        var hasher = Checksum.Incremental()
        try readBlob(column: column, of: table, row: row) { hasher.update($0) }
        return Int64(bitPattern: hasher.finalize())
    }

    /// The blob in `column` of `table`'s row `row`, whole (read with ``readBlob(column:of:row:from:count:_:)``).
    func blob(_ column: String, in table: String, row: Int64) throws(StateStoreError) -> Data {
        var bytes = Data()
        try readBlob(column: column, of: table, row: row) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The most bytes ``readBlob(column:of:row:from:count:_:)`` holds at once.
    static let blobChunk = 1 << 20

    /// Rows changed by the last INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Frees as much of the page cache as it can (`sqlite3_db_release_memory`).
    func releaseMemory() {
        sqlite3_db_release_memory(handle)
    }

    /// Bytes held by this connection's page cache and statements (`SQLITE_DBSTATUS_CACHE_USED` + `STMT_USED`).
    var memoryUsed: Int {
        var cache: Int32 = 0, statementsUsed: Int32 = 0, high: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_USED, &cache, &high, 0)
        sqlite3_db_status(handle, SQLITE_DBSTATUS_STMT_USED, &statementsUsed, &high, 0)
        return Int(cache) + Int(statementsUsed)
    }
}

/// The database files this process has open through SQLite connections, by identity, with how
/// many connections each. On Linux, closing any descriptor of a file drops every `fcntl` lock
/// the process holds on it, SQLite's among them: the shared lock a connection keeps on the
/// database and its locks on the `-shm`, without which another process's close takes itself
/// for the last connection, checkpoints and removes the WAL this one still writes to. SQLite
/// keeps its own descriptors open for that reason; the store's looks at a file made through a
/// descriptor of their own (its header before SQLite opens it, the `-shm` a recovery tests)
/// are not made for a file open here.
enum OpenDatabaseFiles {
    private static let connections = Lock<[FileIdentity: Int]>([:])

    static func opened(_ file: FileIdentity) {
        connections.withLock { $0[file, default: 0] += 1 }
    }

    static func closed(_ file: FileIdentity) {
        connections.withLock { open in
            if let count = open[file], count > 1 { open[file] = count - 1 } else { open[file] = nil }
        }
    }

    /// Whether a connection of this process has the file `path` names open (following links).
    static func contains(_ path: String) -> Bool {
        guard let file = try? FileIdentity.of(path).get() else { return false }
        return connections.withLock { $0[file] != nil }
    }

    /// Runs `look`, which opens and closes descriptors of the file `path` names (or of its
    /// `-shm`), unless a connection of this process has that file open; returns whether it ran.
    /// The registry stays locked while it runs: a connection opened meanwhile by another thread
    /// counts itself before it takes any SQLite lock, so it waits, and `look` cannot drop them.
    /// `look` may open immutable connections only (they take no lock and are not counted): a
    /// counted one would wait for the lock `look` runs under.
    @discardableResult
    static func lookUnlessOpen<E: Error>(at path: String, _ look: () throws(E) -> Void) throws(E) -> Bool {
        try connections.withLock { (open) throws(E) -> Bool in
            if let file = try? FileIdentity.of(path).get(), open[file] != nil { return false }
            try look()
            return true
        }
    }
}
