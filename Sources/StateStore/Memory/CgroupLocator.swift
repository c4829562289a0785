/// Remembers where the process's memory cgroup is, so that a running monitor does not parse
/// `mountinfo` and map the cgroup path at every sample.
///
/// The location can only change when the process moves to another cgroup, which changes
/// `/proc/self/cgroup`: each sample reads that short file and compares it with the one the
/// location was found from, and discovers again (``CgroupMemory/discover(root:)``) only when it
/// differs, or when the remembered directory can no longer be read (the cgroup was removed,
/// the hierarchy remounted). The memory files themselves are read at every sample, as before.
final class CgroupLocator: Sendable {
    /// The locator the monitors share, keyed by their root.
    static let shared = CgroupLocator()

    private struct Location: Sendable {
        /// The `/proc/self/cgroup` text the location was found from.
        var membership: String
        var directory: String
        var version: CgroupMemory.Version
    }

    private let locations = Lock<[String: Location]>([:])

    /// The memory cgroup of the current process under `root`, as ``CgroupMemory/discover(root:)``
    /// finds it, discovering again only when the process's membership changed.
    func memory(root: String) throws(MemoryError) -> CgroupMemory {
        let membership = try ProcFile.read(ProcFile.join(root, "/proc/self/cgroup"))
        if let known = locations.withLock({ $0[root] }), known.membership == membership,
            let memory = try? CgroupMemory.read(directory: known.directory, version: known.version)
        {
            return memory
        }
        let memory = try CgroupMemory.discover(root: root)
        let location = Location(membership: membership, directory: memory.path, version: memory.version)
        locations.withLock { $0[root] = location }
        return memory
    }

    /// How long the monitor thread sleeps between samples: the configured interval, five times
    /// longer at the normal level while a PSI trigger or systemd watch is armed (it wakes the
    /// thread as soon as pressure starts, so polling is only the fallback for slow drifts in
    /// available memory).
    static func pollingInterval(_ interval: Duration, watchArmed: Bool, level: MemoryPressureLevel?) -> Duration {
        guard watchArmed, level == .normal else { return interval }
        return interval * armedPollingFactor
    }

    /// The factor by which an armed watch stretches the polling interval at the normal level.
    static let armedPollingFactor = 5
}
