import FuzzSupport

@testable import StateStore

// Everything that turns cgroup text into a decision, each on the same arbitrary text:
// `CgroupMembership.parse` (/proc/self/cgroup), the flat keyed files (`memory.stat`,
// `memory.events` through `CgroupMemory.Events.parse`), the one-number files (`memory.max`,
// `memory.high`, `memory.current`, v1 `memory.limit_in_bytes`), `CgroupMemory.locate` (mapping a
// cgroup path into a mount found in mountinfo), and the arithmetic of `CgroupMemory.Level`.
//
// Invariants (from CgroupMembership.swift, FlatKeyedFile.swift, CgroupMemory*.swift):
// - nothing traps; the flat keyed readers fail only with `.malformedLine`, `.invalidNumber` or
//   (one-number files) `.empty`, naming the file given;
// - every membership entry has a hierarchy ID >= 0 and a path starting with "/";
// - a one-number file is `nil` ("no limit") only when its one word is `max`;
// - `locate` never climbs out of the mount: a path with a ".." component maps to the mount point,
//   and the result always lies under the mount point;
// - a level's available bytes never exceed its effective limit, and the binding level of a
//   hierarchy leaves the least headroom; a sample built with it has
//   `effectiveAvailable <= effectiveTotal`.
private let statFile = "fuzz/memory.stat"
private let limitFile = "fuzz/memory.max"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = FuzzInput.text(start, count)

    let membership = CgroupMembership.parse(text)
    for entry in membership.entries {
        invariant(entry.hierarchyID >= 0, "negative hierarchy ID \(entry.hierarchyID)")
        invariant(entry.path.unicodeScalars.first == "/", "path \(entry.path.debugDescription) does not start with /")
        invariant(!entry.path.unicodeScalars.contains("\n"), "path \(entry.path.debugDescription) spans lines")
    }

    var stat: [String: UInt64] = [:]
    do {
        stat = try CgroupMemory.Events.parse(text, file: statFile).values
    } catch {
        switch error {
        case let .malformedLine(name, _, _), let .invalidNumber(name, _, _, _):
            invariant(name == statFile, "error names \(name), not \(statFile)")
        default:
            invariant(false, "flat keyed parse threw \(error)")
        }
    }

    var limit: UInt64?
    do {
        limit = try FlatKeyedFile.limit(text, file: limitFile)
        if limit == nil {
            let words = scalarSplit(Substring(text)) { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
            invariant(words == ["max"], "no limit from \(text.debugDescription)")
        }
    } catch {
        switch error {
        case let .empty(name), let .malformedLine(name, _, _), let .invalidNumber(name, _, _, _):
            invariant(name == limitFile, "error names \(name), not \(limitFile)")
        default:
            invariant(false, "one-number parse threw \(error)")
        }
    }

    // Map every cgroup path of the text into every mount of the text.
    let mounts = MountInfo.parse(text).entries.prefix(8)
    for entry in membership.entries.prefix(8) {
        for mount in mounts {
            let located = CgroupMemory.locate(entry.path, in: mount)
            // Judged on bytes, as the kernel resolves paths, not on Swift Characters.
            if byteComponents(entry.path).contains("..") {
                invariant(located == mount.mountPoint, "a path with .. did not map to the mount point")
            }
            if mount.mountPoint != "/" {
                invariant(
                    located.utf8.starts(with: mount.mountPoint.utf8),
                    "\(located.debugDescription) is outside \(mount.mountPoint.debugDescription)")
            }
            let climbs = byteComponents(located).filter { $0 == ".." }.count
            let allowed = byteComponents(mount.mountPoint).filter { $0 == ".." }.count
            invariant(
                climbs <= allowed, "\(located.debugDescription) climbs out of \(mount.mountPoint.debugDescription)")
        }
    }

    // The numbers found, as a two-level hierarchy.
    let numbers = Array(stat.values.sorted().prefix(4))
    func number(_ index: Int) -> UInt64 { numbers.isEmpty ? 0 : numbers[index % numbers.count] }
    let own = CgroupMemory.Level(
        path: "/own", max: limit, high: stat["high"], usage: number(0), inactiveFile: number(1))
    let parent = CgroupMemory.Level(path: "/", max: stat["max"], usage: number(2), inactiveFile: number(3))
    for level in [own, parent] {
        if let available = level.available, let effective = level.effectiveLimit {
            invariant(available <= effective, "level available \(available) > limit \(effective)")
        }
        invariant(level.workingSet <= level.usage, "working set > usage")
    }
    let cgroup = CgroupMemory(version: .v2, path: "/own", hierarchy: [own, parent])
    if let binding = cgroup.bindingLevel?.available {
        for level in cgroup.hierarchy {
            if let available = level.available { invariant(binding <= available, "binding level is not the tightest") }
        }
    }
    let sample = MemorySample(meminfo: MemInfo(total: number(1), available: number(2)), cgroup: cgroup)
    invariant(sample.effectiveAvailable <= sample.effectiveTotal, "effectiveAvailable > effectiveTotal")
    invariant(sample.availablePercent >= 0 && sample.availablePercent <= 100, "availablePercent outside 0...100")
    return 0
}

/// The components of a path as the kernel sees them: split on the byte `/`.
private func byteComponents(_ path: String) -> [String] {
    path.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
}
