import Foundation

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
    var index = 0

    package init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Parses one complete JSON text (surrounding whitespace allowed, nothing else).
    package static func parse<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, maximumDepth: Int
    ) throws(JSONParseError) -> JSON {
        try whole(bytes, maximumDepth: maximumDepth) { (parser) throws(JSONParseError) in
            try parser.parseValue(depth: 0)
        }
    }

    /// Reads one complete JSON text with `read`: whitespace around it allowed, nothing else.
    static func whole<T>(
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
    package static func parse(
        _ bytes: some Collection<UInt8>, maximumDepth: Int, copying member: String
    ) throws(JSONParseError) -> Element {
        try whole(bytes, maximumDepth: maximumDepth) { (parser) throws(JSONParseError) in
            try parser.parseElement(depth: 0, copying: member)
        }
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
            value = .object(
                try parser.parseMembers(depth: 1) { (parser, key) throws(JSONParseError) -> JSON in
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
    mutating func parseElement(depth: Int, copying member: String) throws(JSONParseError) -> Element {
        guard current == UInt8(ascii: "{"), depth < maximumDepth else {
            return Element(value: try parseValue(depth: depth))
        }
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
    static func sameBytes(_ first: String, _ second: String) -> Bool {
        guard first.utf8.count == second.utf8.count else { return false }
        var first = first, second = second
        return first.withUTF8 { one in
            second.withUTF8 { other in one.count == 0 || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0 }
        }
    }

    func failure(_ message: String) -> JSONParseError {
        var line = 1, column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONParseError(message: message, line: line, column: column)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
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

    mutating func expect(_ literal: StaticString, _ value: JSON) throws(JSONParseError) -> JSON {
        let count = literal.utf8CodeUnitCount
        let matches =
            bytes.count - index >= count
            && bytes.withUnsafeBufferPointer { memcmp($0.baseAddress! + index, literal.utf8Start, count) == 0 }
        guard matches else { throw failure("invalid literal") }
        index += count
        return value
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
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

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        index += 1
        return .object(
            try parseMembers(depth: depth) { (parser, _) throws(JSONParseError) -> JSON in
                try parser.parseValue(depth: depth)
            })
    }

    /// The members of the object whose `{` was just read, each value read by `value` (with its
    /// key) from the parser at its first byte, and the object's `}`.
    mutating func parseMembers(
        depth: Int, _ value: (inout JSONParser, String) throws(JSONParseError) -> JSON
    ) throws(JSONParseError) -> [(key: String, value: JSON)] {
        var members: [(key: String, value: JSON)] = []
        // Keys compared by their UTF-8 bytes: a repeated key is refused, never silently
        // resolved to its first (or last) value. The first few are compared one by one, the
        // rest found in a set made once an object has that many.
        var keys: Set<[UInt8]> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return members
        }
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
            case UInt8(ascii: "}"):
                index += 1
                return members
            default: throw failure("expected \",\" or \"}\"")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        index += 1
        var items: [JSON] = []
        try parseElements(depth: depth) { (parser) throws(JSONParseError) in
            items.append(try parser.parseValue(depth: depth))
        }
        return .array(items)
    }

    /// The elements of the array whose `[` was just read, each read by `element` from the
    /// parser at its first byte, and the array's `]`.
    mutating func parseElements(
        depth: Int, _ element: (inout JSONParser) throws(JSONParseError) -> Void
    ) throws(JSONParseError) {
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return
            default: throw failure("expected \",\" or \"]\"")
            }
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> JSON {
        .number(String(decoding: bytes[try scanNumber()], as: UTF8.self))
    }

    /// Reads a number's text by the grammar of RFC 8259, returning where it is.
    mutating func scanNumber() throws(JSONParseError) -> Range<Int> {
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

    mutating func hex4() throws(JSONParseError) -> UInt32 {
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

    mutating func parseString() throws(JSONParseError) -> String {
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
                guard let text = String(validating: buffer, as: UTF8.self) else {
                    throw failure("invalid UTF-8 in a string")
                }
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
                        guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure("unpaired surrogate in a \\u escape") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw failure("unpaired surrogate in a \\u escape")
                        }
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
