import BenchmarkSQLite
import Foundation
import StateStore

/// Where a run keeps its databases and files, and the databases themselves.
///
/// package-benchmark runs every benchmark in its own process, so "once per run"
/// means once per folder: `./compare` points `STATESTORE_BENCH_DIR` at a fresh
/// temporary folder and deletes it afterwards. Without it the folder is
/// `$TMPDIR/statestore-benchmarks` and its databases are reused by later runs.
public enum Fixtures {
    public static let runFolder: URL = {
        let environment = ProcessInfo.processInfo.environment
        let path =
            environment["STATESTORE_BENCH_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSTemporaryDirectory() + "/statestore-benchmarks")
        let url = URL(fileURLWithPath: path, isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// A fresh folder for one benchmark's files (JSON files, UserDefaults, GRDB-only data).
    public static func scratchFolder(_ name: String) throws -> URL {
        let url = runFolder.appendingPathComponent("scratch").appendingPathComponent(
            name.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: " ", with: "_")
        )
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The type name every peer stores beside the bytes, as `StateStore.save` spells it.
    public static let typeName = String(reflecting: SampleState.self)

    /// The path of the `index`-th filler state: zero-padded, so the fixture is inserted in key order.
    public static func fillerPath(_ index: Int) -> String {
        let digits = String(index)
        return "app/main/nav/item" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    /// Who creates a database's schema.
    public enum Schema: String, Sendable {
        /// `migrations/` through `StateStore(path:)`: the store and raw-SQLite peers.
        case store
        /// GRDB's migrator, as a GRDB user would (see ``GRDBPeer``).
        case grdb
    }

    /// A database holding `rows` states of about 1 KB each in a `states` table, built on
    /// first use in this run (in one transaction) and shared by every benchmark of that
    /// schema's peers. The store and raw-SQLite peers write identical rows to one file. A `tag`
    /// makes a file of its own, for benchmarks that add to it.
    public static func database(rows: Int, schema: Schema = .store, tag: String = "") throws -> String {
        let path = runFolder.appendingPathComponent("\(schema.rawValue)\(tag.isEmpty ? "" : "-" + tag)-\(rows).sqlite")
            .path
        if FileManager.default.fileExists(atPath: path) { return path }
        let building = path + ".building"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: building + suffix) }
        let started = ContinuousClock.now
        // The store (or GRDB) creates the file and its schema ...
        switch schema {
        case .store: _ = try StateStore(path: building)
        case .grdb: try GRDBPeer.createSchema(at: building)
        }
        // ... then the raw C API fills it: no journal, one transaction, rows in key order.
        try fill(building, rows: rows)
        try FileManager.default.moveItem(atPath: building, toPath: path)
        // Write the fixture's gigabytes back now, not during the measurements that follow.
        sync()
        let elapsed = ContinuousClock.now - started
        FileHandle.standardError.write(Data("built \(rows) stored states in \(elapsed)\n".utf8))
        return path
    }

    private static func fill(_ building: String, rows: Int) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(building, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            throw FixtureError.sqlite("open \(building)")
        }
        defer { sqlite3_close_v2(db) }
        try exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN")
        var insert: OpaquePointer?
        let sql = """
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES (?1, ?2, 1, 1, 'json', ?3, ?4, ?5)
            """
        guard sqlite3_prepare_v2(db, sql, -1, &insert, nil) == SQLITE_OK else { throw FixtureError.sqlite(sql) }
        defer { sqlite3_finalize(insert) }
        let bytes = try BenchCoding().encode(SampleState.make(approximateBytes: 1000))
        let checksum = StoredState.checksum(of: bytes)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try bytes.withUnsafeBytes { raw in
            for index in 0..<rows {
                sqlite3_bind_text(insert, 1, fillerPath(index), -1, csqlite_transient())
                sqlite3_bind_text(insert, 2, typeName, -1, csqlite_transient())
                sqlite3_bind_int64(insert, 3, checksum)
                sqlite3_bind_int64(insert, 4, now)
                sqlite3_bind_blob64(insert, 5, raw.baseAddress, sqlite3_uint64(raw.count), csqlite_static())
                guard sqlite3_step(insert) == SQLITE_DONE else {
                    throw FixtureError.sqlite(String(cString: sqlite3_errmsg(db)))
                }
                sqlite3_reset(insert)
            }
        }
        try exec(db, "COMMIT; PRAGMA journal_mode = WAL")
    }

    private static func exec(_ db: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw FixtureError.sqlite("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
    }
}

public enum FixtureError: Error, CustomStringConvertible {
    case sqlite(String)
    case unexpected(String)

    public var description: String {
        switch self {
        case .sqlite(let message): "SQLite: \(message)"
        case .unexpected(let message): message
        }
    }
}
