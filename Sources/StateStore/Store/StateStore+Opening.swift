import Foundation
import Logging

// What `StateStore(path:)` checks before SQLite sees a file, and what it asks of the
// database before it writes anything: a plain path, a regular file, a database that is ours.

extension StateStore {
    /// StateStore's `PRAGMA application_id`, the bytes `StSt` at offset 68 of the file header,
    /// set by `migrations/0003_application_id.sql`. `file(1)` and other tools can tell our
    /// databases from other programs' by it. See <https://www.sqlite.org/pragma.html#pragma_application_id>.
    public static let applicationID: Int32 = 0x5374_5374

    /// Throws ``StateStoreError/invalidDatabasePath(_:reason:)`` when `path` is not a plain file
    /// path ``init(path:options:)`` would open: empty, `":memory:"`, an SQLite URI, a NUL byte, a
    /// trailing `/`. Touches nothing.
    public static func validate(path: String) throws(StateStoreError) {
        try validateDatabasePath(path)
    }

    /// Refuses what SQLite would not treat as a plain file name.
    static func validateDatabasePath(_ path: String) throws(StateStoreError) {
        if path.isEmpty {
            throw .invalidDatabasePath(
                path,
                reason:
                    "it is empty (SQLite would open a temporary database and keep nothing); give a file path, or use StateStore.inMemory()"
            )
        }
        if path == ":memory:" {
            throw .invalidDatabasePath(
                path,
                reason:
                    "it names SQLite's in-memory database, which keeps nothing; give a file path, or use StateStore.inMemory()"
            )
        }
        if path.utf8.count >= 5, path.utf8.prefix(5).map({ $0 | 0x20 }).elementsEqual("file:".utf8) {
            throw .invalidDatabasePath(
                path,
                reason:
                    "it is an SQLite URI; give a plain file path (write ./\(path) for a file whose name starts with \"file:\")"
            )
        }
        if path.utf8.contains(0) {
            throw .invalidDatabasePath(path, reason: "it contains a NUL byte")
        }
        if path.hasSuffix("/") {
            throw .invalidDatabasePath(path, reason: "it ends in \"/\", so it names a folder; add the file's name")
        }
    }

    /// Throws ``StateStoreError/notARegularFile(file:kind:)`` when `path` exists (following
    /// symbolic links) and is anything but a regular file, or when its `-wal`, `-shm` or
    /// `-journal` companion exists and is not a regular file: opening a FIFO blocks until a
    /// writer comes, a device such as `/dev/zero` never ends, and SQLite would write through
    /// a companion that is a symbolic link. A path that cannot be looked at or read is a
    /// ``StateStoreError/fileSystem(_:)`` failure with its `errno`.
    static func requireRegularFileOrNothing(at path: String, readOnly: Bool) throws(StateStoreError) {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else {
                throw .fileSystem(FileSystemFailure(operation: .stat, path: path, errno: errno))
            }
            // A symbolic link to nothing would make SQLite create a file where the link points.
            if lstat(path, &info) == 0 {
                throw .fileSystem(FileSystemFailure(operation: .stat, path: path, errno: ENOENT))
            }
        } else {
            if let kind = FileKind.nonRegular(info.st_mode) { throw .notARegularFile(file: path, kind: kind) }
            if access(path, readOnly ? R_OK : R_OK | W_OK) != 0 {
                throw .fileSystem(FileSystemFailure(operation: .createFile, path: path, errno: errno))
            }
        }
        let base = companionBase(of: path)
        for companion in ["-wal", "-shm", "-journal"] {
            guard lstat(base + companion, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFLNK {
                throw .notARegularFile(file: base + companion, kind: "a symbolic link")
            }
            if let kind = FileKind.nonRegular(info.st_mode) {
                throw .notARegularFile(file: base + companion, kind: kind)
            }
        }
    }

    /// The name SQLite gives the database's `-wal`, `-shm` and `-journal` files: the file's own
    /// path with symbolic links resolved (as SQLite resolves them), so a database opened through
    /// a link is checked by the companions SQLite will use; the path as given when nothing is
    /// there yet.
    static func companionBase(of path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Throws ``StateStoreError/strayJournal(file:journal:)`` when a rollback journal that
    /// SQLite would play back lies beside a database whose header says it uses a WAL (bytes 18
    /// and 19 are 2): it came from another database, copied or renamed beside it, and SQLite
    /// would play it into this file at the first read, before anything could be checked.
    ///
    /// A store's file has one transaction in rollback mode, ever: the switch of a new, empty
    /// database to WAL, before any migration marks it as StateStore's and before any WAL
    /// exists. A power cut during it leaves a journal of its own: it records an empty database
    /// (its original size, bytes 16–19 of the journal's header, is 0 pages) with the header's
    /// page size (bytes 24–27), beside a one-page file with no schema, a header not yet marked,
    /// and no WAL frames. That one is played back, as it must be. Any other (beside a store cut before
    /// its first checkpoint, whose data is all in its WAL, say) is refused: played back, it
    /// would cut the file to nothing. A journal without its header's magic number is not played back.
    static func refuseStrayJournal(at path: String, header: [UInt8]) throws(StateStoreError) {
        guard header.count >= 72, header[18] == 2, header[19] == 2 else { return }
        let base = companionBase(of: path), journal = base + "-journal"
        guard let start = FileKind.readPrefix(of: journal, count: 28), start.count == 28,
            start.prefix(8).elementsEqual([0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7])
        else { return }
        func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 { bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        let originalPages = bigEndian(start[16..<20]), journalPageSize = bigEndian(start[24..<28])
        let headerPageSize = UInt32(header[16]) << 8 | UInt32(header[17])
        let pageSize = headerPageSize == 1 ? 65536 : headerPageSize
        let marked = header[68..<72].contains { $0 != 0 }
        var wal = stat(), file = stat()
        // A WAL of its 32-byte header alone (written as it was made, before any frame) holds nothing.
        let walHolds = lstat(base + "-wal", &wal) == 0 && wal.st_size > 32
        // The switch leaves one page and no schema: its header counts one page (bytes 28–31)
        // and its schema cookie (bytes 40–43) is 0. A file with tables (an older store, not yet
        // marked) never matches, whatever journal lies beside it.
        let onePageNoSchema =
            bigEndian(header[28..<32]) <= 1 && bigEndian(header[40..<44]) == 0
            && stat(path, &file) == 0 && file.st_size <= Int(pageSize)
        if originalPages == 0, journalPageSize == pageSize, !marked, !walHolds, onePageNoSchema { return }
        throw .strayJournal(file: path, journal: journal)
    }

    /// Decides from the file alone, before SQLite opens it for real, whether it is another
    /// program's database: the header's `application_id` (offset 68), and for an unmarked file
    /// its tables, read through an immutable connection that never writes, never takes a lock and
    /// never rolls back a hot journal. A file that is not SQLite at all is left to the open,
    /// which reports it without writing.
    static func requireStateStoreBeforeOpening(_ path: String) throws(StateStoreError) {
        guard let header = FileKind.readPrefix(of: path, count: 100), header.count == 100,
            header.prefix(16).elementsEqual(Array("SQLite format 3\0".utf8))
        else { return }
        let id = header[68..<72].reduce(Int32(0)) { $0 << 8 | Int32($1) }
        if id != 0, id != applicationID { throw notOurs(path, applicationID: id) }
        try refuseCutShort(path, header: header)
        do {
            try refuseStrayJournal(at: path, header: header)
        } catch {
            // Another program's unmarked file is reported as that: the immutable look below
            // plays back no journal.
            if id == 0 {
                try requireStateStore(
                    try Connection(path: path, options: .init(readOnly: true, create: false, immutable: true)))
            }
            throw error
        }
        if id == applicationID { return }
        // With committed pages in a -wal (another connection has the file open, or it was not
        // checkpointed) of a file in WAL mode (header bytes 18 and 19 are 2), the file's own
        // header and tables may predate them: a store made a moment ago still shows
        // application_id 0 there, and an immutable read, which ignores the WAL, could catch a
        // checkpoint half-way. Opening such a file writes nothing to it, so the checks on the
        // real connection, which reads through the WAL, decide. Not with a -journal beside it:
        // SQLite would roll a hot journal back into the file before anything is checked.
        var wal = stat(), journal = stat()
        let base = companionBase(of: path)
        if header[18] == 2, header[19] == 2, stat(base + "-wal", &wal) == 0, wal.st_size > 0,
            lstat(base + "-journal", &journal) != 0
        {
            return
        }
        let peek = try Connection(path: path, options: .init(readOnly: true, create: false, immutable: true))
        try requireStateStore(peek)
    }

    /// Refuses a file that holds fewer pages than its header counts, as SQLite would on reading
    /// it, when nothing beside it could make up the difference (a `-wal` holding pages, a
    /// `-journal` to roll back): a copy or a download cut short. Refused here, before SQLite
    /// opens it, so that nothing appears beside it.
    private static func refuseCutShort(_ path: String, header: [UInt8]) throws(StateStoreError) {
        func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }
        let field = bigEndian(header[16..<18])
        let pageSize = field == 1 ? 65536 : field
        // The header's page count counts when its change counter (bytes 24–27) equals its
        // version-valid-for number (bytes 92–95); the file's pages are its size rounded up,
        // as SQLite counts them (a last page cut short reads as zeros).
        let counted = bigEndian(header[28..<32])
        guard pageSize >= 512, counted > 0, header[24..<28].elementsEqual(header[92..<96]) else { return }
        let base = companionBase(of: path)
        var file = stat(), wal = stat(), journal = stat()
        // The `-wal` before the file: a checkpoint on another process's close writes page 1
        // (the new count) first, grows the file, and removes the `-wal` only after. A `-wal`
        // found gone was gone after the file had grown; one found there is left to SQLite.
        guard !(stat(base + "-wal", &wal) == 0 && wal.st_size > 32), lstat(base + "-journal", &journal) != 0,
            stat(path, &file) == 0
        else { return }
        let held = (Int(file.st_size) + pageSize - 1) / pageSize
        guard held < counted else { return }
        throw .corrupt(
            file: path,
            SQLiteFailure(
                extendedResultCode: .corrupt,
                message:
                    "the file is \(file.st_size) bytes, \(held) of the \(counted) pages of \(pageSize) bytes its header counts"
            ))
    }

    private static func notOurs(_ path: String, applicationID id: Int32) -> StateStoreError {
        .notAStateStore(
            file: path,
            reason: String(
                format: "its application_id is 0x%08X, not StateStore's 0x%08X", UInt32(bitPattern: id),
                UInt32(bitPattern: applicationID)
            ))
    }

    /// Creates missing folders with mode 0700 and a missing file with mode 0600, so SQLite
    /// (which would use 0644) never makes restoration state world-readable. Changes nothing
    /// that exists: a folder others may write to is returned as a warning, and an existing
    /// file is tightened only once it is accepted as ours (``tightenPermissions(of:)``).
    static func prepareFile(at path: String) throws(StateStoreError) -> [String] {
        var warnings: [String] = []
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try makeFolders(folder)
        }
        var folderInfo = stat()
        if stat(folder.isEmpty ? "." : folder, &folderInfo) == 0,
            folderInfo.st_mode & (S_IWGRP | S_IWOTH) != 0, folderInfo.st_mode & S_ISVTX == 0
        {
            warnings.append(
                "the folder \(FileKind.shown(folder.isEmpty ? "." : folder)) is writable by other users (mode \(FileKind.octal(folderInfo.st_mode))), "
                    + "who could replace the database; `chmod go-w` it, or keep the database in a folder of your own"
            )
        }
        // Made when missing, and only then (a file that exists was found readable and writable):
        // closing a descriptor of an existing file would drop the locks a connection of this
        // process holds on it. `O_EXCL`, so that one another thread made meanwhile is not opened.
        guard access(path, F_OK) != 0 else { return warnings }
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return warnings }
            throw .fileSystem(FileSystemFailure(operation: .createFile, path: path, errno: errno))
        }
        close(descriptor)
        // A new file's name lives in its folder's entries (and a new folder's in its parent's):
        // synced now, so a power cut after the first durable save cannot take the file away.
        syncFolder(folder)
        return warnings
    }

    /// Syncs a folder's entries to storage (`fsync` on the folder): best effort, since what it
    /// protects against is a power cut, and the operation itself has already succeeded.
    static func syncFolder(_ folder: String) {
        let descriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Tightens the accepted database and its `-wal`/`-shm` to 0600 when they belong to this
    /// user and others could read them (regular files only; a companion that is a symbolic link
    /// was refused at open). Returns a warning for a file that is not this user's to tighten.
    static func tightenPermissions(of path: String) -> [String] {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o077 != 0 else { return [] }
        guard info.st_uid == geteuid(), chmod(path, 0o600) == 0 else {
            return [
                "\(FileKind.shown(path)) (mode \(FileKind.octal(info.st_mode))) can be read by other users and is not this user's to tighten; ask its owner to `chmod 600` it"
            ]
        }
        for companion in [path + "-wal", path + "-shm"] {
            if lstat(companion, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() {
                chmod(companion, 0o600)
            }
        }
        return []
    }

    /// Creates `folder` and any missing parents with mode 0700 (`mkdir -p`), keeping `errno`.
    private static func makeFolders(_ folder: String) throws(StateStoreError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        let parent = (folder as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != folder { try makeFolders(parent) }
        if mkdir(folder, 0o700) != 0 {
            guard errno == EEXIST else {
                throw .fileSystem(FileSystemFailure(operation: .createFolder, path: folder, errno: errno))
            }
            return
        }
        syncFolder(parent)
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
                let connection = try Connection(path: path, options: immutable)
                options.logger.info(
                    "database read as immutable",
                    metadata: [
                        "statestore.database": "\(path)", "statestore.reason": "\(error.description)",
                    ])
                return connection
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
        if id != 0 { throw notOurs(connection.path, applicationID: Int32(truncatingIfNeeded: id)) }
        let objects = try connection.scalarInt("SELECT count(*) FROM sqlite_schema") ?? 0
        if objects == 0 { return }
        // Before schema 3 our databases were unmarked: recognised by their bookkeeping and
        // states tables having exactly StateStore's columns (another program may well have
        // tables of those names).
        if names.contains("schema_migrations"), names.contains("states"),
            try columns(of: "schema_migrations", in: connection) == ["version", "name", "applied_at"],
            try columns(of: "states", in: connection) == [
                "path", "type_name", "version", "generation", "encoding", "checksum", "updated_at", "bytes",
            ]
        {
            return
        }
        let listed = names.prefix(5).joined(separator: ", ") + (names.count > 5 ? ", ..." : "")
        throw .notAStateStore(
            file: connection.path,
            reason: names.isEmpty
                ? "it holds \(objects) schema object(s) and no StateStore tables"
                : "it holds the tables \(listed) and no StateStore schema")
    }
}

extension StateStore {
    private static func columns(of table: String, in connection: Connection) throws(StateStoreError) -> [String] {
        let statement = try Statement(
            connection: connection, sql: "SELECT name FROM pragma_table_info(?1) ORDER BY cid", persistent: false)
        statement.bind(table, at: 1)
        var names: [String] = []
        while try statement.step() { names.append(statement.string(0)) }
        return names
    }
}

/// The words for a file's type, for errors about files that are not regular.
enum FileKind {
    /// The first `count` bytes of a regular file, read without blocking (a FIFO is not read);
    /// `nil` when it is missing, unreadable or not a regular file.
    static func readPrefix(of path: String, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, 0) }
        guard read >= 0 else { return nil }
        return Array(bytes.prefix(read))
    }

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

    /// A path in a message: as it is, or quoted with escapes when it holds a control character.
    static func shown(_ path: String) -> String {
        path.unicodeScalars.contains { $0.properties.generalCategory == .control } ? path.debugDescription : path
    }

    static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }
}
