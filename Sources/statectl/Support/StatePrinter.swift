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

/// Shows a window hierarchy archive. The archive format belongs to the Restoration layer;
/// until `statectl` can decode it, the archive is shown as JSON when it parses, else as bytes.
/// Everything about presenting it lives here, so this is the one place to replace.
enum HierarchyPrinter {
    static func text(archive: Data?, scene: String, setAside: Bool) -> String {
        let which = setAside ? "set-aside hierarchy archive" : "hierarchy archive"
        guard let archive else { return "No \(which) for scene \"\(scene)\"." }
        var lines = ["The \(which) for scene \"\(scene)\" (\(Format.bytes(archive.count))):"]
        if let value = StatePrinter.jsonValue(of: archive) {
            lines.append(value.serialized(pretty: true, sortKeys: true))
        } else {
            lines.append("Not JSON; the first bytes:")
            lines.append(Format.hexDump(archive))
        }
        return lines.joined(separator: "\n")
    }

    static func json(archive: Data?, scene: String, setAside: Bool) -> [(key: String, value: JSON)] {
        var members: [(key: String, value: JSON)] = [
            ("scene", .string(scene)),
            ("set_aside", .bool(setAside)),
            ("found", .bool(archive != nil)),
        ]
        guard let archive else { return members }
        members.append(("byte_count", .int(archive.count)))
        if let value = StatePrinter.jsonValue(of: archive) {
            members.append(("archive", value))
        } else {
            members.append(("archive", .null))
            members.append(("base64", .string(archive.base64EncodedString())))
        }
        return members
    }
}
