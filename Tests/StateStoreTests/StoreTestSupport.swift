import Foundation
import StateStoreSQLite
import Testing

@testable import StateStore

/// Call before a test's own use of SQLite's C API: it sets up SQLite's log first, which SQLite
/// accepts only before it initialises (a raw open initialises it), so the logging tests find
/// it in place whichever test runs first.
func beforeRawSQLite() {
    _ = SQLiteLog.installed
}

/// A database at schema version 2, as a build from before scenes had identities left it (its
/// windows' scenes positional, saving under the same unprefixed paths), with `rows` (SQL) run in it.
func makeSchema2Database(_ path: String, rows: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil) else {
        throw RawSQLFailure(message: "cannot create \(path)")
    }
    for migration in EmbeddedMigrations.all where migration.version <= 2 {
        try rawSQL(path, migration.sql)
    }
    try rawSQL(
        path,
        """
        CREATE TABLE schema_migrations(version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;
        INSERT INTO schema_migrations VALUES (1, 'initial', 0), (2, 'states_rowid', 0);
        PRAGMA user_version = 2;
        """ + rows)
}

/// Runs SQL on a database file with a separate raw connection, as another tool would.
func rawSQL(_ path: String, _ sql: String) throws {
    beforeRawSQLite()
    var handle: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
        throw RawSQLFailure(message: String(cString: sqlite3_errmsg(handle)))
    }
    defer { sqlite3_close_v2(handle) }
    var error: UnsafeMutablePointer<CChar>?
    guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
        defer { sqlite3_free(error) }
        throw RawSQLFailure(message: error.map { String(cString: $0) } ?? "unknown")
    }
}

struct RawSQLFailure: Error { var message: String }

/// The rows of one query, each column as text (`NULL` as ""), read with a separate raw connection.
func rawRows(_ path: String, _ sql: String) throws -> [[String]] {
    beforeRawSQLite()
    var handle: OpaquePointer?
    defer { sqlite3_close_v2(handle) }
    var statement: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK,
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK
    else { throw RawSQLFailure(message: String(cString: sqlite3_errmsg(handle))) }
    defer { sqlite3_finalize(statement) }
    var rows: [[String]] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        rows.append(
            (0..<sqlite3_column_count(statement)).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
            })
    }
    return rows
}

/// The bytes of a file, or an empty array when it is missing.
func fileBytes(_ path: String) -> [UInt8] {
    (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
}

/// A file's size and XXH64: compared instead of whole byte arrays, so a failure prints one line.
struct FileSnapshot: Equatable, CustomStringConvertible {
    var size: Int
    var digest: UInt64

    init(_ path: String) {
        self.init(bytes: fileBytes(path))
    }

    init(bytes: [UInt8]) {
        size = bytes.count
        digest = bytes.withUnsafeBytes { Checksum.xxh64($0) }
    }

    var description: String { "\(size) bytes, xxh64 \(String(digest, radix: 16))" }
}

/// Runs a program and returns its standard output.
func runProgram(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

func permissions(_ path: String) -> Int {
    var info = stat()
    stat(path, &info)
    return Int(info.st_mode & 0o777)
}

struct Draft: Codable, Sendable, Equatable {
    var to: [String]
    var subject: String
    var body: String
    var attachments: [String: Int] = [:]
    var sentAt: Date? = nil
}

/// A program built beside the test bundle (`.build/debug/NAME`).
func builtProduct(_ name: String) throws -> String {
    let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // The test runner may sit inside `StateStorePackageTests.xctest/...`; walk up to the build folder.
    for _ in 0..<4 {
        let candidate = folder.appending(path: name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        folder = folder.deletingLastPathComponent()
    }
    throw RawSQLFailure(message: "\(name) is not built next to the tests; run `swift build --build-tests` first")
}

/// The number of states in the database at `path`, counted by `sqlite3` in a process of its own.
func statesCountedElsewhere(_ path: String) throws -> Int? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", path, "SELECT count(*) FROM states;"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// Expects `store` to hold SQLite's locks on its file at `path`: another process that opens and
/// closes the database does not take itself for the last connection (checkpointing and
/// removing the WAL the store still writes to), and sees the store's next save.
func expectLocksHeld(by store: StateStore, on path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let before = try #require(try statesCountedElsewhere(path), sourceLocation: sourceLocation)
    #expect(
        FileManager.default.fileExists(atPath: path + "-wal"), "another process's close removed the store's WAL",
        sourceLocation: sourceLocation)
    try store.save("after", for: try RestorationPath(validating: "root/locks-held-\(before)"))
    #expect(try statesCountedElsewhere(path) == before + 1, sourceLocation: sourceLocation)
}

/// Attributes for `posix_spawn` under which the child starts with every signal at its default
/// and none blocked, whatever the spawning thread blocks or ignores (a test's thread may block
/// signals; a child that inherits a blocked SIGTERM or SIGHUP never ends when told to).
final class SpawnAttributes {
    var value = posix_spawnattr_t()

    init() {
        posix_spawnattr_init(&value)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&value, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&value, &mask)
        posix_spawnattr_setflags(&value, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    }

    deinit { posix_spawnattr_destroy(&value) }
}
