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

    // MARK: Writing

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

    private static func newline(_ output: inout [UInt8], indent: Int) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
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
            if items.isEmpty { output.append(contentsOf: "[]".utf8); return }
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&output, indent: indent + 1) }
                item.write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            if pretty { JSON.newline(&output, indent: indent) }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty { output.append(contentsOf: "{}".utf8); return }
            let ordered = sortKeys
                ? members.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(\.element)
                : members
            output.append(UInt8(ascii: "{"))
            for (index, member) in ordered.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&output, indent: indent + 1) }
                JSON.writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                member.value.write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            if pretty { JSON.newline(&output, indent: indent) }
            output.append(UInt8(ascii: "}"))
        }
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

/// Why a JSON text was refused, with the 1-based line and column where.
package struct JSONParseError: Error, CustomStringConvertible {
    package var message: String
    package var line: Int
    package var column: Int
    package var description: String { "\(message) at line \(line), column \(column)" }
}

/// A strict RFC 8259 parser into ``JSON`` that refuses nesting deeper than `maximumDepth`
/// before descending, so a hostile document cannot exhaust the stack.
package struct JSONParser {
    package let bytes: [UInt8]
    package let maximumDepth: Int
    private var index = 0

    package init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Parses one complete JSON text (surrounding whitespace allowed, nothing else).
    package static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes, maximumDepth: Int) throws(JSONParseError) -> JSON {
        // Copied whole when contiguous (`Data`, an array), not byte by byte through an iterator.
        let array = bytes.withContiguousStorageIfAvailable { Array($0) } ?? Array(bytes)
        var parser = JSONParser(bytes: array, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    /// Parses one complete JSON text as ``parse(_:maximumDepth:)`` does, except that the
    /// elements of an array that is the value of a top-level member named in `streamed` are
    /// handed to `element` (with the member's name) as they are parsed, and not kept: that
    /// member's value comes back as an empty array. A document with a long array (an export's
    /// states) is read an element at a time, its value never built whole. Elements handed on
    /// before a failure further in are not a document: a caller that keeps them drops them when
    /// this throws.
    package static func parse(
        _ bytes: [UInt8], maximumDepth: Int, streaming streamed: Set<String>, element: (_ key: String, _ value: JSON) -> Void
    ) throws(JSONParseError) -> JSON {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value: JSON
        if parser.current == UInt8(ascii: "{"), maximumDepth > 0 {
            parser.index += 1
            value = .object(try parser.parseMembers(depth: 1) { (parser, key) throws(JSONParseError) -> JSON in
                guard streamed.contains(key), parser.current == UInt8(ascii: "["), maximumDepth > 1 else {
                    return try parser.parseValue(depth: 1)
                }
                parser.index += 1
                try parser.parseElements(depth: 2) { (parser) throws(JSONParseError) in
                    element(key, try parser.parseValue(depth: 2))
                }
                return .array([])
            })
        } else {
            value = try parser.parseValue(depth: 0)
        }
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private func failure(_ message: String) -> JSONParseError {
        var line = 1, column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        return JSONParseError(message: message, line: line, column: column)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func expect(_ literal: StaticString, _ value: JSON) throws(JSONParseError) -> JSON {
        let count = literal.utf8CodeUnitCount
        let matches = bytes.count - index >= count
            && literal.withUTF8Buffer { $0.elementsEqual(bytes[index..<index + count]) }
        guard matches else { throw failure("invalid literal") }
        index += count
        return value
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < maximumDepth else { throw failure("nesting deeper than \(maximumDepth) levels") }
            return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < maximumDepth else { throw failure("nesting deeper than \(maximumDepth) levels") }
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        index += 1
        return .object(try parseMembers(depth: depth) { (parser, _) throws(JSONParseError) -> JSON in try parser.parseValue(depth: depth) })
    }

    /// The members of the object whose `{` was just read, each value read by `value` (with its
    /// key) from the parser at its first byte, and the object's `}`.
    private mutating func parseMembers(
        depth: Int, _ value: (inout JSONParser, String) throws(JSONParseError) -> JSON
    ) throws(JSONParseError) -> [(key: String, value: JSON)] {
        var members: [(key: String, value: JSON)] = []
        // Keys compared by their UTF-8 bytes: a repeated key is refused, never silently
        // resolved to its first (or last) value. The first few are compared one by one, the
        // rest found in a set made once an object has that many.
        var keys: Set<[UInt8]> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return members }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let keyStart = index
            let key = try parseString()
            let repeated: Bool
            if members.count < 8 {
                repeated = members.contains { $0.key.utf8.count == key.utf8.count && $0.key.utf8.elementsEqual(key.utf8) }
            } else {
                if keys.isEmpty { for member in members { keys.insert(Array(member.key.utf8)) } }
                repeated = !keys.insert(Array(key.utf8)).inserted
            }
            guard !repeated else {
                index = keyStart
                throw failure("the key \(key.debugDescription) appears twice in one object")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected \":\"") }
            index += 1
            skipWhitespace()
            members.append((key, try value(&self, key)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return members
            default: throw failure("expected \",\" or \"}\"")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        index += 1
        var items: [JSON] = []
        try parseElements(depth: depth) { (parser) throws(JSONParseError) in items.append(try parser.parseValue(depth: depth)) }
        return .array(items)
    }

    /// The elements of the array whose `[` was just read, each read by `element` from the
    /// parser at its first byte, and the array's `]`.
    private mutating func parseElements(depth: Int, _ element: (inout JSONParser) throws(JSONParseError) -> Void) throws(JSONParseError) {
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return
            default: throw failure("expected \",\" or \"]\"")
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while let byte = parser.current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { parser.index += 1 }
            return parser.index - from
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits(&self) > 0 else { throw failure("invalid number") }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw failure("invalid number") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("invalid number") }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        // The usual string has no escape: it is the bytes up to the closing quote, taken whole.
        let start = index
        var highBits: UInt8 = 0
        // Scanned through a buffer pointer: a state's long strings are most of a document.
        index = bytes.withUnsafeBufferPointer { buffer in
            var end = start
            while end < buffer.count {
                let byte = buffer[end]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                highBits |= byte
                end += 1
            }
            return end
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            let text = bytes.withUnsafeBufferPointer { buffer -> String? in
                let run = UnsafeBufferPointer(rebasing: buffer[start..<index])
                // ASCII is valid UTF-8 as it is; anything else is validated.
                return highBits < 0x80 ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
            }
            index += 1
            guard let text else { throw failure("invalid UTF-8 in a string") }
            return text
        }
        var buffer = Array(bytes[start..<index])
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: buffer, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { throw failure("unterminated string") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure("unpaired surrogate in a \\u escape") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate in a \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw failure("unpaired surrogate in a \\u escape")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw failure("invalid \\u escape") }
                    buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw failure("invalid escape")
                }
            case 0..<0x20:
                throw failure("unescaped control character in a string")
            default:
                buffer.append(byte)
                index += 1
            }
        }
    }
}
