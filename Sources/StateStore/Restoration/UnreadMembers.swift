/// The members of a stored JSON document that the current type no longer reads: found by
/// comparing the document with the value decoded from it and encoded again, recursively.
///
/// Both documents are read with ``JSONParser``, the package's one JSON reader, nested as deep as
/// `JSONDecoder` reads (512).
enum UnreadMembers {
    /// The nesting `JSONDecoder` reads; a stored value it decoded is never deeper.
    static let maximumDepth = 512

    /// What ``find(stored:reencoded:)`` reports for stored bytes it cannot compare.
    static let unreadForm =
        "(the whole value: stored in a JSON form only JSONDecoder reads, such as a trailing comma or a repeated key)"

    /// The dotted paths of members in `stored` that `reencoded` lacks (`[]` for array elements:
    /// `attachments[].size`), sorted; empty when nothing would be lost by saving `reencoded`
    /// over `stored`. Members whose stored value is `null` carry nothing and are not listed.
    ///
    /// `JSONDecoder` takes a few forms this package's reader refuses (a trailing comma, a repeated
    /// key); stored bytes in such a form are reported as ``unreadForm``, so they are kept rather
    /// than compared.
    static func find(stored: some Collection<UInt8>, reencoded: some Collection<UInt8>) -> [String] {
        guard let old = try? JSONParser.parse(stored, maximumDepth: maximumDepth) else { return [unreadForm] }
        guard let new = try? JSONParser.parse(reencoded, maximumDepth: maximumDepth) else { return [] }
        var found = Set<String>()
        compare(old, new, at: "", into: &found)
        return found.sorted()
    }

    private static func compare(_ old: JSON, _ new: JSON, at path: String, into found: inout Set<String>) {
        switch (old, new) {
        case (.object(let old), .object(let new)):
            // The first of a repeated key, as `JSON`'s subscript reads it.
            let counterparts = Dictionary(new.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            for (key, value) in old {
                if case .null = value { continue }
                let member = path.isEmpty ? key : path + "." + key
                if let counterpart = counterparts[key] {
                    compare(value, counterpart, at: member, into: &found)
                } else {
                    found.insert(member)
                }
            }
        case (.array(let old), .array(let new)):
            for (value, counterpart) in zip(old, new) { compare(value, counterpart, at: path + "[]", into: &found) }
            // Elements the new value has no counterpart for were dropped with what they held.
            if old.count > new.count { found.insert(path + "[]") }
        case (.object, _), (.array, _):
            // An object or array now read as something else: whatever it held is not read.
            found.insert(path.isEmpty ? "(the whole value)" : path)
        default:
            break
        }
    }
}
