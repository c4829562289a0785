import Foundation

// Writing: a value as compact or pretty JSON text, keys in their order or sorted.
extension JSON {
    /// Serialises the value. Compact output has no whitespace at all; pretty output
    /// indents by two spaces. `sortKeys` sorts object members by key (stable for duplicates).
    package func serialized(pretty: Bool = false, sortKeys: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty, sortKeys: sortKeys), as: UTF8.self)
    }

    /// ``serialized(pretty:sortKeys:)`` as UTF-8 bytes, written into one growing buffer: runs
    /// of text that need no escape are copied whole (an export writes every state this way).
    package func serializedBytes(pretty: Bool = false, sortKeys: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: 0)
        return output
    }

    /// Writes one pretty-printed top-level object a member at a time, with exactly the bytes
    /// ``serializedBytes(pretty:sortKeys:)`` gives the whole object (unsorted), then a newline:
    /// a document with a long array (every state, every entry) is written an element at a
    /// time, never held whole, nor its value built. What is written waits in ``pending`` until
    /// the caller takes it (``take(_:)``).
    package struct ObjectWriter {
        /// Written and not yet taken.
        package private(set) var pending: [UInt8] = [UInt8(ascii: "{")]
        private var firstMember = true
        /// Elements of the open array; `nil` when no array is open.
        private var elements: Int?

        package init() {}

        private mutating func key(_ name: String) {
            precondition(elements == nil, "a member written inside an open array")
            pending.append(contentsOf: (firstMember ? "\n  " : ",\n  ").utf8)
            firstMember = false
            JSON.writeString(name, to: &pending)
            pending.append(contentsOf: ": ".utf8)
        }

        /// The member `name` with `value`.
        package mutating func member(_ name: String, _ value: JSON) {
            key(name)
            value.write(to: &pending, pretty: true, indent: 1)
        }

        /// Opens the array member `name` whose `count` elements the caller writes apart, each
        /// with ``writeElement(_:after:to:)``, and hands on after what is ``pending`` (taken with
        /// ``take(_:)``); ``endArray()`` then closes it. The elements of a long array are gathered
        /// (or counted) apart, and a member ahead of the array can give their count.
        package mutating func beginArray(_ name: String, writtenApart count: Int) {
            key(name)
            elements = count
        }

        /// Appends to `output` element `index` of an array opened with
        /// ``beginArray(_:writtenApart:)``: `value`, after its `[` or `,`.
        package static func writeElement(_ value: JSON, after index: Int, to output: inout [UInt8]) {
            output.append(contentsOf: (index == 0 ? "[\n    " : ",\n    ").utf8)
            value.write(to: &output, pretty: true, indent: 2)
        }

        package mutating func endArray() {
            guard let count = elements else { preconditionFailure("no array is open") }
            pending.append(contentsOf: (count == 0 ? "[]" : "\n  ]").utf8)
            elements = nil
        }

        /// Closes the object, and the document's line.
        package mutating func end() {
            precondition(elements == nil, "the object ended inside an open array")
            pending.append(contentsOf: (firstMember ? "}\n" : "\n}\n").utf8)
        }

        /// Hands what is pending to `sink` and forgets it (keeping the buffer's room).
        package mutating func take(_ sink: (borrowing [UInt8]) -> Void) {
            sink(pending)
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// A newline and the spaces of the deepest indent a document of ``JSONParser``'s usual
    /// depths reaches, appended as one slice.
    private static let newlineAndSpaces: [UInt8] =
        [UInt8(ascii: "\n")] + Array(repeating: UInt8(ascii: " "), count: 256)

    static func newline(_ output: inout [UInt8], indent: Int) {
        let count = 1 + 2 * indent
        if count <= newlineAndSpaces.count {
            newlineAndSpaces.withUnsafeBufferPointer {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count]))
            }
        } else {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
        }
    }

    /// Appends the value to `output` as ``serializedBytes(pretty:sortKeys:)`` writes it at
    /// `indent` levels deep (the indent of the lines after its first).
    package func write(to output: inout [UInt8], pretty: Bool, sortKeys: Bool = false, indent: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): JSON.appendUTF8(text, to: &output)
        case .string(let text): JSON.writeString(text, to: &output)
        case .array(let items):
            if items.isEmpty {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&output, indent: indent + 1) }
                item.write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            if pretty { JSON.newline(&output, indent: indent) }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                output.append(contentsOf: "{}".utf8)
                return
            }
            let ordered =
                sortKeys
                ? members.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(
                    \.element)
                : members
            output.append(UInt8(ascii: "{"))
            for (index, member) in ordered.enumerated() {
                JSON.writeKey(member.key, after: index, pretty: pretty, indent: indent, to: &output)
                member.value.write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            JSON.writeEnd(UInt8(ascii: "}"), pretty: pretty, indent: indent, to: &output)
        }
    }

    /// Appends what comes before the value of member `index` of an object written at `indent`:
    /// its separator, its line, its key and colon.
    static func writeKey(_ key: String, after index: Int, pretty: Bool, indent: Int, to output: inout [UInt8]) {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        if pretty { JSON.newline(&output, indent: indent + 1) }
        JSON.writeString(key, to: &output)
        output.append(UInt8(ascii: ":"))
        if pretty { output.append(UInt8(ascii: " ")) }
    }

    /// Appends the closing `bracket` of a non-empty array or object written at `indent`.
    static func writeEnd(_ bracket: UInt8, pretty: Bool, indent: Int, to output: inout [UInt8]) {
        if pretty { JSON.newline(&output, indent: indent) }
        output.append(bracket)
    }

    private static func appendUTF8(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { output.append(contentsOf: $0) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes `text` as a JSON string: `"` and `\` escaped, the usual short escapes for
    /// control characters, `\u00XX` for the rest of them, everything else as UTF-8 (bytes of
    /// 0x80 and above are never control characters: the runs between escapes are copied whole).
    package static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                index += 1
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index - 1]))
                runStart = index
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                default:
                    output.append(contentsOf: "u00".utf8)
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0xF)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
