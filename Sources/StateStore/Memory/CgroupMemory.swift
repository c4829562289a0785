/// The memory limit and usage of the cgroup a process runs in — what a container really has,
/// where `/proc/meminfo` only shows the host.
///
/// Read from cgroup v2 (`memory.max`, `memory.high`, `memory.current`, `memory.stat`,
/// `memory.pressure`, `memory.events`) or v1 (`memory.limit_in_bytes`, `memory.usage_in_bytes`,
/// `memory.stat`). The process's cgroup and every ancestor up to the hierarchy's root are read:
/// a parent's limit binds its children, and siblings share it, so the tightest headroom wins.
///
/// See the kernel's [cgroup v2](https://docs.kernel.org/admin-guide/cgroup-v2.html) and
/// [cgroup v1 memory](https://docs.kernel.org/admin-guide/cgroup-v1/memory.html) documents.
public struct CgroupMemory: Sendable, Equatable {
    /// The cgroup interface version.
    public enum Version: Int, Sendable, Codable {
        /// cgroup v1, a hierarchy per controller: `memory.limit_in_bytes`, `memory.usage_in_bytes`.
        case v1 = 1
        /// cgroup v2, the unified hierarchy: `memory.max`, `memory.high`, `memory.current`.
        case v2 = 2
    }

    /// The interface the numbers came from.
    public var version: Version
    /// The process's cgroup directory (including any `root:` prefix).
    public var path: String
    /// The process's cgroup first, then each ancestor read, up to the hierarchy's root.
    public var hierarchy: [Level]
    /// v2 `memory.pressure` of the process's cgroup; `nil` for v1 or when the file is absent.
    public var pressure: PressureStall?
    /// v2 `memory.events` of the process's cgroup; `nil` for v1 or when the file is absent.
    public var events: Events?

    /// Numbers as given; `hierarchy` lists the process's cgroup first, then its ancestors.
    public init(
        version: Version, path: String, hierarchy: [Level], pressure: PressureStall? = nil, events: Events? = nil
    ) {
        self.version = version
        self.path = path
        self.hierarchy = hierarchy
        self.pressure = pressure
        self.events = events
    }

    /// The level whose limit leaves the least headroom, or `nil` when no level has a limit.
    public var bindingLevel: Level? {
        var binding: Level?
        for level in hierarchy {
            guard let available = level.available else { continue }
            if let current = binding?.available, current <= available { continue }
            binding = level
        }
        return binding
    }

    /// The binding limit in bytes (`min(memory.max, memory.high)` on v2); `nil` when unlimited.
    public var limit: UInt64? { bindingLevel?.effectiveLimit }

    /// Bytes charged to the binding cgroup (to the process's own cgroup when nothing is limited).
    public var usage: UInt64 { (bindingLevel ?? hierarchy.first)?.usage ?? 0 }

    /// Inactive file-backed bytes of that same cgroup: page cache the kernel reclaims first.
    public var inactiveFile: UInt64 { (bindingLevel ?? hierarchy.first)?.inactiveFile ?? 0 }

    /// `limit − (usage − inactive_file)` of the binding cgroup, or `nil` when nothing is limited.
    public var available: UInt64? { bindingLevel?.available }
}
