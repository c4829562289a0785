import Foundation

/// A JSON value that keeps what a byte-exact round trip needs: object keys in their
/// order (duplicates included) and numbers as their literal text.
///
/// ``StateExport`` writes and reads its documents with it, through ``JSONParser``, which caps
/// nesting depth. Visible to the package's own executables (`statectl` writes every JSON
/// document with it, so key order and formatting are stable), not to the library's clients.
package enum JSON {
    case null
    case bool(Bool)
    /// The number's literal text, exactly as written (`1`, `-0.5`, `1e300`).
    case number(String)
    case string(String)
    case array([JSON])
    case object([(key: String, value: JSON)])

    package static func int<I: BinaryInteger>(_ value: I) -> JSON { .number(String(value)) }

    package static func strings(_ values: [String]) -> JSON { .array(values.map(JSON.string)) }

    /// The value for `key` in an object (the first, if repeated).
    package subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A short name of the kind of value, for error messages.
    package var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
