import Foundation

// Copying without building: a JSON text checked and rewritten in one pass.
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
    struct Copier: ~Copyable {
        let pretty: Bool
        var output: CopiedBytes
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
            output = CopiedBytes(capacity: capacity)
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
    mutating func copyValue(depth: Int, indent: Int, _ copier: inout Copier) throws(JSONParseError) {
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
                if keySet.isEmpty {
                    for range in copier.keys[first..<copier.keyCount] { keySet.insert(copier.output.array(range)) }
                }
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
    private mutating func copySeparator(
        _ close: UInt8, indent: Int, _ copier: inout Copier
    ) throws(JSONParseError) -> Bool {
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
                guard ascii || Self.isValidUTF8(UnsafeBufferPointer(start: base + 1, count: end - quote - 1)) else {
                    return false
                }
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
struct CopiedBytes: ~Copyable {
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
