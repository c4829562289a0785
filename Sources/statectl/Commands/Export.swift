import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl export [--output FILE]`: every state as one JSON document.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every stored state as one JSON document.",
            discussion: """
                Opens the database read-only and writes a JSON document of every state, in one \
                snapshot, to stdout or to --output FILE. A new or regular FILE is written atomically \
                (a temporary file in the same folder, synced, then renamed over FILE) with mode \
                0600; a symbolic link is followed and the file it names replaced; an existing FIFO \
                or character device (/dev/stdout) is written through, never replaced; a directory \
                or any other kind of file is refused.

                What export writes, import accepts: a state over --max-state-size (1 MiB, the \
                library's default limit; give the application's own limit to both commands), a row \
                whose path is not a valid restoration path, or a document over import's 256 MiB \
                limit is refused up front, naming the rows, and nothing is written.

                Each state carries path, type_name, version, generation, encoding, updated_at, \
                checksum (XXH64, 16 hex digits) and byte_count, and either "value" (the state \
                itself, when its bytes are JSON) or "base64" (any other bytes). The document has \
                "schema": 1, "kind": "export" and "database_schema_version". `statectl import` \
                reads it back and reproduces every row. Quarantined rows (see `statectl inspect \
                --quarantine`) are carried under "quarantine" with their reason, quarantined_at \
                and their bytes (left out, with byte_count, over --max-state-size), for the \
                record: import does not bring them back.

                Sealed states are written as they are stored: "base64" of the sealed bytes beside \
                their "key_id", so the document is no more readable than the database. With \
                --clear and the key (--key-file or --credential) they are written clear instead.

                Example:
                  statectl export --db ./state.sqlite --output backup.json
                  statectl import --db ./restored.sqlite backup.json
                """
        )

        @OptionGroup var database: DatabaseOptions

        @Option(
            name: .shortAndLong,
            help: ArgumentHelp("Write the document to this file instead of stdout.", valueName: "file"),
            completion: .file())
        var output: String?

        @OptionGroup var limit: StateSizeOptions
        @OptionGroup var key: KeyOptions

        @Flag(help: "Write sealed states clear, opened with the key given (--key-file or --credential).")
        var clear = false

        func validate() throws {
            if clear && key.keyFile == nil && key.credential == nil {
                throw ValidationError("--clear needs the key the states are sealed with: --key-file or --credential.")
            }
        }

        func run() throws {
            let maximumStateSize = Int(limit.maximumStateSize.bytes)
            // The output is checked before the database is read, and nothing is written unless
            // `statectl import` would take the whole document.
            let target = try output.map { (path) throws(CLIError) in try OutputTarget(path, protecting: database.path) }
            let store = try database.openReadOnly(sealer: try key.keyring())
            // Read from one snapshot a state at a time, the document gathered (it is at most
            // import's limit) and written once it is whole and checked: nothing is written unless
            // import would take all of it, and a reader that stalls does not hold the snapshot.
            var document = GatheredOutput()
            let written: StateExport.Written
            do {
                written = try StateExport.write(store: store, maximumStateSize: maximumStateSize, unsealed: clear) {
                    document.append($0)
                }
            } catch {
                throw CLIError.exporting(error, limit: limit.maximumStateSize)
            }
            guard let target else {
                fflush(nil)
                let failure = document.write(to: STDOUT_FILENO)
                // A reader that left (`| head`) is not a failure; a full disk or a closed stdout is.
                if failure != 0 && failure != EPIPE {
                    throw CLIError(
                        message:
                            "Cannot write the document to stdout: \(String(cString: strerror(failure))). The export is incomplete."
                    )
                }
                return
            }
            try target.write(document)
            print(
                "Exported \(written.stateCount) \(written.stateCount == 1 ? "state" : "states") (\(Format.bytes(written.stateBytes))) to \(target.path)."
                    + (written.sealedCount > 0 ? " \(written.sealedCount) of them are sealed, as stored." : ""))
        }
    }
}

/// Where `--output` writes, decided before anything is read: a regular file (or a new one) is
/// replaced atomically; a symbolic link is followed, and the file it names replaced, so the link
/// stays; `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` are the descriptor
/// itself, written as the shell opened it (appending, for `>>`); a FIFO or a character device is
/// written through, since replacing it would put a regular file where a device was. A directory,
/// anything else, and the database being read (or its `-wal`, `-shm`, `-journal`) are refused.
struct OutputTarget {
    enum Kind {
        case replace, writeThrough
        case descriptor(Int32)
    }
    let path: String
    let kind: Kind
    /// The file actually written when it is replaced: `path` with symbolic links resolved.
    let resolved: String

    init(_ path: String, protecting database: String) throws(CLIError) {
        self.path = path
        let source = Self.canonical(database)
        func refuseIfDatabase(_ info: stat?, canonical: String?) throws(CLIError) {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                var file = stat()
                let sameInode =
                    info.map { info in
                        stat(source + suffix, &file) == 0 && file.st_dev == info.st_dev && file.st_ino == info.st_ino
                    } ?? false
                if sameInode || canonical == source + suffix {
                    throw CLIError(
                        message:
                            "Cannot write \(path): it is the database being exported\(suffix.isEmpty ? "" : " (its \(suffix) file)"); give another file. Nothing was exported."
                    )
                }
            }
        }
        if let descriptor = Self.descriptor(named: path) {
            // A descriptor opened on the database itself (`-o /dev/fd/7 7<>state.sqlite`).
            var info = stat()
            try refuseIfDatabase(fstat(descriptor, &info) == 0 ? info : nil, canonical: nil)
            kind = .descriptor(descriptor)
            resolved = path
            return
        }
        let target = Self.canonical(path)
        var existing = stat()
        try refuseIfDatabase(stat(path, &existing) == 0 ? existing : nil, canonical: target)
        var info = stat()
        guard stat(path, &info) == 0 else {
            var link = stat()
            if lstat(path, &link) == 0 {
                throw CLIError(
                    message:
                        "Cannot write \(path): it is a symbolic link whose target does not exist. Nothing was exported."
                )
            }
            kind = .replace
            resolved = path
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            kind = .replace
            resolved = target
        case S_IFIFO, S_IFCHR:
            // Opened by its own name: a link into /proc is only followed right by open(2).
            kind = .writeThrough
            resolved = path
        default:
            let what =
                info.st_mode & S_IFMT == S_IFDIR
                ? "a directory" : "neither a regular file, a FIFO nor a character device"
            throw CLIError(message: "Cannot write \(path): it is \(what). Nothing was exported.")
        }
    }

    /// The descriptor `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N` stands for.
    static func descriptor(named path: String) -> Int32? {
        switch path {
        case "/dev/stdout": return STDOUT_FILENO
        case "/dev/stderr": return STDERR_FILENO
        default:
            for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
                if let number = Int32(path.dropFirst(prefix.count)), number >= 0, fcntl(number, F_GETFD) != -1 {
                    return number
                }
            }
            return nil
        }
    }

    /// `path` with symbolic links and `..` resolved; for a file that does not exist yet, its
    /// folder resolved and its name appended.
    static func canonical(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let folder = (path as NSString).deletingLastPathComponent
        guard let real = realpath(folder.isEmpty ? "." : folder, nil) else { return path }
        defer { free(real) }
        return String(cString: real) + "/" + (path as NSString).lastPathComponent
    }

    func write(_ document: GatheredOutput) throws(CLIError) {
        switch kind {
        case .replace:
            try AtomicFile.write(document, to: resolved)
        case .descriptor(let descriptor):
            let failure = document.write(to: descriptor)
            if failure != 0 {
                throw CLIError(
                    message: "Cannot write \(path): \(String(cString: strerror(failure))). The document is incomplete.")
            }
        case .writeThrough:
            let descriptor = open(resolved, O_WRONLY | O_CLOEXEC | O_NOCTTY)
            guard descriptor >= 0 else {
                throw CLIError(message: "Cannot write \(path): \(String(cString: strerror(errno))).")
            }
            defer { close(descriptor) }
            let failure = document.write(to: descriptor)
            if failure != 0 {
                throw CLIError(
                    message: "Cannot write \(path): \(String(cString: strerror(failure))). The document is incomplete.")
            }
        }
    }
}

/// Writes a file so that readers see the old contents or the new, never a part.
enum AtomicFile {
    static func write(_ document: GatheredOutput, to path: String, mode: mode_t = 0o600) throws(CLIError) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var template = Array("\(folder)/.\(url.lastPathComponent).tmp-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else {
            throw CLIError(
                message:
                    "Cannot write \(path): \(String(cString: strerror(errno))). Check that the folder exists and is writable."
            )
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var failure: String?
        fchmod(descriptor, mode)
        let written = document.write(to: descriptor)
        if written != 0 { failure = String(cString: strerror(written)) }
        if failure == nil && fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        close(descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
        if failure == nil {
            // The rename lives in the folder's entries: until the folder is synced, a power cut can
            // bring back the old file (or no file). Best effort: the new document is already in place.
            let folderDescriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if folderDescriptor >= 0 {
                _ = fsync(folderDescriptor)
                close(folderDescriptor)
            }
        }
        if let failure {
            unlink(temporary)
            throw CLIError(message: "Cannot write \(path): \(failure). The previous file, if any, is unchanged.")
        }
    }
}
