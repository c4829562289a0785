import BenchmarkSQLite
import Foundation
import GRDB
import StateStore
import StateStoreCrypto

/// One way to persist a controller's state. Every peer does the same work for the
/// same state value and the same paths: JSON with sorted keys, one state per path,
/// each save durable against an application crash, each restore read back and decoded.
/// `slot` picks one of the benchmark's target paths, given at initialisation.
public protocol Peer: AnyObject {
    func save(_ state: SampleState, at slot: Int) throws
    func restore(at slot: Int) throws -> SampleState
}

/// A peer that can also store and fetch already-encoded bytes, so the cost of
/// storage can be compared without the cost of JSON.
public protocol BytesPeer: Peer {
    /// The peer's own JSON coders, configured like every other peer's.
    var coding: BenchCoding { get }
    func save(encoded bytes: Data, at slot: Int) throws
    func restoreEncoded(at slot: Int) throws -> Data
}

extension BytesPeer {
    public func save(_ state: SampleState, at slot: Int) throws {
        try save(encoded: coding.encode(state), at: slot)
    }

    public func restore(at slot: Int) throws -> SampleState {
        try coding.decode(restoreEncoded(at: slot))
    }
}

// MARK: - StateStore

/// The product, through its public API: `save(_:for:)` / `restore(_:for:)`, and
/// `save(encoded:...)` / `state(at:)` for the bytes-only scenarios.
public final class StorePeer: BytesPeer {
    let store: StateStore
    let paths: [RestorationPath]
    public let coding = BenchCoding()

    /// `sealed`: every state sealed with a fixed 32-byte key (StateStoreCrypto's keyring), on a
    /// fixture of its own, so the clear peers never meet a sealed row.
    public init(database: String, targets: [String], sealed: Bool = false) throws {
        // `.header`: the default quick_check reads every page, seconds on the 1M-row file;
        // opening is not what is measured.
        let sealer = sealed ? StateKeyring(try StateKey(bytes: [UInt8](repeating: 0x5A, count: 32))) : nil
        store = try StateStore(path: database, options: .init(openCheck: .header, sealer: sealer))
        paths = try targets.map { path throws in try RestorationPath(validating: path) }
    }

    public func save(_ state: SampleState, at slot: Int) throws {
        let result = try store.save(state, for: paths[slot])
        // An unchanged value would take the skip path, which is not what a save benchmark measures.
        guard result.wrote else { throw FixtureError.unexpected("save at \(paths[slot]) did not write") }
    }

    public func restore(at slot: Int) throws -> SampleState {
        guard let state = try store.restore(SampleState.self, for: paths[slot]) else {
            throw FixtureError.unexpected("nothing stored at \(paths[slot])")
        }
        return state
    }

    public func save(encoded bytes: Data, at slot: Int) throws {
        let result = try store.save(
            encoded: bytes, encoding: .json, typeName: Fixtures.typeName, version: 1, for: paths[slot]
        )
        guard result.wrote else { throw FixtureError.unexpected("save at \(paths[slot]) did not write") }
    }

    public func restoreEncoded(at slot: Int) throws -> Data {
        guard let state = try store.state(at: paths[slot]) else {
            throw FixtureError.unexpected("nothing stored at \(paths[slot])")
        }
        guard state.checksumIsValid else { throw FixtureError.unexpected("checksum mismatch at \(paths[slot])") }
        return state.bytes
    }
}

// MARK: - Raw SQLite (the floor)

/// The SQLite C API with nothing around it: the store's schema and pragmas (WAL,
/// `synchronous=NORMAL`), statements prepared once, `BEGIN IMMEDIATE`/`COMMIT`, the
/// store's exact upsert (generation bump, unchanged-row skip, `RETURNING generation`)
/// and select, and the same checksum (the store's own XXH64, `StoredState.checksum(of:)`)
/// written and verified. What the store would cost if it had no Swift around SQLite.
public final class RawSQLitePeer: BytesPeer {
    private let db: OpaquePointer
    private let begin: OpaquePointer
    private let commit: OpaquePointer
    private let rollback: OpaquePointer
    private let upsert: OpaquePointer
    private let select: OpaquePointer
    private let paths: [String]
    public let coding = BenchCoding()

    /// A stored row as the select returns it: the same fields `StateStore.state(at:)` reads.
    struct Row {
        var typeName: String
        var version: Int64
        var generation: Int64
        var encoding: String
        var checksum: Int64
        var updatedAt: Int64
        var bytes: Data
    }

    public init(database: String, targets: [String]) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        guard sqlite3_open_v2(database, &handle, flags, nil) == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw FixtureError.sqlite("cannot open \(database)")
        }
        db = handle
        sqlite3_busy_timeout(db, 5000)
        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
                let statement
            else { throw FixtureError.sqlite("\(sql): \(String(cString: sqlite3_errmsg(handle)))") }
            return statement
        }
        guard sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", nil, nil, nil) == SQLITE_OK
        else {
            throw FixtureError.sqlite("pragmas: \(String(cString: sqlite3_errmsg(db)))")
        }
        begin = try prepare("BEGIN IMMEDIATE")
        commit = try prepare("COMMIT")
        rollback = try prepare("ROLLBACK")
        upsert = try prepare(
            """
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7)
            ON CONFLICT(path) DO UPDATE SET
                type_name = excluded.type_name, version = excluded.version,
                generation = states.generation + 1, encoding = excluded.encoding,
                checksum = excluded.checksum, updated_at = excluded.updated_at, bytes = excluded.bytes
            WHERE states.checksum != excluded.checksum OR states.version != excluded.version
                OR states.type_name != excluded.type_name OR states.encoding != excluded.encoding
                OR length(states.bytes) != length(excluded.bytes)
            RETURNING generation
            """)
        select = try prepare(
            """
            SELECT type_name, version, generation, encoding, checksum, updated_at, bytes
            FROM states WHERE path = ?1
            """)
        paths = targets
    }

    deinit {
        for statement in [begin, commit, rollback, upsert, select] { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    private func run(_ statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            throw FixtureError.sqlite(String(cString: sqlite3_errmsg(db)))
        }
    }

    public func save(encoded bytes: Data, at slot: Int) throws {
        let checksum = StoredState.checksum(of: bytes)
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        try run(begin)
        do {
            let generation = try bytes.withUnsafeBytes { raw throws -> Int64 in
                defer { sqlite3_reset(upsert) }
                sqlite3_bind_text(upsert, 1, paths[slot], -1, csqlite_transient())
                sqlite3_bind_text(upsert, 2, Fixtures.typeName, -1, csqlite_transient())
                sqlite3_bind_int64(upsert, 3, 1)
                sqlite3_bind_text(upsert, 4, "json", -1, csqlite_static())
                sqlite3_bind_int64(upsert, 5, checksum)
                sqlite3_bind_int64(upsert, 6, now)
                sqlite3_bind_blob64(upsert, 7, raw.baseAddress, sqlite3_uint64(raw.count), csqlite_static())
                guard sqlite3_step(upsert) == SQLITE_ROW else {
                    throw FixtureError.unexpected(
                        "save at \(paths[slot]) did not write: \(String(cString: sqlite3_errmsg(db)))")
                }
                let generation = sqlite3_column_int64(upsert, 0)
                guard sqlite3_step(upsert) == SQLITE_DONE else {
                    throw FixtureError.sqlite(String(cString: sqlite3_errmsg(db)))
                }
                return generation
            }
            try run(commit)
            _ = generation
        } catch {
            if sqlite3_get_autocommit(db) == 0 { try? run(rollback) }
            throw error
        }
    }

    func row(at slot: Int) throws -> Row? {
        defer { sqlite3_reset(select) }
        sqlite3_bind_text(select, 1, paths[slot], -1, csqlite_transient())
        switch sqlite3_step(select) {
        case SQLITE_ROW: break
        case SQLITE_DONE: return nil
        default: throw FixtureError.sqlite(String(cString: sqlite3_errmsg(db)))
        }
        let count = Int(sqlite3_column_bytes(select, 6))
        return Row(
            typeName: String(cString: sqlite3_column_text(select, 0)),
            version: sqlite3_column_int64(select, 1),
            generation: sqlite3_column_int64(select, 2),
            encoding: String(cString: sqlite3_column_text(select, 3)),
            checksum: sqlite3_column_int64(select, 4),
            updatedAt: sqlite3_column_int64(select, 5),
            bytes: count > 0 ? Data(bytes: sqlite3_column_blob(select, 6), count: count) : Data()
        )
    }

    public func restoreEncoded(at slot: Int) throws -> Data {
        guard let row = try row(at: slot) else { throw FixtureError.unexpected("nothing stored at \(paths[slot])") }
        guard StoredState.checksum(of: row.bytes) == row.checksum else {
            throw FixtureError.unexpected("checksum mismatch at \(paths[slot])")
        }
        return row.bytes
    }
}

// MARK: - GRDB

/// A saved state as an idiomatic GRDB record, with the store's columns. The state is
/// JSON-encoded into the `bytes` blob exactly as the store does it, rather than
/// spread over columns: a restoration store holds arbitrary `Codable` types under
/// one schema, so a table per state type is not the comparable design.
struct StateRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "states"
    static let databaseColumnDecodingStrategy = DatabaseColumnDecodingStrategy.convertFromSnakeCase
    static let databaseColumnEncodingStrategy = DatabaseColumnEncodingStrategy.convertToSnakeCase

    var path: String
    var typeName: String
    var version: Int
    var generation: Int64
    var encoding: String
    var checksum: Int64
    var updatedAt: Int64
    var bytes: Data
}

/// GRDB 7 as its documentation teaches: a schema from `DatabaseMigrator`, a
/// `DatabaseQueue` (WAL and `synchronous=NORMAL` configured, as the other peers),
/// `upsertAndFetch` that bumps the generation, `fetchOne(key:)`, the same checksum
/// written and verified.
///
/// The table is an ordinary rowid table (GRDB's `t.primaryKey("path", .text)`), in
/// GRDB's own fixture files: GRDB 7.10.0's upsert always adds `RETURNING rowid`,
/// which fails on the store's `WITHOUT ROWID` table (groue/GRDB.swift#1855, fixed
/// after 7.10.0 by #1858), and a GRDB user would write this schema anyway.
public final class GRDBPeer: BytesPeer {
    let queue: DatabaseQueue
    let paths: [String]
    public let coding = BenchCoding()

    static func createSchema(at path: String) throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("states") { db in
            try db.create(table: "states") { table in
                table.primaryKey("path", .text)
                table.column("type_name", .text).notNull()
                table.column("version", .integer).notNull()
                table.column("generation", .integer).notNull()
                table.column("encoding", .text).notNull()
                table.column("checksum", .integer).notNull()
                table.column("updated_at", .integer).notNull()
                table.column("bytes", .blob).notNull()
            }
        }
        try migrator.migrate(DatabaseQueue(path: path))
    }

    public init(database: String, targets: [String]) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        queue = try DatabaseQueue(path: database, configuration: configuration)
        paths = targets
    }

    public func save(encoded bytes: Data, at slot: Int) throws {
        let record = StateRecord(
            path: paths[slot], typeName: Fixtures.typeName, version: 1, generation: 1, encoding: "json",
            checksum: StoredState.checksum(of: bytes),
            updatedAt: Int64((Date().timeIntervalSince1970 * 1000).rounded()),
            bytes: bytes
        )
        let saved = try queue.write { db in
            try record.upsertAndFetch(db, onConflict: ["path"]) { _ in [Column("generation") += 1] }
        }
        _ = saved.generation
    }

    public func restoreEncoded(at slot: Int) throws -> Data {
        let path = paths[slot]
        guard let record = try queue.read({ db in try StateRecord.fetchOne(db, key: path) }) else {
            throw FixtureError.unexpected("nothing stored at \(path)")
        }
        guard StoredState.checksum(of: record.bytes) == record.checksum else {
            throw FixtureError.unexpected("checksum mismatch at \(path)")
        }
        return record.bytes
    }
}

// MARK: - A JSON file per controller

/// What an application without a library writes: one JSON file per restoration
/// path, written with `Data.write(to:options: .atomic)`, read with `Data(contentsOf:)`
/// + `JSONDecoder`. On Linux, Foundation's atomic write is a temporary file, `fsync`,
/// then `rename` (checked with strace): durable even against power loss, where the
/// store's `synchronous=NORMAL` only promises survival of an application crash.
public final class JSONFilePeer: BytesPeer {
    let files: [URL]
    public let coding = BenchCoding()

    static func file(for path: String, in folder: URL) -> URL {
        folder.appendingPathComponent(path.replacingOccurrences(of: "/", with: "_") + ".json")
    }

    /// `stored` other files are written first, so the folder holds as many states as the database.
    public init(folder: URL, targets: [String], stored: Int) throws {
        let filler = try coding.encode(SampleState.make(approximateBytes: 1000))
        for index in 0..<stored {
            try filler.write(to: Self.file(for: Fixtures.fillerPath(index), in: folder), options: .atomic)
        }
        files = targets.map { Self.file(for: $0, in: folder) }
    }

    public func save(encoded bytes: Data, at slot: Int) throws {
        try bytes.write(to: files[slot], options: .atomic)
    }

    public func restoreEncoded(at slot: Int) throws -> Data {
        try Data(contentsOf: files[slot])
    }
}

// MARK: - UserDefaults

/// Foundation's `UserDefaults` on Linux: one suite, the encoded state stored as
/// `Data` under the path, `synchronize()` after each save so it reaches the disk.
/// swift-corelibs-foundation then rewrites the suite's whole XML property list in
/// place (`open(O_TRUNC)`, `write`, `fsync`, then reads it back; checked with strace),
/// at `$XDG_CONFIG_HOME/<suite>.plist`, which is pointed into the run folder here.
public final class UserDefaultsPeer: Peer {
    let defaults: UserDefaults
    let suite: String
    let keys: [String]
    let coding = BenchCoding()
    static let configFolder = Fixtures.runFolder.appendingPathComponent("config")

    public init(suite: String, targets: [String], stored: Int) throws {
        // Read when the preferences are first used, so set before any UserDefaults call.
        try FileManager.default.createDirectory(at: Self.configFolder, withIntermediateDirectories: true)
        setenv("XDG_CONFIG_HOME", Self.configFolder.path, 1)
        guard let defaults = UserDefaults(suiteName: suite) else {
            throw FixtureError.unexpected("no UserDefaults suite \(suite)")
        }
        self.defaults = defaults
        self.suite = suite
        let filler = try coding.encode(SampleState.make(approximateBytes: 1000))
        for index in 0..<stored { defaults.set(filler, forKey: Fixtures.fillerPath(index)) }
        defaults.synchronize()
        keys = targets
    }

    public func save(_ state: SampleState, at slot: Int) throws {
        defaults.set(try coding.encode(state), forKey: keys[slot])
        defaults.synchronize()
    }

    public func restore(at slot: Int) throws -> SampleState {
        guard let bytes = defaults.data(forKey: keys[slot]) else {
            throw FixtureError.unexpected("nothing stored under \(keys[slot])")
        }
        return try coding.decode(bytes)
    }

    public func removeSuite() {
        defaults.removePersistentDomain(forName: suite)
        try? FileManager.default.removeItem(at: Self.configFolder.appendingPathComponent(suite + ".plist"))
    }
}
