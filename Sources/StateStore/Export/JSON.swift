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

    /// A newline and the spaces of the deepest indent a document of ``JSONParser``'s usual
    /// depths reaches, appended as one slice.
    private static let newlineAndSpaces: [UInt8] = [UInt8(ascii: "\n")] + Array(repeating: UInt8(ascii: " "), count: 256)

    static func newline(_ output: inout [UInt8], indent: Int) {
        let count = 1 + 2 * indent
        if count <= newlineAndSpaces.count {
            newlineAndSpaces.withUnsafeBufferPointer { output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count])) }
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
        try whole(bytes, maximumDepth: maximumDepth) { (parser) throws(JSONParseError) in try parser.parseValue(depth: 0) }
    }

    /// Reads one complete JSON text with `read`: whitespace around it allowed, nothing else.
    private static func whole<T>(
        _ bytes: some Collection<UInt8>, maximumDepth: Int, _ read: (inout JSONParser) throws(JSONParseError) -> T
    ) throws(JSONParseError) -> T {
        // Copied whole when contiguous (`Data`, an array), not byte by byte through an iterator.
        let array = bytes.withContiguousStorageIfAvailable { Array($0) } ?? Array(bytes)
        var parser = JSONParser(bytes: array, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try read(&parser)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    /// One element of a streamed array, or a text parsed by ``parse(_:maximumDepth:copying:)``:
    /// its value, and the compact text of its member named `copying` when it is an object that
    /// has one.
    package struct Element {
        /// The element, the copied member's value left out.
        package var value: JSON
        /// The copied member's value, as ``JSON/serializedBytes(pretty:sortKeys:)`` writes it
        /// compact; `nil` when the element has no such member.
        package var copied: [UInt8]?
    }

    /// Parses one complete JSON text as ``parse(_:maximumDepth:)`` does, except that when it
    /// is an object, its member named `member` is not built: its value is checked as the parser
    /// checks it and copied compact (``copy(_:maximumDepth:prettyIndent:to:)``) into
    /// ``Element/copied``. An export state's `value` is read this way: what a decoder stores is
    /// those bytes, so building the value would only be undone.
    package static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int, copying member: String) throws(JSONParseError) -> Element {
        try whole(bytes, maximumDepth: maximumDepth) { (parser) throws(JSONParseError) in try parser.parseElement(depth: 0, copying: member) }
    }

    /// Parses one complete JSON text as ``parse(_:maximumDepth:)`` does, except that the
    /// elements of an array that is the value of a top-level member named in `streamed` are
    /// handed to `element` (with the member's name) as they are parsed, and not kept: that
    /// member's value comes back as an empty array. A document with a long array (an export's
    /// states) is read an element at a time, its value never built whole. The member of an
    /// element named `copying` is read as ``parse(_:maximumDepth:copying:)`` reads it. Elements
    /// handed on before a failure further in are not a document: a caller that keeps them drops
    /// them when this throws.
    package static func parse(
        _ bytes: [UInt8], maximumDepth: Int, streaming streamed: Set<String>, copying member: String,
        element: (_ key: String, _ value: Element) -> Void
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
                    element(key, try parser.parseElement(depth: 2, copying: member))
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

    /// ``parseValue(depth:)``, an object's member named `member` copied compact, not built.
    private mutating func parseElement(depth: Int, copying member: String) throws(JSONParseError) -> Element {
        guard current == UInt8(ascii: "{"), depth < maximumDepth else { return Element(value: try parseValue(depth: depth)) }
        index += 1
        var copied: [UInt8]?
        // Keys are told apart by their bytes, as the parser tells repeated ones (`String`'s `==`
        // would take a canonically equivalent key for the member).
        let members = try parseMembers(depth: depth + 1) { (parser, key) throws(JSONParseError) -> JSON in
            guard Self.sameBytes(key, member) else { return try parser.parseValue(depth: depth + 1) }
            var copier = Copier(pretty: false, capacity: 256)
            try parser.copyValue(depth: depth + 1, indent: 0, &copier)
            copied = copier.output.withBytes { Array($0) }
            return .null
        }
        return Element(value: .object(members.filter { !Self.sameBytes($0.key, member) }), copied: copied)
    }

    /// Whether two strings are the same UTF-8 bytes (not merely canonically equivalent).
    private static func sameBytes(_ first: String, _ second: String) -> Bool {
        guard first.utf8.count == second.utf8.count else { return false }
        var first = first, second = second
        return first.withUTF8 { one in second.withUTF8 { other in one.count == 0 || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0 } }
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
        // Through a buffer pointer: a pretty document's indentation is a third of its bytes.
        index = bytes.withUnsafeBufferPointer { buffer in
            var index = index
            while index < buffer.count {
                let byte = buffer[index]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { break }
                index += 1
            }
            return index
        }
    }

    private mutating func expect(_ literal: StaticString, _ value: JSON) throws(JSONParseError) -> JSON {
        let count = literal.utf8CodeUnitCount
        let matches = bytes.count - index >= count
            && bytes.withUnsafeBufferPointer { memcmp($0.baseAddress! + index, literal.utf8Start, count) == 0 }
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
            if members.count < 16 {
                repeated = members.contains { Self.sameBytes($0.key, key) }
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
        .number(String(decoding: bytes[try scanNumber()], as: UTF8.self))
    }

    /// Reads a number's text by the grammar of RFC 8259, returning where it is.
    private mutating func scanNumber() throws(JSONParseError) -> Range<Int> {
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
        return start..<index
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

// MARK: Copying without building

extension JSONParser {
    /// Copies one complete JSON text into `output` as ``JSON/serializedBytes(pretty:sortKeys:)``
    /// writes its value, without building the value: compact, or pretty with the lines after
    /// the first `indent` levels deep (as ``JSON/write(to:pretty:sortKeys:indent:)`` writes a
    /// value at that indent). It accepts and refuses exactly what ``parse(_:maximumDepth:)``
    /// does, with the same error at the same place; on an error, `output` is as it was.
    ///
    /// Returns whether `bytes` are already the compact text of their value: no whitespace, each
    /// string escaped as ``JSON/writeString(_:to:)`` escapes it. An export embeds a state's
    /// JSON only then (so import gives back the same bytes), and writes it pretty in the same
    /// pass.
    package static func copy(
        _ bytes: some Collection<UInt8>, maximumDepth: Int, prettyIndent: Int? = nil, to output: inout [UInt8]
    ) throws(JSONParseError) -> Bool {
        precondition((prettyIndent ?? 0) >= 0, "a negative indent")
        let array = bytes.withContiguousStorageIfAvailable { Array($0) } ?? Array(bytes)
        var parser = JSONParser(bytes: array, maximumDepth: maximumDepth)
        var copier = Copier(pretty: prettyIndent != nil, capacity: array.count + array.count / 2)
        parser.skipWhitespace(noting: &copier)
        try parser.copyValue(depth: 0, indent: prettyIndent ?? 0, &copier)
        parser.skipWhitespace(noting: &copier)
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        copier.output.withBytes { output.append(contentsOf: $0) }
        return copier.isCompact
    }

    /// A copy's output and layout, and what it found about its source.
    private struct Copier: ~Copyable {
        let pretty: Bool
        var output: ByteBuffer
        /// Whether the source has been its compact text so far.
        var isCompact = true
        /// Where the keys of the objects being copied are written, innermost last: the first
        /// `keyCount` (the rest is room kept from objects that have ended).
        var keys: [Range<Int>] = []
        var keyCount = 0

        /// Whether a key from `first` on the stack has the bytes at `key`.
        func hasKey(_ key: Range<Int>, from first: Int) -> Bool {
            var index = first
            while index < keyCount {
                if output.equal(keys[index], key) { return true }
                index += 1
            }
            return false
        }

        @inline(__always)
        mutating func pushKey(_ key: Range<Int>) {
            if keyCount < keys.count { keys[keyCount] = key } else { keys.append(key) }
            keyCount += 1
        }

        init(pretty: Bool, capacity: Int) {
            self.pretty = pretty
            output = ByteBuffer(capacity: capacity)
        }

        /// A newline and the indent of `level` (nothing when compact).
        @inline(__always)
        mutating func newline(indent level: Int) {
            guard pretty else { return }
            output.append(UInt8(ascii: "\n"))
            output.append(repeating: UInt8(ascii: " "), count: 2 * level)
        }
    }

    @inline(__always)
    private mutating func skipWhitespace(noting copier: inout Copier) {
        // Compact text has none: one look.
        if index < bytes.count, bytes[index] > 0x20 { return }
        let start = index
        skipWhitespace()
        if index != start { copier.isCompact = false }
    }

    /// ``parseValue(depth:)``, appending the value's text to the copier's output instead of
    /// building it.
    private mutating func copyValue(depth: Int, indent: Int, _ copier: inout Copier) throws(JSONParseError) {
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < maximumDepth else { throw failure("nesting deeper than \(maximumDepth) levels") }
            index += 1
            try copyMembers(depth: depth + 1, indent: indent, &copier)
        case UInt8(ascii: "["):
            guard depth < maximumDepth else { throw failure("nesting deeper than \(maximumDepth) levels") }
            index += 1
            try copyElements(depth: depth + 1, indent: indent, &copier)
        case UInt8(ascii: "\""): try copyString(&copier)
        case UInt8(ascii: "t"): try copyLiteral("true", &copier)
        case UInt8(ascii: "f"): try copyLiteral("false", &copier)
        case UInt8(ascii: "n"): try copyLiteral("null", &copier)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try scanNumber()
            bytes.withUnsafeBufferPointer { copier.output.append(UnsafeBufferPointer(rebasing: $0[number])) }
        default: throw failure("unexpected character")
        }
    }

    /// ``expect(_:_:)``, appending the literal.
    private mutating func copyLiteral(_ literal: StaticString, _ copier: inout Copier) throws(JSONParseError) {
        _ = try expect(literal, .null)
        literal.withUTF8Buffer { copier.output.append($0) }
    }

    /// Writes the `open` bracket just read; when `close` follows (an empty object or array),
    /// reads it and writes it too, and returns `false`: nothing is left to copy.
    private mutating func copyOpening(_ open: UInt8, _ close: UInt8, _ copier: inout Copier) -> Bool {
        skipWhitespace(noting: &copier)
        copier.output.append(open)
        guard current == close else { return true }
        index += 1
        copier.output.append(close)
        return false
    }

    /// ``parseMembers(depth:_:)``: keys are compared by their written bytes, which are as
    /// distinct as their UTF-8 (each string has one written form).
    private mutating func copyMembers(depth: Int, indent: Int, _ copier: inout Copier) throws(JSONParseError) {
        guard copyOpening(UInt8(ascii: "{"), UInt8(ascii: "}"), &copier) else { return }
        // This object's keys are on the copier's stack from `first` (taken off when it ends);
        // past 16 of them, also in a set.
        let first = copier.keyCount
        var keySet: Set<[UInt8]> = []
        while true {
            skipWhitespace(noting: &copier)
            guard current == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let count = copier.keyCount - first
            if count > 0 { copier.output.append(UInt8(ascii: ",")) }
            copier.newline(indent: indent + 1)
            let keyStart = index
            let written = copier.output.count
            try copyString(&copier)
            let key = written..<copier.output.count
            let repeated: Bool
            if count < 16 {
                repeated = copier.hasKey(key, from: first)
            } else {
                if keySet.isEmpty { for range in copier.keys[first..<copier.keyCount] { keySet.insert(copier.output.array(range)) } }
                repeated = !keySet.insert(copier.output.array(key)).inserted
            }
            guard !repeated else {
                index = keyStart
                let name = (try? parseString()) ?? ""
                index = keyStart
                throw failure("the key \(name.debugDescription) appears twice in one object")
            }
            copier.pushKey(key)
            skipWhitespace(noting: &copier)
            guard current == UInt8(ascii: ":") else { throw failure("expected \":\"") }
            index += 1
            copier.output.append(UInt8(ascii: ":"))
            if copier.pretty { copier.output.append(UInt8(ascii: " ")) }
            skipWhitespace(noting: &copier)
            try copyValue(depth: depth, indent: indent + 1, &copier)
            guard try copySeparator(UInt8(ascii: "}"), indent: indent, &copier) else {
                copier.keyCount = first
                return
            }
        }
    }

    /// ``parseElements(depth:_:)`` of an array.
    private mutating func copyElements(depth: Int, indent: Int, _ copier: inout Copier) throws(JSONParseError) {
        guard copyOpening(UInt8(ascii: "["), UInt8(ascii: "]"), &copier) else { return }
        var first = true
        while true {
            skipWhitespace(noting: &copier)
            if !first { copier.output.append(UInt8(ascii: ",")) }
            first = false
            copier.newline(indent: indent + 1)
            try copyValue(depth: depth, indent: indent + 1, &copier)
            guard try copySeparator(UInt8(ascii: "]"), indent: indent, &copier) else { return }
        }
    }

    /// After a member or an element: reads a `,` (another follows: `true`) or the `close`
    /// bracket, written on a line of its own at `indent` (`false`).
    private mutating func copySeparator(_ close: UInt8, indent: Int, _ copier: inout Copier) throws(JSONParseError) -> Bool {
        skipWhitespace(noting: &copier)
        if current == UInt8(ascii: ",") {
            index += 1
            return true
        }
        guard current == close else { throw failure("expected \",\" or \"\(Character(Unicode.Scalar(close)))\"") }
        index += 1
        copier.newline(indent: indent)
        copier.output.append(close)
        return false
    }

    /// ``parseString()``, written as ``JSON/writeString(_:to:)`` writes it. A string without
    /// an escape or a control character is copied as it is (that is its written form); any
    /// other is read by ``parseString()`` and written afresh.
    private mutating func copyString(_ copier: inout Copier) throws(JSONParseError) {
        let quote = index
        let (end, ascii) = bytes.withUnsafeBufferPointer { buffer in Self.plainRun(buffer, from: quote + 1) }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            let valid = bytes.withUnsafeBufferPointer { buffer in
                let base = buffer.baseAddress! + quote
                // ASCII is valid UTF-8 as it is; anything else is validated.
                guard ascii || Self.isValidUTF8(UnsafeBufferPointer(start: base + 1, count: end - quote - 1)) else { return false }
                copier.output.append(UnsafeBufferPointer(start: base, count: end - quote + 1))
                return true
            }
            guard valid else { throw failure("invalid UTF-8 in a string") }
            return
        }
        let text = try parseString()
        var written: [UInt8] = []
        JSON.writeString(text, to: &written)
        if !written.elementsEqual(bytes[quote..<index]) { copier.isCompact = false }
        written.withUnsafeBufferPointer { copier.output.append($0) }
    }

    /// Where the run of string bytes from `start` ends (at a quote, a backslash, a control
    /// character or the end), and whether it is ASCII.
    private static func plainRun(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, ascii: Bool) {
        var end = start
        var highBits: UInt8 = 0
        while end < buffer.count {
            let byte = buffer[end]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            highBits |= byte
            end += 1
        }
        return (end, highBits < 0x80)
    }

    /// Whether `buffer` is well-formed UTF-8, as `String(validating:as:)` judges it.
    private static func isValidUTF8(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var iterator = buffer.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

/// Bytes appended through a pointer, for a copy that appends a few bytes at each token: an
/// array's append checks its uniqueness and capacity through calls that cost more than the
/// bytes.
private struct ByteBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(64, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        if capacity - count < bytes.count { grow(to: count + bytes.count) }
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append(repeating byte: UInt8, count repeated: Int) {
        if capacity - count < repeated { grow(to: count + repeated) }
        (base + count).initialize(repeating: byte, count: repeated)
        count += repeated
    }

    /// Whether the bytes at two ranges are the same.
    func equal(_ first: Range<Int>, _ second: Range<Int>) -> Bool {
        first.count == second.count && memcmp(base + first.lowerBound, base + second.lowerBound, first.count) == 0
    }

    func array(_ range: Range<Int>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }

    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: base, count: count))
    }

    private mutating func grow(to needed: Int) {
        let grown = max(needed, 2 * capacity)
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        new.initialize(from: base, count: count)
        base.deallocate()
        base = new
        capacity = grown
    }
}
