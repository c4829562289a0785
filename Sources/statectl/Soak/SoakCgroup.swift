import Foundation
import Glibc
import StateStore

/// The memory cgroup a cgroup-mode soak runs in: created under the supervisor's own memory
/// cgroup with the limit, joined by the harness and the ballast, removed at the end.
///
/// cgroup v1 (`memory.limit_in_bytes`, `memory.oom_control`'s `oom_kill`) and v2 (`memory.max`,
/// `memory.events`' `oom_kill`, the parent's `cgroup.subtree_control` must list `memory`).
struct SoakCgroup {
    let path: String
    let version: CgroupMemory.Version
    let limit: UInt64

    /// The supervisor's own memory cgroup directory, when this process may create children in it.
    static func writableParent() -> (path: String, version: CgroupMemory.Version)? {
        guard geteuid() == 0, let own = try? CgroupMemory.discover() else { return nil }
        guard access(own.path, W_OK) == 0 else { return nil }
        if own.version == .v2 {
            // Children of a v2 cgroup get a memory controller only when the parent delegates it.
            let controllers = (try? String(contentsOfFile: own.path + "/cgroup.subtree_control", encoding: .utf8)) ?? ""
            guard controllers.split(whereSeparator: \.isWhitespace).contains("memory") else { return nil }
        }
        return (own.path, own.version)
    }

    /// Creates `statestore-soak-<pid>` with `limit` under ``writableParent()``.
    static func create(limit: UInt64) throws -> SoakCgroup {
        guard let parent = writableParent() else {
            throw CLIError(message: "no writable memory cgroup (run as root on a machine with a cgroup v1 memory controller or a delegated v2 one), or use --pressure synthetic")
        }
        let path = parent.path + "/statestore-soak-\(getpid())"
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw CLIError(message: "cannot create the cgroup \(path): \(String(cString: strerror(errno)))")
        }
        let cgroup = SoakCgroup(path: path, version: parent.version, limit: limit)
        do {
            switch parent.version {
            case .v1:
                try cgroup.write("memory.limit_in_bytes", "\(limit)")
                // No swap here, but where there is, the limit must bind memory, not push it to swap.
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

    func write(_ file: String, _ value: String) throws {
        let full = path + "/" + file
        let fd = open(full, O_WRONLY)
        guard fd >= 0 else { throw CLIError(message: "cannot open \(full): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array((value + "\n").utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else {
            throw CLIError(message: "cannot write \"\(value)\" to \(full): \(String(cString: strerror(errno)))")
        }
    }

    /// Moves process `pid` into the cgroup.
    func add(pid: Int32) throws {
        try write("cgroup.procs", "\(pid)")
    }

    /// OOM kills the kernel counted in this cgroup.
    var oomKills: UInt64 {
        let file = version == .v1 ? "/memory.oom_control" : "/memory.events"
        guard let text = try? String(contentsOfFile: path + file, encoding: .utf8) else { return 0 }
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
        ((try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? "")
            .split(separator: "\n").compactMap { Int32($0) }
    }

    /// Kills whatever is left inside and removes the directory (retrying while the kernel
    /// finishes tearing the processes down). Returns whether it is gone.
    @discardableResult
    func remove() -> Bool {
        for _ in 0..<100 {
            if rmdir(path) == 0 || errno == ENOENT { return true }
            for pid in processes { kill(pid, SIGKILL) }
            usleep(20_000)
        }
        return false
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
