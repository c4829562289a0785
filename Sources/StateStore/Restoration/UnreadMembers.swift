import Foundation

/// The members of a stored JSON document that the current type no longer reads: found by
/// comparing the document with the value decoded from it and encoded again, recursively.
enum UnreadMembers {
    /// The dotted paths of members in `stored` that `reencoded` lacks (`[]` for array elements:
    /// `attachments[].size`), sorted; empty when nothing would be lost by saving `reencoded`
    /// over `stored`. Members whose stored value is `null` carry nothing and are not listed.
    static func find(stored: Data, reencoded: Data) -> [String] {
        guard let old = try? JSONSerialization.jsonObject(with: stored, options: [.fragmentsAllowed]),
            let new = try? JSONSerialization.jsonObject(with: reencoded, options: [.fragmentsAllowed])
        else { return [] }
        var found = Set<String>()
        compare(old, new, at: "", into: &found)
        return found.sorted()
    }

    private static func compare(_ old: Any, _ new: Any, at path: String, into found: inout Set<String>) {
        switch (old, new) {
        case (let old as [String: Any], let new as [String: Any]):
            for (key, value) in old where !(value is NSNull) {
                let member = path.isEmpty ? key : path + "." + key
                if let counterpart = new[key] {
                    compare(value, counterpart, at: member, into: &found)
                } else {
                    found.insert(member)
                }
            }
        case (let old as [Any], let new as [Any]):
            for (value, counterpart) in zip(old, new) { compare(value, counterpart, at: path + "[]", into: &found) }
            // Elements the new value has no counterpart for were dropped with what they held.
            if old.count > new.count { found.insert(path + "[]") }
        case (is [String: Any], _), (is [Any], _):
            // An object or array now read as something else: whatever it held is not read.
            found.insert(path.isEmpty ? "(the whole value)" : path)
        default:
            break
        }
    }
}
