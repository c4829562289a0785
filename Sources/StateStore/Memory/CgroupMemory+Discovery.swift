extension CgroupMemory {
    /// cgroup v1 reports "no limit" as the largest page-aligned counter (`9223372036854771712`
    /// with 4 KiB pages, other values with other page sizes). Anything at or above 2⁶² is
    /// treated as unlimited: no machine has 4 EiB.
    public static let unlimitedThreshold: UInt64 = 1 << 62

    /// Finds and reads the memory cgroup of the current process.
    ///
    /// Reads `<root>/proc/self/cgroup` and `<root>/proc/self/mountinfo`, maps the cgroup path
    /// into the mounted hierarchy (under `root`), and reads it and its ancestors. A v2 cgroup with
    /// memory files wins; otherwise a v1 `memory` hierarchy is used.
    ///
    /// - Parameter root: a directory standing in for `/` (tests use fixture trees).
    /// - Throws: ``MemoryError/cgroupNotFound(detail:)`` when the process has no memory cgroup
    ///   (bare metal without cgroups, or the controller is not mounted), or a read/parse error.
    public static func discover(root: String = "/") throws(MemoryError) -> CgroupMemory {
        let membership = CgroupMembership.parse(try ProcFile.read(ProcFile.join(root, "/proc/self/cgroup")))
        let mounts = MountInfo.parse(try ProcFile.read(ProcFile.join(root, "/proc/self/mountinfo")))

        if let path = membership.unifiedPath, let mount = mounts.cgroup2 {
            let directory = ProcFile.join(root, locate(path, in: mount))
            if let memory = nearestV2MemoryCgroup(from: directory, top: ProcFile.join(root, mount.mountPoint)) {
                return try read(directory: memory, version: .v2)
            }
        }
        if let path = membership.path(controller: "memory"), let mount = mounts.cgroup1(controller: "memory") {
            let directory = ProcFile.join(root, locate(path, in: mount))
            if ProcFile.exists(directory + "/memory.limit_in_bytes") {
                return try read(directory: directory, version: .v1)
            }
            let mountPoint = ProcFile.join(root, mount.mountPoint)
            if ProcFile.exists(mountPoint + "/memory.limit_in_bytes") {
                return try read(directory: mountPoint, version: .v1)
            }
        }
        throw .cgroupNotFound(
            detail:
                "neither a cgroup v2 memory controller nor a v1 memory hierarchy is mounted for this process under \(root)"
        )
    }

    /// Reads a given cgroup directory and its ancestors, detecting the version from the files
    /// present (`memory.limit_in_bytes` → v1, `memory.max`/`memory.current` → v2).
    ///
    /// A v2 cgroup whose parent does not enable the memory controller for it (no memory files,
    /// but `cgroup.controllers`) is charged to the nearest ancestor that has it: that ancestor
    /// is read instead, so a limit set above is not missed.
    public static func read(directory: String) throws(MemoryError) -> CgroupMemory {
        if ProcFile.exists(directory + "/memory.limit_in_bytes") { return try read(directory: directory, version: .v1) }
        if let memory = nearestV2MemoryCgroup(from: directory, top: nil) {
            return try read(directory: memory, version: .v2)
        }
        throw .cgroupNotFound(detail: "\(directory) has neither memory.limit_in_bytes (v1) nor memory.max (v2)")
    }

    /// Reads a cgroup directory of a known version and walks up its ancestors for as long as
    /// they carry memory files (the v2 root cgroup has none, the v1 root has an unlimited one).
    public static func read(directory: String, version: Version) throws(MemoryError) -> CgroupMemory {
        var directory = normalized(directory)
        var hierarchy = [try readLevel(directory, version: version)]
        while let parent = parentDirectory(directory), hierarchy.count < 64 {
            let marker = version == .v1 ? "/memory.limit_in_bytes" : "/memory.max"
            guard ProcFile.exists(parent + marker), let level = try? readLevel(parent, version: version) else { break }
            hierarchy.append(level)
            directory = parent
        }
        let own = hierarchy[0].path
        var pressure: PressureStall?
        var events: Events?
        if version == .v2 {
            if let text = ProcFile.readIfPresent(own + "/memory.pressure") {
                pressure = try? PressureStall.parse(text, file: own + "/memory.pressure")
            }
            if let text = ProcFile.readIfPresent(own + "/memory.events") {
                events = try? Events.parse(text, file: own + "/memory.events")
            }
        }
        return CgroupMemory(version: version, path: own, hierarchy: hierarchy, pressure: pressure, events: events)
    }

    /// `directory` when it has v2 memory files, else its nearest ancestor in the same cgroup v2
    /// hierarchy that has them (the memory controller is enabled per subtree: below the last
    /// `cgroup.subtree_control` that lists `memory`, memory is charged and limited there).
    /// Stops at `top` (the mount point) or where `cgroup.controllers` ends; `nil` when none has them.
    static func nearestV2MemoryCgroup(from directory: String, top: String?) -> String? {
        var current = normalized(directory)
        let top = top.map(normalized)
        for _ in 0..<64 {
            if ProcFile.exists(current + "/memory.max") || ProcFile.exists(current + "/memory.current") {
                return current
            }
            // Only walk through directories that are cgroups; a fixture tree's plain folder is not one.
            guard ProcFile.exists(current + "/cgroup.controllers"), current != top,
                let parent = parentDirectory(current)
            else { return nil }
            current = parent
        }
        return nil
    }

    static func readLevel(_ directory: String, version: Version) throws(MemoryError) -> Level {
        switch version {
        case .v2:
            let maxFile = directory + "/memory.max"
            let max = try FlatKeyedFile.limit(try ProcFile.read(maxFile), file: maxFile)
            let highFile = directory + "/memory.high"
            let high = try ProcFile.readIfPresent(highFile).flatMap { text throws(MemoryError) in
                try FlatKeyedFile.limit(text, file: highFile)
            }
            let usage = try number(directory + "/memory.current")
            let statFile = directory + "/memory.stat"
            let stat =
                try ProcFile.readIfPresent(statFile).map { text throws(MemoryError) in
                    try FlatKeyedFile.parse(text, file: statFile)
                } ?? [:]
            return Level(path: directory, max: max, high: high, usage: usage, inactiveFile: stat["inactive_file"] ?? 0)
        case .v1:
            let limitFile = directory + "/memory.limit_in_bytes"
            let rawLimit = try FlatKeyedFile.limit(try ProcFile.read(limitFile), file: limitFile)
            let limit = rawLimit.flatMap { $0 >= unlimitedThreshold ? nil : $0 }
            let usage = try number(directory + "/memory.usage_in_bytes")
            let statFile = directory + "/memory.stat"
            let stat =
                try ProcFile.readIfPresent(statFile).map { text throws(MemoryError) in
                    try FlatKeyedFile.parse(text, file: statFile)
                } ?? [:]
            // total_inactive_file counts the whole subtree, like usage_in_bytes with use_hierarchy.
            return Level(
                path: directory, max: limit, usage: usage,
                inactiveFile: stat["total_inactive_file"] ?? stat["inactive_file"] ?? 0)
        }
    }

    private static func number(_ file: String) throws(MemoryError) -> UInt64 {
        guard let value = try FlatKeyedFile.limit(try ProcFile.read(file), file: file) else {
            throw .invalidNumber(file: file, line: 1, key: "value", text: "max")
        }
        return value
    }

    /// Maps a path from `/proc/self/cgroup` into a mount: strip the mount's own root; a path
    /// outside the mount (`/..` under a cgroup namespace) maps to the mount point itself.
    ///
    /// Compared byte by byte, as the kernel resolves paths: Swift's `String` comparisons work on
    /// `Character`s, where `/` followed by a combining mark is one character (so `/a/../\u{301}`
    /// would hide its `..`) and `é` equals `e` + U+0301 (so a root would contain paths it does not).
    static func locate(_ path: String, in mount: MountInfo.Entry) -> String {
        let slash = UInt8(ascii: "/")
        let bytes = Array(path.utf8)
        if bytes.split(separator: slash).contains(where: { $0.elementsEqual("..".utf8) }) { return mount.mountPoint }
        var relative = bytes[...]
        let root = Array(mount.root.utf8)
        if root != [slash] {
            if bytes == root {
                relative = [slash][...]
            } else if bytes.starts(with: root + [slash]) {
                relative = bytes[root.count...]
            }
        }
        if relative.elementsEqual([slash]) { return mount.mountPoint }
        let tail = String(decoding: relative, as: UTF8.self)
        return Array(mount.mountPoint.utf8) == [slash] ? tail : mount.mountPoint + tail
    }

    // Bytes again, not Characters: `a/\u{301}` ends in a `/` character that is not "/".
    private static func normalized(_ directory: String) -> String {
        var bytes = Array(directory.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func parentDirectory(_ directory: String) -> String? {
        let bytes = Array(directory.utf8)
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash != 0 else { return nil }
        return String(decoding: bytes[..<slash], as: UTF8.self)
    }
}
