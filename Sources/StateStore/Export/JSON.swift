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
        var output = ""
        write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: 0)
        return output
    }

    private func write(to output: inout String, pretty: Bool, sortKeys: Bool, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let text): output += text
        case .string(let text): JSON.writeString(text, to: &output)
        case .array(let items):
            if items.isEmpty { output += "[]"; return }
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                if pretty { output += "\n" + String(repeating: "  ", count: indent + 1) }
                item.write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            if pretty { output += "\n" + String(repeating: "  ", count: indent) }
            output += "]"
        case .object(let members):
            if members.isEmpty { output += "{}"; return }
            let ordered = sortKeys
                ? members.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(\.element)
                : members
            output += "{"
            for (index, member) in ordered.enumerated() {
                if index > 0 { output += "," }
                if pretty { output += "\n" + String(repeating: "  ", count: indent + 1) }
                JSON.writeString(member.key, to: &output)
                output += pretty ? ": " : ":"
                member.value.write(to: &output, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            if pretty { output += "\n" + String(repeating: "  ", count: indent) }
            output += "}"
        }
    }

    /// Writes `text` as a JSON string: `"` and `\` escaped, the usual short escapes for
    /// control characters, `\u00XX` for the rest of them, everything else as UTF-8.
    package static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case let scalar where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
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
        var parser = JSONParser(bytes: Array(bytes), maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
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

    private mutating func expect(_ literal: String, _ value: JSON) throws(JSONParseError) -> JSON {
        let utf8 = Array(literal.utf8)
        guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw failure("invalid literal")
        }
        index += utf8.count
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
        var members: [(key: String, value: JSON)] = []
        // Keys compared by their UTF-8 bytes: a repeated key is refused, never silently
        // resolved to its first (or last) value.
        var keys: Set<[UInt8]> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let keyStart = index
            let key = try parseString()
            guard keys.insert(Array(key.utf8)).inserted else {
                index = keyStart
                throw failure("the key \(key.debugDescription) appears twice in one object")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected \":\"") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue(depth: depth)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw failure("expected \",\" or \"}\"")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        index += 1
        var items: [JSON] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
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
        var buffer: [UInt8] = []
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
