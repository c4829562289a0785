import Foundation

/// Writing to stdout and stderr, and the shape shared by every `--json` document.
enum Output {
    /// The version of every `--json` document and of the export format. It changes only
    /// when a document changes incompatibly (a key removed or its meaning changed).
    static let schemaVersion = 1

    /// One line (or a usage message) on stderr.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// A `--json` document: `{"schema": 1, "kind": kind, ...members}`, pretty-printed on stdout.
    static func json(kind: String, _ members: [(key: String, value: JSON)]) {
        print(document(kind: kind, members).serialized(pretty: true))
    }

    static func document(kind: String, _ members: [(key: String, value: JSON)]) -> JSON {
        .object([("schema", .int(schemaVersion)), ("kind", .string(kind))] + members)
    }
}
