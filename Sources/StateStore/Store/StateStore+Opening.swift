import Foundation

// What `StateStore(path:)` checks before SQLite sees a file, and what it asks of the
// database before it writes anything: a plain path, a regular file, a database that is ours.

extension StateStore {
    /// StateStore's `PRAGMA application_id`, the bytes `StSt` at offset 68 of the file header,
    /// set by `migrations/0003_application_id.sql`. `file(1)` and other tools can tell our
    /// databases from other programs' by it. See <https://www.sqlite.org/pragma.html#pragma_application_id>.
    public static let applicationID: Int32 = 0x5374_5374

    /// Refuses what SQLite would not treat as a plain file name.
    static func validateDatabasePath(_ path: String) throws(StateStoreError) {
        if path.isEmpty {
            throw .invalidDatabasePath(path, reason: "it is empty (SQLite would open a temporary database and keep nothing); give a file path, or use StateStore.inMemory()")
        }
        if path == ":memory:" {
            throw .invalidDatabasePath(path, reason: "it names SQLite's in-memory database, which keeps nothing; give a file path, or use StateStore.inMemory()")
        }
        if path.utf8.count >= 5, path.utf8.prefix(5).map({ $0 | 0x20 }).elementsEqual("file:".utf8) {
            throw .invalidDatabasePath(path, reason: "it is an SQLite URI; give a plain file path (write ./\(path) for a file whose name starts with \"file:\")")
        }
        if path.utf8.contains(0) {
            throw .invalidDatabasePath(path, reason: "it contains a NUL byte")
        }
    }

    /// Throws ``StateStoreError/notARegularFile(file:kind:)`` when `path` exists (following
    /// symbolic links) and is anything but a regular file. Opening a FIFO blocks until a writer
    /// comes; a device such as `/dev/zero` never ends.
    static func requireRegularFileOrNothing(at path: String) throws(StateStoreError) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        if let kind = FileKind.nonRegular(info.st_mode) { throw .notARegularFile(file: path, kind: kind) }
    }

    /// Creates missing folders with mode 0700 and a missing file with mode 0600, so SQLite
    /// (which would use 0644) never makes restoration state world-readable. An existing file
    /// of ours that others may read is tightened to 0600; what cannot be tightened (another
    /// user's file, a folder others may write to) is returned as a warning.
    static func prepareFile(at path: String) throws(StateStoreError) -> [String] {
        var warnings: [String] = []
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try makeFolders(folder)
        }
        var folderInfo = stat()
        if stat(folder.isEmpty ? "." : folder, &folderInfo) == 0,
           folderInfo.st_mode & (S_IWGRP | S_IWOTH) != 0, folderInfo.st_mode & S_ISVTX == 0 {
            warnings.append(
                "the folder \(folder.isEmpty ? "." : folder) is writable by other users (mode \(FileKind.octal(folderInfo.st_mode))), "
                    + "who could replace the database; `chmod go-w` it, or keep the database in a folder of your own"
            )
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .fileSystem(FileSystemFailure(operation: .createFile, path: path, errno: errno))
        }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_mode & 0o077 != 0 {
            if info.st_uid == geteuid(), fchmod(descriptor, 0o600) == 0 {
                for companion in [path + "-wal", path + "-shm"] { chmod(companion, 0o600) }
            } else {
                warnings.append(
                    "\(path) (mode \(FileKind.octal(info.st_mode))) can be read by other users and is not this user's to tighten; "
                        + "ask its owner to `chmod 600` it"
                )
            }
        }
        return warnings
    }

    /// Creates `folder` and any missing parents with mode 0700 (`mkdir -p`), keeping `errno`.
    private static func makeFolders(_ folder: String) throws(StateStoreError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        let parent = (folder as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != folder { try makeFolders(parent) }
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw .fileSystem(FileSystemFailure(operation: .createFolder, path: folder, errno: errno))
        }
    }

    /// Opens the connection. A read-only open of a WAL database in a folder this user cannot
    /// write (another user's file, a read-only file system) has nowhere to put the `-shm` index
    /// SQLite needs; when no `-wal` file holds pages, nothing can be missed by reading the file
    /// alone, so it is opened again as immutable.
    /// See <https://www.sqlite.org/wal.html#readonly> and <https://www.sqlite.org/uri.html#uriimmutable>.
    static func connect(to path: String, options: Options) throws(StateStoreError) -> Connection {
        let openOptions = Connection.OpenOptions(
            readOnly: options.readOnly, create: !options.readOnly, busyTimeout: options.busyTimeout
        )
        let connection = try Connection(path: path, options: openOptions)
        guard options.readOnly else { return connection }
        do {
            _ = try connection.scalarInt("SELECT count(*) FROM sqlite_schema")
            return connection
        } catch {
            switch error {
            case .cannotOpen, .readOnly:
                var wal = stat()
                if stat(path + "-wal", &wal) == 0, wal.st_size > 0 { throw error }
                var immutable = openOptions
                immutable.immutable = true
                return try Connection(path: path, options: immutable)
            default:
                throw error
            }
        }
    }

    /// Throws ``StateStoreError/notAStateStore(file:reason:)`` unless the database is marked as
    /// ours, is empty (a new file), or is an unmarked StateStore database from before the mark
    /// (schema 1 or 2: it has `schema_migrations` and `states`; migration 3 marks it).
    static func requireStateStore(_ connection: Connection) throws(StateStoreError) {
        let id = try connection.scalarInt("PRAGMA application_id") ?? 0
        if id == Int64(applicationID) { return }
        let names = try connection.strings(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
        if id != 0 {
            throw .notAStateStore(file: connection.path, reason: String(
                format: "its application_id is 0x%08X, not StateStore's 0x%08X", UInt32(truncatingIfNeeded: id), UInt32(bitPattern: applicationID)
            ))
        }
        let objects = try connection.scalarInt("SELECT count(*) FROM sqlite_schema") ?? 0
        if objects == 0 { return }
        if names.contains("schema_migrations") && names.contains("states") { return }
        let listed = names.prefix(5).joined(separator: ", ") + (names.count > 5 ? ", ..." : "")
        throw .notAStateStore(file: connection.path, reason: names.isEmpty
            ? "it holds \(objects) schema object(s) and no StateStore tables"
            : "it holds the tables \(listed) and no StateStore schema")
    }
}

/// The words for a file's type, for errors about files that are not regular.
enum FileKind {
    /// `nil` for a regular file, else "a directory", "a FIFO (named pipe)", ...
    static func nonRegular(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }
}
