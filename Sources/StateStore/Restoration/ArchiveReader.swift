import Foundation

/// A direct reader for archives in the shape this library writes them: objects with the known
/// keys, plain strings, integers. It builds the archive in one pass over the bytes. On an
/// archive of 100,000 controllers (9.2 MB, a release build) it takes 34 ms, where the package's
/// general ``JSONParser`` takes 62 ms only to build the JSON value (before any archive is made
/// from it) and `JSONDecoder` 530 ms: so archives keep a reader of their own, as they keep a
/// writer (``ArchiveJSONWriter``: 30 ms, against 76 ms for a ``JSON`` value and its writer and
/// 515 ms for `JSONEncoder`).
///
/// It is strict on purpose, and returns `nil` for anything it does not fully understand: an
/// unknown or repeated key, an escape sequence or control character in a string, a number with
/// a fraction or exponent or out of range, invalid UTF-8, a missing required member, a `null`
/// where a value is required, or anything else that is not well-formed JSON. The caller then
/// decodes the bytes with `JSONDecoder`, which accepts what it accepts and names what is wrong,
/// so an archive read either way is the same value, and a malformed one is reported the same way.
/// Its recursion is bounded by the nesting that ``ArchiveScan`` checked before.
struct ArchiveReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    /// The last class name and storyboard identifier read, with the bytes they were read from:
    /// siblings mostly share them, and a repeat takes the string already made.
    private var lastRestorationClass: (range: Range<Int>, text: String)?
    private var lastStoryboardIdentifier: (range: Range<Int>, text: String)?

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The archive the bytes hold, or `nil` when they are not in the plain shape this reader takes.
    static func read(_ data: Data) -> HierarchyArchive? {
        data.withUnsafeBytes { raw -> HierarchyArchive? in
            var reader = ArchiveReader(raw)
            guard let archive = reader.archive() else { return nil }
            reader.skipWhitespace()
            return reader.index == raw.count ? archive : nil
        }
    }

    // MARK: Objects

    private mutating func archive() -> HierarchyArchive? {
        var format: Int?
        var orientation: String??
        var root: HierarchyArchive.Node??
        var unarchived: [HierarchyArchive.Omission]??
        let complete = members { (reader, key) -> Bool in
            switch key {
            case .format:
                guard format == nil, let value = reader.integer() else { return false }
                format = value
            case .orientation:
                guard orientation == nil, let value = reader.optional({ $0.string() }) else { return false }
                orientation = value
            case .root:
                guard root == nil, let value = reader.optional({ $0.node() }) else { return false }
                root = value
            case .unarchived:
                guard unarchived == nil, let value = reader.optional({ $0.array { $0.omission() } }) else {
                    return false
                }
                unarchived = value
            default:
                return false
            }
            return true
        }
        guard complete, let format else { return nil }
        var archive = HierarchyArchive(
            orientation: orientation ?? nil, root: root ?? nil, unarchived: (unarchived ?? nil) ?? [])
        archive.format = format
        return archive
    }

    private mutating func node() -> HierarchyArchive.Node? {
        var storyboardIdentifier: String??
        var restorationIdentifier: String??
        var restorationClass: String??
        var kind: HierarchyArchive.Node.Kind?
        var children: [HierarchyArchive.Node]?
        var selectedIndex: Int??
        var presented: HierarchyArchive.Node??
        let complete = members { (reader, key) -> Bool in
            switch key {
            case .storyboardIdentifier:
                guard storyboardIdentifier == nil,
                    let value = reader.optional({ $0.string(repeating: .storyboardIdentifier) })
                else { return false }
                storyboardIdentifier = value
            case .restorationIdentifier:
                guard restorationIdentifier == nil, let value = reader.optional({ $0.string() }) else { return false }
                restorationIdentifier = value
            case .restorationClass:
                guard restorationClass == nil, let value = reader.optional({ $0.string(repeating: .restorationClass) })
                else {
                    return false
                }
                restorationClass = value
            case .kind:
                guard kind == nil, let value = reader.kind() else { return false }
                kind = value
            case .children:
                guard children == nil, let value = reader.array({ $0.node() }) else { return false }
                children = value
            case .selectedIndex:
                guard selectedIndex == nil, let value = reader.optional({ $0.integer() }) else { return false }
                selectedIndex = value
            case .presented:
                guard presented == nil, let value = reader.optional({ $0.node() }) else { return false }
                presented = value
            default:
                return false
            }
            return true
        }
        guard complete, let kind, let children else { return nil }
        return HierarchyArchive.Node(
            storyboardIdentifier: storyboardIdentifier ?? nil, restorationIdentifier: restorationIdentifier ?? nil,
            restorationClass: restorationClass ?? nil, kind: kind, children: children,
            selectedIndex: selectedIndex ?? nil, presented: presented ?? nil
        )
    }

    private mutating func omission() -> HierarchyArchive.Omission? {
        var path: String?
        var typeName: String?
        var reason: String?
        let complete = members { (reader, key) -> Bool in
            switch key {
            case .path:
                guard path == nil, let value = reader.string() else { return false }
                path = value
            case .typeName:
                guard typeName == nil, let value = reader.string() else { return false }
                typeName = value
            case .reason:
                guard reason == nil, let value = reader.string() else { return false }
                reason = value
            default:
                return false
            }
            return true
        }
        guard complete, let path, let typeName, let reason else { return nil }
        return HierarchyArchive.Omission(path: path, typeName: typeName, reason: reason)
    }

    /// The keys an archive's objects have.
    private enum Key: String, CaseIterable {
        case format, orientation, root, unarchived
        case storyboardIdentifier, restorationIdentifier, restorationClass, kind, children, selectedIndex, presented
        case path, typeName, reason

        /// Each key's UTF-8, to match a key's bytes without making a string of them.
        static let spellings = Spellings(allCases.map { ($0, $0.rawValue) })
    }

    /// A key, matched on its bytes; `nil` for an unknown one, or one with escapes.
    private mutating func key() -> Key? { oneOf(Key.spellings) }

    /// A node's kind, matched on its bytes.
    private mutating func kind() -> HierarchyArchive.Node.Kind? { oneOf(Self.kinds) }

    private static let kinds = Spellings(
        [HierarchyArchive.Node.Kind.plain, .navigation, .tabBar].map { ($0, $0.rawValue) })

    /// Values by their spellings' UTF-8, grouped by byte count: a name is compared only with the
    /// spellings of its own length (at most three here), not with every one.
    struct Spellings<T: Sendable>: Sendable {
        private let byLength: [[(value: T, utf8: [UInt8])]]

        init(_ spellings: [(T, String)]) {
            var byLength = [[(value: T, utf8: [UInt8])]](
                repeating: [], count: (spellings.map(\.1.utf8.count).max() ?? 0) + 1)
            for (value, spelling) in spellings { byLength[spelling.utf8.count].append((value, Array(spelling.utf8))) }
            self.byLength = byLength
        }

        func value(spelled name: UnsafeRawBufferPointer) -> T? {
            guard name.count < byLength.count else { return nil }
            for candidate in byLength[name.count] {
                let matches = candidate.utf8.withUnsafeBytes {
                    memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0
                }
                if matches { return candidate.value }
            }
            return nil
        }
    }

    /// The value whose spelling the next string's bytes are, without making a string of them.
    private mutating func oneOf<T>(_ spellings: Spellings<T>) -> T? {
        guard let range = stringBytes() else { return nil }
        return spellings.value(spelled: UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// Reads an object, calling `member` after each key and its colon to read the value;
    /// `false` when the object is malformed, a key is unknown, or `member` returned `false`.
    private mutating func members(_ member: (inout ArchiveReader, Key) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipWhitespace()
            guard let key = key() else { return false }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            guard member(&self, key) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    // MARK: Values

    private mutating func array<T>(_ element: (inout ArchiveReader) -> T?) -> [T]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var result: [T] = []
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return result }
        while true {
            skipWhitespace()
            guard let value = element(&self) else { return nil }
            result.append(value)
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]")) ? result : nil
        }
    }

    /// `.some(nil)` for `null`, `.some(value)` for a value, `nil` when neither could be read.
    private mutating func optional<T>(_ value: (inout ArchiveReader) -> T?) -> T?? {
        if index + 4 <= bytes.count, bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
            bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
        {
            index += 4
            return .some(nil)
        }
        guard let read = value(&self) else { return nil }
        return .some(read)
    }

    /// A string without escapes or control characters, in valid UTF-8.
    private mutating func string() -> String? {
        var isASCII = true
        guard let range = stringBytes(isASCII: &isASCII) else { return nil }
        return text(range, isASCII: isASCII)
    }

    /// The members whose last value is kept, as siblings mostly repeat it.
    private enum Repeating { case restorationClass, storyboardIdentifier }

    /// The same, taking the last string read for `member` when the bytes are the same as its,
    /// and keeping the one read otherwise.
    private mutating func string(repeating member: Repeating) -> String? {
        var isASCII = true
        guard let range = stringBytes(isASCII: &isASCII) else { return nil }
        let previous =
            switch member {
            case .restorationClass: lastRestorationClass
            case .storyboardIdentifier: lastStoryboardIdentifier
            }
        if let previous, Self.same(bytes[previous.range], bytes[range]) { return previous.text }
        guard let text = text(range, isASCII: isASCII) else { return nil }
        switch member {
        case .restorationClass: lastRestorationClass = (range, text)
        case .storyboardIdentifier: lastStoryboardIdentifier = (range, text)
        }
        return text
    }

    private static func same(_ a: Slice<UnsafeRawBufferPointer>, _ b: Slice<UnsafeRawBufferPointer>) -> Bool {
        same(UnsafeRawBufferPointer(rebasing: a), UnsafeRawBufferPointer(rebasing: b))
    }

    private static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// The range of a string's bytes between its quotes, leaving the index past the closing
    /// quote; `nil` for an escape or a control character.
    private mutating func stringBytes() -> Range<Int>? {
        var isASCII = true
        return stringBytes(isASCII: &isASCII)
    }

    /// The same, saying whether the bytes are all ASCII.
    private mutating func stringBytes(isASCII: inout Bool) -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var high: UInt8 = 0
        // Eight bytes at a time while none of them is a quote, a backslash, a control
        // character or non-ASCII (the usual identifier and class name); the byte loop below
        // takes the string on from the first byte that is (usually the closing quote), or the
        // tail shorter than a word.
        while index + 8 <= bytes.count {
            let word = ByteWord.load(bytes, at: index)
            let stops =
                ByteWord.matches(UInt8(ascii: "\""), in: word) | ByteWord.matches(UInt8(ascii: "\\"), in: word)
                | ByteWord.controlOrNonASCII(in: word)
            if stops == 0 {
                index += 8
                continue
            }
            // To the first byte that stops the word (the closing quote, usually).
            index += ByteWord.firstFlagged(stops)
            break
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                isASCII = high < 0x80
                index += 1
                return start..<(index - 1)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            high |= byte
            index += 1
        }
        return nil
    }

    /// The string the bytes in `range` spell; `nil` when they are not valid UTF-8. ASCII needs
    /// no validation.
    private func text(_ range: Range<Int>, isASCII: Bool) -> String? {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[range])
        if isASCII { return String(decoding: slice.assumingMemoryBound(to: UInt8.self), as: UTF8.self) }
        return String(validating: slice, as: UTF8.self)
    }

    /// An integer without fraction or exponent, within `Int`'s range.
    private mutating func integer() -> Int? {
        let negative = take(UInt8(ascii: "-"))
        let start = index
        var value = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let digit = Int(bytes[index] - UInt8(ascii: "0"))
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) =
                negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflowA, !overflowB else { return nil }
            value = sum
            index += 1
        }
        let digits = index - start
        // No digits, a leading zero, or a fraction or exponent: not for this reader.
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            return nil
        }
        return value
    }

    // MARK: Bytes

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }
}

/// Eight bytes at once, in one 64-bit word (SWAR): each test is exact about whether some byte
/// of the word qualifies, and about which is the first (the one at the lowest address); bytes
/// after the first may be flagged wrongly. A scan moves on by whole words, and to the first
/// flagged byte of a word that holds one.
enum ByteWord {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The eight bytes at `offset`, the first in the lowest byte of the word on any platform.
    @inline(__always) static func load(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The high bits of the bytes of `word` that are `byte` (exact up to the first).
    @inline(__always) static func matches(_ byte: UInt8, in word: UInt64) -> UInt64 {
        let difference = word ^ (ones &* UInt64(byte))
        // A byte's high bit is set here when that byte of `difference` is zero (below the
        // lowest zero byte the borrows set none).
        return (difference &- ones) & ~difference & highs
    }

    /// The high bits of the bytes of `word` below 0x20 (control characters) or 0x80 and above
    /// (not ASCII), exact up to the first.
    @inline(__always) static func controlOrNonASCII(in word: UInt64) -> UInt64 {
        ((word &- ones &* 0x20) | word) & highs
    }

    /// The offset in its word of the first byte flagged in `flags` (not zero), from a word made
    /// by ``load(_:at:)``.
    @inline(__always) static func firstFlagged(_ flags: UInt64) -> Int {
        flags.trailingZeroBitCount >> 3
    }
}
