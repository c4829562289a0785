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
                reads it back and reproduces every row.

                Example:
                  statectl export --db ./state.sqlite --output backup.json
                  statectl import --db ./restored.sqlite backup.json
                """
        )

        @OptionGroup var database: DatabaseOptions

        @Option(name: .shortAndLong, help: ArgumentHelp("Write the document to this file instead of stdout.", valueName: "file"),
                completion: .file())
        var output: String?

        @OptionGroup var limit: StateSizeOptions

        func run() throws {
            let maximumStateSize = Int(limit.maximumStateSize.bytes)
            // The output is checked before the database is read, and nothing is written unless
            // `statectl import` would take the whole document.
            let target = try output.map { (path) throws(CLIError) in try OutputTarget(path) }
            let store = try database.openReadOnly()
            let invalid = try store.invalidRows()
            if !invalid.isEmpty {
                throw CLIError(message: "\(invalid.count) row(s) have a path that is not a valid restoration path (rowid \(invalid.map { String($0.rowID) }.joined(separator: ", "))), which import would refuse; `statectl inspect` lists them and `statectl prune --invalid-paths` removes them. Nothing was exported.")
            }
            let oversize = try store.entries().filter { $0.byteCount > maximumStateSize }
            if !oversize.isEmpty {
                let listed = oversize.prefix(5).map { "\($0.path) (\(Format.bytes($0.byteCount)))" }.joined(separator: ", ")
                throw CLIError(message: "\(oversize.count) state(s) are larger than --max-state-size \(limit.maximumStateSize) (\(listed)\(oversize.count > 5 ? ", ..." : "")); give a larger --max-state-size to export and to import alike. Nothing was exported.")
            }
            let states = try store.states(maximumSize: maximumStateSize)
            let document = ExportDocument.make(
                states: states, databaseSchemaVersion: store.schemaVersion, exportedAt: Date()
            )
            let text = document.serialized(pretty: true) + "\n"
            guard text.utf8.count <= ExportDocument.maximumFileSize else {
                throw CLIError(message: "The document would be \(Format.bytes(text.utf8.count)), over the \(Format.bytes(ExportDocument.maximumFileSize)) import accepts; export part of the states (`statectl prune` others in a copy), or keep large data outside the store. Nothing was exported.")
            }
            guard let target else {
                Output.standardOutput(text)
                return
            }
            try target.write(Data(text.utf8))
            let total = states.reduce(0) { $0 + $1.bytes.count }
            print("Exported \(states.count) \(states.count == 1 ? "state" : "states") (\(Format.bytes(total))) to \(target.path).")
        }
    }
}

/// Where `--output` writes, decided before anything is read: a regular file (or a new one) is
/// replaced atomically; a symbolic link is followed, and the file it names replaced, so the link
/// stays; a FIFO or a character device (`/dev/stdout`, a terminal) is written through, since
/// replacing it would put a regular file where a device was; anything else is refused.
struct OutputTarget {
    enum Kind { case replace, writeThrough }
    let path: String
    let kind: Kind

    init(_ path: String) throws(CLIError) {
        self.path = path
        var info = stat()
        guard stat(path, &info) == 0 else {
            var link = stat()
            if lstat(path, &link) == 0 {
                throw CLIError(message: "Cannot write \(path): it is a symbolic link whose target does not exist. Nothing was exported.")
            }
            kind = .replace
            resolved = path
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            kind = .replace
            guard let real = realpath(path, nil) else {
                throw CLIError(message: "Cannot write \(path): \(String(cString: strerror(errno))). Nothing was exported.")
            }
            resolved = String(cString: real)
            free(real)
        case S_IFIFO, S_IFCHR:
            // Opened by its own name: /dev/stdout is a link into /proc that only open(2) follows right.
            kind = .writeThrough
            resolved = path
        default:
            let what = info.st_mode & S_IFMT == S_IFDIR ? "a directory" : "neither a regular file, a FIFO nor a character device"
            throw CLIError(message: "Cannot write \(path): it is \(what). Nothing was exported.")
        }
    }

    /// The file actually written: `path` with symbolic links resolved when it is replaced.
    let resolved: String

    func write(_ data: Data) throws(CLIError) {
        switch kind {
        case .replace: try AtomicFile.write(data, to: resolved)
        case .writeThrough:
            let descriptor = open(resolved, O_WRONLY | O_CLOEXEC | O_NOCTTY)
            guard descriptor >= 0 else {
                throw CLIError(message: "Cannot write \(path): \(String(cString: strerror(errno))).")
            }
            defer { close(descriptor) }
            var failure: Int32 = 0
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    offset += written
                }
            }
            if failure != 0 { throw CLIError(message: "Cannot write \(path): \(String(cString: strerror(failure))).") }
        }
    }
}

/// Writes a file so that readers see the old contents or the new, never a part.
enum AtomicFile {
    static func write(_ data: Data, to path: String, mode: mode_t = 0o600) throws(CLIError) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var template = Array("\(folder)/.\(url.lastPathComponent).tmp-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else {
            throw CLIError(message: "Cannot write \(path): \(String(cString: strerror(errno))). Check that the folder exists and is writable.")
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var failure: String?
        fchmod(descriptor, mode)
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                offset += written
            }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        close(descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw CLIError(message: "Cannot write \(path): \(failure). The previous file, if any, is unchanged.")
        }
    }
}
