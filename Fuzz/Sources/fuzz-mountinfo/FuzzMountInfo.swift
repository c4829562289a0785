import FuzzSupport

@testable import StateStore

// `MountInfo.parse` on arbitrary text (the format of /proc/self/mountinfo).
//
// Invariants (from MountInfo.swift):
// - parse never traps and never throws: malformed lines are skipped;
// - there are never more entries than lines, and each comes from a line that has at least nine
//   space-separated fields with a "-" separator among the optional fields;
// - a filesystem type or super option never contains a space or a newline (fields are split on
//   spaces, lines on newlines);
// - `unescape` never makes text longer, and leaves text without a backslash unchanged;
// - `cgroup2` is the last cgroup2 entry, `cgroup1(controller:)` the last v1 entry carrying it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = FuzzInput.text(start, count)
    let info = MountInfo.parse(text)
    let lines = scalarSplit(Substring(text)) { $0 == "\n" }
    invariant(info.entries.count <= lines.count, "\(info.entries.count) entries from \(lines.count) lines")
    for entry in info.entries {
        invariant(!entry.filesystemType.isEmpty, "empty filesystem type")
        invariant(
            !entry.filesystemType.unicodeScalars.contains { $0 == " " || $0 == "\n" },
            "filesystem type \(entry.filesystemType.debugDescription) spans fields")
        for option in entry.superOptions {
            invariant(
                !option.isEmpty && !option.unicodeScalars.contains { $0 == "," || $0 == " " || $0 == "\n" },
                "super option \(option.debugDescription) is empty or spans fields")
        }
    }
    invariant(
        info.cgroup2 == info.entries.last { $0.filesystemType == "cgroup2" }, "cgroup2 is not the last cgroup2 mount")
    if let memory = info.cgroup1(controller: "memory") {
        invariant(
            memory.filesystemType == "cgroup" && memory.superOptions.contains("memory"),
            "cgroup1(memory) is not a memory hierarchy")
    }
    for line in lines {
        for field in scalarSplit(line, where: { $0 == " " }) {
            let decoded = MountInfo.unescape(field)
            invariant(decoded.utf8.count <= field.utf8.count, "unescape made \(field.debugDescription) longer")
            if !field.unicodeScalars.contains("\\") {
                invariant(decoded == String(field), "unescape changed text without a backslash")
            }
        }
    }
    return 0
}
