import Foundation

/// Where a state lives in the store: the chain of restoration identifiers from the
/// root, joined by `/` — `"root/nav/compose"`.
///
/// Components are non-empty, contain no `/` and no control characters (NUL included),
/// and the whole path is at most ``maximumLength`` UTF-8 bytes. Any other Unicode,
/// quotes and SQL metacharacters included, is fine: paths are always bound as
/// parameters, never spliced into SQL.
///
/// A string literal that is not a valid path is a programmer error and traps, as
/// `StaticString` misuse would; build paths from runtime strings with ``init(validating:)``.
///
/// Paths are split, compared, hashed and ordered by their UTF-8 bytes, as SQLite stores and
/// orders them, not by Swift `Character`s: `/` followed by a combining mark is one Character,
/// and `é` (U+00E9) equals `e` + U+0301 as a `String` while the two are different rows.
public struct RestorationPath: Hashable, Sendable, Comparable, Codable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    /// The longest path accepted, in UTF-8 bytes.
    public static let maximumLength = 1024

    /// The identifiers from the root down (split from ``rawValue`` when asked for: a path is
    /// one string and its digest, so copying one costs at most one reference count).
    public var components: [String] {
        rawValue.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map { String($0) }
    }

    /// The path as stored: components joined by `/`.
    public let rawValue: String

    /// ``rawValue``'s bytes hashed once, with the process's random seed (`Hasher`): a dictionary
    /// keyed by paths hashes this one word at each lookup, not the path's bytes, and paths
    /// crafted to collide cannot be found without the seed.
    private let digest: Int

    /// Validates `string` (components separated by `/`).
    public init(validating string: String) throws(StateStoreError) {
        // The usual path (printable ASCII, no empty component) is taken as it is, in one pass
        // over its bytes; any other is split and its components checked one by one.
        if Self.isPlainASCIIPath(string) {
            self.init(checked: string)
            return
        }
        try self.init(
            components: string.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map { String($0) }
        )
    }

    /// Whether `string` is a valid path of printable ASCII: at most ``maximumLength`` bytes,
    /// no `/` at either end nor two together.
    private static func isPlainASCIIPath(_ string: String) -> Bool {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard !bytes.isEmpty, bytes.count <= maximumLength, bytes.first != UInt8(ascii: "/"),
                bytes.last != UInt8(ascii: "/")
            else { return false }
            var previous: UInt8 = 0
            for byte in bytes {
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "/") || previous != UInt8(ascii: "/") else {
                    return false
                }
                previous = byte
            }
            return true
        }
        return string.utf8.withContiguousStorageIfAvailable(scan) ?? false
    }

    /// Validates each component and joins them.
    public init(components: [String]) throws(StateStoreError) {
        try self.init(prefix: nil, leafFirst: components.reversed())
    }

    /// The path of `leafFirst`'s identifiers (the leaf first, as a walk up the hierarchy meets
    /// them), below `prefix` when there is one, validated as ``init(components:)`` says; the
    /// bytes are copied once into a string of the right size. A `prefix` alone is no path:
    /// `leafFirst` must hold an identifier at least.
    init(prefix: String?, leafFirst: [String]) throws(StateStoreError) {
        guard !leafFirst.isEmpty else { throw .invalidPath(prefix ?? "", reason: "it has no components") }
        var length = prefix.map { $0.utf8.count + 1 } ?? 0
        for identifier in leafFirst { length += identifier.utf8.count + 1 }
        let joined = String(unsafeUninitializedCapacity: length - 1) { buffer in
            var end = 0
            for index in (prefix == nil ? 0 : -1)..<leafFirst.count {
                var text = index < 0 ? prefix! : leafFirst[leafFirst.count - 1 - index]
                let start = end
                end += text.withUTF8 { bytes in
                    if let source = bytes.baseAddress {
                        (buffer.baseAddress! + start).update(from: source, count: bytes.count)
                    }
                    return bytes.count
                }
                if index != leafFirst.count - 1 {
                    buffer[end] = UInt8(ascii: "/")
                    end += 1
                }
            }
            return end
        }
        if let prefix, let problem = Self.problem(with: prefix) { throw .invalidPath(joined, reason: problem) }
        for index in leafFirst.indices.reversed() {
            if let problem = Self.problem(with: leafFirst[index]) { throw .invalidPath(joined, reason: problem) }
        }
        guard joined.utf8.count <= Self.maximumLength else {
            throw .invalidPath(joined, reason: "it is longer than \(Self.maximumLength) UTF-8 bytes")
        }
        self.init(checked: joined)
    }

    /// The path `rawValue`, already validated.
    private init(checked rawValue: String) {
        self.rawValue = rawValue
        var hasher = Hasher()
        var bytes = rawValue
        bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        self.digest = hasher.finalize()
    }

    public init(stringLiteral value: String) {
        do {
            try self.init(validating: value)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Why `component` cannot be a path component, or `nil` when it can.
    public static func problem(with component: String) -> String? {
        if component.isEmpty { return "a component is empty" }
        // One pass over the bytes: in UTF-8 the byte of `/` is only ever `/`, and ASCII (the
        // usual identifier) needs no Unicode property lookup: its control characters
        // (general category Cc) are U+0000–U+001F and U+007F.
        func scan(_ bytes: some Sequence<UInt8>) -> (slash: Bool, ascii: Bool) {
            var ascii = true
            for byte in bytes {
                if byte == UInt8(ascii: "/") { return (true, ascii) }
                if byte < 0x20 || byte >= 0x7F { ascii = false }
            }
            return (false, ascii)
        }
        // Over the contiguous bytes when there are (a native or small string): a raw buffer's
        // loop, not the UTF-8 view's index arithmetic.
        let (slash, ascii) = component.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(component.utf8)
        if slash { return "the component \"\(component)\" contains \"/\"" }
        if ascii { return nil }
        if component.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "the component \(component.debugDescription) contains a control character"
        }
        return nil
    }

    /// This path with `identifier` appended.
    public func appending(_ identifier: String) throws(StateStoreError) -> RestorationPath {
        try RestorationPath(components: components + [identifier])
    }

    /// The path one level up, or `nil` for a root path.
    public var parent: RestorationPath? {
        let components = components
        return components.count > 1 ? try? RestorationPath(components: Array(components.dropLast())) : nil
    }

    /// Whether `self` is `other` or lies below it.
    public func hasPrefix(_ other: RestorationPath) -> Bool {
        let (bytes, prefix) = (rawValue.utf8, other.rawValue.utf8)
        guard bytes.starts(with: prefix) else { return false }
        // The same path, or one whose next byte ends the prefix's last component.
        let next = bytes.index(bytes.startIndex, offsetBy: prefix.count)
        return next == bytes.endIndex || bytes[next] == UInt8(ascii: "/")
    }

    public var description: String { rawValue }

    /// Byte order, the order of SQLite's `ORDER BY path`.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    /// The same bytes: the same row.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.digest == rhs.digest else { return false }
        // The same string (a copy of one path, or the same short path stored inline): one
        // value's bits are one sequence of bytes, so equal bits are equal bytes.
        if unsafeBitCast(lhs.rawValue, to: (UInt64, UInt64).self)
            == unsafeBitCast(rhs.rawValue, to: (UInt64, UInt64).self)
        {
            return true
        }
        let (left, right) = (lhs.rawValue.utf8, rhs.rawValue.utf8)
        guard left.count == right.count else { return false }
        // Native strings hold their UTF-8 contiguously: one memcmp.
        if let equal = left.withContiguousStorageIfAvailable({ left in
            right.withContiguousStorageIfAvailable { right in
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }), let equal {
            return equal
        }
        return left.elementsEqual(right)
    }

    /// The digest of the bytes: equal bytes, equal digests; `Hasher` seeds and mixes it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    /// What dictionaries and sets ask for at each lookup: the digest is already a seeded hash
    /// of the bytes, so it is mixed with the table's own seed by a 64-bit finalizer
    /// (SplitMix64's) instead of running `Hasher` again. Every bit of the result depends on
    /// every bit of both, so two tables with different seeds place a path independently, as
    /// `Hasher` would (copying one large table into another stays linear).
    public func _rawHashValue(seed: Int) -> Int {
        var mixed = UInt64(UInt(bitPattern: digest ^ seed))
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(bitPattern: UInt(mixed ^ (mixed >> 31)))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        try self.init(validating: container.decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
