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
                snapshot, to stdout or to --output FILE. The file is written atomically (a \
                temporary file in the same folder, synced, then renamed over FILE) with mode 0600.

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

        func run() throws {
            let store = try database.openReadOnly()
            let states = try store.states()
            let document = ExportDocument.make(
                states: states, databaseSchemaVersion: store.schemaVersion, exportedAt: Date()
            )
            let text = document.serialized(pretty: true) + "\n"
            guard let output else {
                Output.standardOutput(text)
                return
            }
            try AtomicFile.write(Data(text.utf8), to: output)
            let total = states.reduce(0) { $0 + $1.bytes.count }
            print("Exported \(states.count) \(states.count == 1 ? "state" : "states") (\(Format.bytes(total))) to \(output).")
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
