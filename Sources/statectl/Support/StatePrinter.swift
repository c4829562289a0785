import Foundation

/// Reading stored bytes as JSON, for display and export.
enum StatePrinter {
    /// Nesting limit when showing a state; deeper states are shown as bytes.
    static let displayDepth = 256

    /// The bytes as a JSON value, or `nil` when they are not JSON.
    static func jsonValue(of bytes: Data, maximumDepth: Int = displayDepth) -> JSON? {
        try? JSONParser.parse(bytes, maximumDepth: maximumDepth)
    }

    /// The bytes as a JSON value only when writing that value compactly gives back exactly
    /// the same bytes, so an export can embed it and an import restore it byte for byte.
    static func exactJSONValue(of bytes: Data, maximumDepth: Int) -> JSON? {
        guard let value = jsonValue(of: bytes, maximumDepth: maximumDepth) else { return nil }
        return Data(value.serialized().utf8) == bytes ? value : nil
    }
}
