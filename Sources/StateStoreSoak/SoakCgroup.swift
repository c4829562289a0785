import Foundation
import Glibc
import StateStore

/// The memory cgroup a cgroup-mode soak runs in: created under the supervisor's own cgroup with
/// the limit, joined by the harness and the ballast, removed at the end.
///
/// cgroup v1 (`memory.limit_in_bytes`, `memory.oom_control`'s `oom_kill`; root only) and v2
/// (`memory.max`, `memory.events`' `oom_kill`). On v2 the memory controller must be enabled in
/// the parent's `cgroup.subtree_control`, and a non-root cgroup that does that may hold no
/// processes itself (the "no internal processes" rule): the supervisor enables it where it
/// needs to, and first moves itself into a leaf of its own (`statestore-soak-<pid>.supervisor`)
/// when it sits in that parent. That works as root anywhere on the hierarchy and unprivileged
/// in a delegated subtree (`systemd-run --user --scope -p Delegate=yes statectl soak ...`).
/// ``remove()`` undoes it: the soak cgroup goes, `memory` is disabled again where it was
/// enabled in the supervisor's own cgroup, and the supervisor moves back.
package struct SoakCgroup {
    let path: String
    let version: CgroupMemory.Version
    let limit: UInt64
    /// v2: the cgroup whose `cgroup.subtree_control` got `+memory` from us (to undo).
    var enabledMemoryIn: String?
    /// v2: the leaf the supervisor moved into, and where it came from.
    var supervisorLeaf: String?
    var supervisorOrigin: String?

    init(path: String, version: CgroupMemory.Version, limit: UInt64) {
        self.path = path
        self.version = version
        self.limit = limit
    }

    /// Where a soak cgroup can go, decided without changing anything.
    struct Placement {
        /// The cgroup the soak cgroup is created in (the supervisor's own).
        var parent: String
        var version: CgroupMemory.Version
        /// v2: the hierarchy's mount point (the root cgroup).
        var top: String
    }

    /// The supervisor's cgroup, when a soak cgroup can be made under it; else what is missing.
    static func placement() -> Result<Placement, SoakError> {
        let membership = CgroupMembership.parse(
            ProcFile.readIfPresent("/proc/self/cgroup") ?? "")
        let mounts = MountInfo.parse(ProcFile.readIfPresent("/proc/self/mountinfo") ?? "")
        var problems: [String] = []
        if let path = membership.unifiedPath, let mount = mounts.cgroup2 {
            let top = mount.mountPoint
            let rootControllers = controllers(top + "/cgroup.controllers")
            if rootControllers.contains("memory") {
                let own = locate(path, in: mount)
                if let problem = v2Problem(own: own, top: top) {
                    problems.append("cgroup v2: " + problem)
                } else {
                    return .success(Placement(parent: own, version: .v2, top: top))
                }
            } else {
                problems.append(
                    "the cgroup v2 hierarchy at \(top) has no memory controller (its cgroup.controllers lists \(rootControllers.isEmpty ? "none" : rootControllers.joined(separator: " ")))"
                )
            }
        } else {
            problems.append("no cgroup v2 hierarchy is mounted")
        }
        if let path = membership.path(controller: "memory"), let mount = mounts.cgroup1(controller: "memory") {
            let own = locate(path, in: mount)
            if geteuid() != 0 {
                problems.append("cgroup v1 memory needs root")
            } else if access(own + "/memory.limit_in_bytes", F_OK) != 0 || access(own, W_OK) != 0 {
                problems.append("the cgroup v1 memory cgroup \(own) is not writable")
            } else {
                return .success(Placement(parent: own, version: .v1, top: mount.mountPoint))
            }
        } else {
            problems.append("no cgroup v1 memory hierarchy")
        }
        return .failure(
            SoakError(
                message: "no memory cgroup to run the soak in: " + problems.joined(separator: "; ")
                    + ". Run as root, or unprivileged in a delegated cgroup v2 subtree (systemd-run --user --scope -p Delegate=yes statectl soak ...), or use --pressure synthetic"
            ))
    }

    /// What stops a soak cgroup under `own` on v2, or `nil` when it can be arranged.
    private static func v2Problem(own: String, top: String) -> String? {
        func writable(_ file: String) -> Bool { access(file, W_OK) == 0 }
        guard writable(own) else {
            return "cannot create cgroups in \(own) (not writable: run as root or in a delegated subtree)"
        }
        // Every cgroup between the root and ours must pass `memory` down.
        var directory = own
        var chain: [String] = []
        while directory != top, directory.count > top.count {
            chain.append(directory)
            directory = (directory as NSString).deletingLastPathComponent
        }
        for child in chain.reversed() where !controllers(child + "/cgroup.controllers").contains("memory") {
            let parent = (child as NSString).deletingLastPathComponent
            if !writable(parent + "/cgroup.subtree_control") {
                return
                    "the memory controller is not enabled for \(child), and \(parent)/cgroup.subtree_control is not writable to enable it"
            }
        }
        if !isRootCgroup(own, top: top) && !controllers(own + "/cgroup.subtree_control").contains("memory") {
            guard writable(own + "/cgroup.subtree_control"), writable(own + "/cgroup.procs") else {
                return
                    "\(own)/cgroup.subtree_control or cgroup.procs is not writable (needed to enable memory for a child cgroup; a delegated subtree allows it)"
            }
        }
        return nil
    }

    /// The supervisor's own memory cgroup directory, when a soak cgroup can be made there.
    package static func writableParent() -> (path: String, version: CgroupMemory.Version)? {
        guard case .success(let placement) = placement() else { return nil }
        return (placement.parent, placement.version)
    }

    /// Creates `statestore-soak-<pid>` with `limit` in the supervisor's cgroup, arranging on v2
    /// what the kernel's rules ask for (see the type's documentation).
    static func create(limit: UInt64) throws -> SoakCgroup {
        let placement = try placement().get()
        let path = placement.parent + "/statestore-soak-\(getpid())"
        var cgroup = SoakCgroup(path: path, version: placement.version, limit: limit)
        do {
            if placement.version == .v2 { try cgroup.arrangeV2(placement) }
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw SoakError(message: "cannot create the cgroup \(path): \(String(cString: strerror(errno)))")
            }
            switch placement.version {
            case .v1:
                try cgroup.write("memory.limit_in_bytes", "\(limit)")
                // Where there is swap, the limit must bind memory, not push it to swap.
                try? cgroup.write("memory.swappiness", "0")
            case .v2:
                try cgroup.write("memory.max", "\(limit)")
                try? cgroup.write("memory.swap.max", "0")
            }
        } catch {
            cgroup.remove()
            throw error
        }
        return cgroup
    }

    /// v2: passes `memory` down from the root to the supervisor's cgroup and enables it for its
    /// children, moving the supervisor into a leaf first when it sits in that cgroup.
    private mutating func arrangeV2(_ placement: Placement) throws {
        let own = placement.parent
        var chain: [String] = []
        var directory = own
        while directory != placement.top, directory.count > placement.top.count {
            chain.append(directory)
            directory = (directory as NSString).deletingLastPathComponent
        }
        for child in chain.reversed() where !Self.controllers(child + "/cgroup.controllers").contains("memory") {
            let parent = (child as NSString).deletingLastPathComponent
            try Self.write(
                parent + "/cgroup.subtree_control", "+memory",
                why: "to enable the memory controller for \(child)")
        }
        let subtree = own + "/cgroup.subtree_control"
        if Self.isRootCgroup(own, top: placement.top) {
            // The root cgroup is exempt from the no-internal-processes rule.
            if !Self.controllers(subtree).contains("memory") {
                try Self.write(subtree, "+memory", why: "to enable the memory controller below the root cgroup")
            }
            return
        }
        guard !Self.controllers(subtree).contains("memory") else { return }
        let me = getpid()
        let others = Self.processes(in: own).filter { $0 != me }
        guard others.isEmpty else {
            throw SoakError(
                message:
                    "cannot enable the memory controller for children of \(own): it holds other processes (\(others.prefix(8).map(String.init).joined(separator: " "))), and a cgroup that passes memory down may hold none (cgroup v2's no-internal-processes rule); start the soak in a cgroup of its own (systemd-run --scope -p Delegate=yes statectl soak ...)"
            )
        }
        let leaf = own + "/statestore-soak-\(me).supervisor"
        if mkdir(leaf, 0o755) != 0 && errno != EEXIST {
            throw SoakError(message: "cannot create the cgroup \(leaf): \(String(cString: strerror(errno)))")
        }
        supervisorLeaf = leaf
        supervisorOrigin = own
        try Self.write(leaf + "/cgroup.procs", "\(me)", why: "to move the supervisor into a leaf cgroup")
        try Self.write(subtree, "+memory", why: "to enable the memory controller for the soak cgroup")
        enabledMemoryIn = own
    }

    /// Whether `directory` is the hierarchy's real root cgroup, the one exempt from the
    /// no-internal-processes rule. The top of a cgroup namespace (a container's
    /// `/sys/fs/cgroup`) is mounted like the root but is an ordinary cgroup: it has
    /// `cgroup.type`, which the root does not.
    private static func isRootCgroup(_ directory: String, top: String) -> Bool {
        directory == top && access(directory + "/cgroup.type", F_OK) != 0
    }

    private static func controllers(_ file: String) -> [String] {
        (ProcFile.readIfPresent(file) ?? "").split(whereSeparator: \.isWhitespace).map(
            String.init)
    }

    private static func processes(in directory: String) -> [Int32] {
        (ProcFile.readIfPresent(directory + "/cgroup.procs") ?? "")
            .split(separator: "\n").compactMap { Int32($0) }
    }

    /// Maps a `/proc/self/cgroup` path into the mount (strip the mount's root; outside it, the mount point).
    private static func locate(_ path: String, in mount: MountInfo.Entry) -> String {
        var relative = path
        if mount.root != "/" {
            if path == mount.root {
                relative = "/"
            } else if path.hasPrefix(mount.root + "/") {
                relative = String(path.dropFirst(mount.root.count))
            } else {
                relative = "/"
            }
        }
        if relative.split(separator: "/").contains("..") { relative = "/" }
        return relative == "/" ? mount.mountPoint : mount.mountPoint + relative
    }

    private static func write(_ file: String, _ value: String, why: String) throws {
        let fd = open(file, O_WRONLY)
        guard fd >= 0 else {
            throw SoakError(message: "cannot open \(file) \(why): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let bytes = Array((value + "\n").utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
            let reason =
                errno == EBUSY
                ? "the cgroup holds processes of its own (no-internal-processes rule)"
                : String(cString: strerror(errno))
            throw SoakError(message: "cannot write \"\(value)\" to \(file) \(why): \(reason)")
        }
    }

    func write(_ file: String, _ value: String) throws {
        let full = path + "/" + file
        let fd = open(full, O_WRONLY)
        guard fd >= 0 else { throw SoakError(message: "cannot open \(full): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array((value + "\n").utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
            throw SoakError(message: "cannot write \"\(value)\" to \(full): \(String(cString: strerror(errno)))")
        }
    }

    /// Moves process `pid` into the cgroup.
    func add(pid: Int32) throws {
        try write("cgroup.procs", "\(pid)")
    }

    /// OOM kills the kernel counted in this cgroup.
    var oomKills: UInt64 {
        let file = version == .v1 ? "/memory.oom_control" : "/memory.events"
        guard let text = ProcFile.readIfPresent(path + file) else { return 0 }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == "oom_kill" { return UInt64(fields[1]) ?? 0 }
        }
        return 0
    }

    /// The cgroup's memory, as the harness's monitor sees it.
    func read() -> CgroupMemory? { try? CgroupMemory.read(directory: path) }

    /// The processes still in the cgroup.
    var processes: [Int32] {
        (ProcFile.readIfPresent(path + "/cgroup.procs") ?? "")
            .split(separator: "\n").compactMap { Int32($0) }
    }

    /// Kills whatever is left inside and removes the directory (retrying while the kernel
    /// finishes tearing the processes down), then undoes the v2 arrangement: `memory` disabled
    /// again where it was enabled, the supervisor back in its own cgroup, its leaf removed.
    /// Returns whether the soak cgroup is gone.
    @discardableResult
    func remove() -> Bool {
        var removed = false
        for _ in 0..<100 {
            if rmdir(path) == 0 || errno == ENOENT {
                removed = true
                break
            }
            for pid in processes { kill(pid, SIGKILL) }
            usleep(20_000)
        }
        if let enabledMemoryIn {
            try? Self.write(enabledMemoryIn + "/cgroup.subtree_control", "-memory", why: "to restore it")
        }
        if let supervisorLeaf, let supervisorOrigin {
            try? Self.write(supervisorOrigin + "/cgroup.procs", "\(getpid())", why: "to move the supervisor back")
            for _ in 0..<50 {
                if rmdir(supervisorLeaf) == 0 || errno == ENOENT { break }
                usleep(20_000)
            }
        }
        return removed
    }
}

/// `--pressure synthetic`: a `root:` tree whose `proc/meminfo` the supervisor rewrites, so the
/// harness's monitor sees the scripted waves without any privilege.
struct SoakSyntheticRoot {
    let root: String
    let total: UInt64

    init(directory: String, total: UInt64) throws {
        root = directory
        self.total = total
        try FileManager.default.createDirectory(atPath: directory + "/proc", withIntermediateDirectories: true)
        write(available: total / 2)
    }

    /// Replaces `proc/meminfo` atomically (write, then rename) with `available` of ``total``.
    func write(available: UInt64) {
        let totalKB = total / 1024, availableKB = min(available, total) / 1024
        let text = """
            MemTotal:       \(totalKB) kB
            MemFree:        \(availableKB / 2) kB
            MemAvailable:   \(availableKB) kB
            Buffers:        0 kB
            Cached:         \(availableKB / 2) kB
            SwapTotal:      0 kB
            SwapFree:       0 kB

            """
        let temporary = root + "/proc/.meminfo.tmp"
        try? text.write(toFile: temporary, atomically: false, encoding: .utf8)
        rename(temporary, root + "/proc/meminfo")
    }
}
