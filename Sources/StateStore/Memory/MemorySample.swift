/// One reading of everything the monitor looks at: the host's `/proc/meminfo`, the process's
/// memory cgroup and pressure stall information, and what they add up to.
public struct MemorySample: Sendable, Equatable {
    /// The host's memory, from `/proc/meminfo`.
    public var meminfo: MemInfo
    /// The process's memory cgroup, or `nil` when there is none (or it was not read).
    public var cgroup: CgroupMemory?
    /// Memory PSI: the cgroup's `memory.pressure` on cgroup v2, else `/proc/pressure/memory`;
    /// `nil` when the kernel has no PSI (built without it, or booted with `psi=0`).
    public var pressure: PressureStall?
    /// `min(MemTotal, cgroup limit)`, in bytes.
    public var effectiveTotal: UInt64
    /// `min(MemAvailable, limit − (usage − inactive_file))`, in bytes, at most ``effectiveTotal``.
    public var effectiveAvailable: UInt64
    /// The level these numbers alone indicate, before hysteresis and rate limiting (see
    /// ``MemoryPressureMonitor/Configuration/instantaneousLevel(for:)``).
    public var level: MemoryPressureLevel
    /// The level a kernel PSI trigger (or systemd's pressure watch) that fired just before this
    /// sample stands for: `.warning` for the `some` trigger, `.critical` for the `full` one;
    /// `nil` for a timed poll. A trigger that fired is evidence of stall by itself: the
    /// `avg10` averages lag the trigger's 2 s window by seconds.
    public var stallTrigger: MemoryPressureLevel?

    /// Combines the readings; ``level`` starts at `.normal` until a configuration grades it.
    public init(
        meminfo: MemInfo, cgroup: CgroupMemory? = nil, pressure: PressureStall? = nil,
        level: MemoryPressureLevel = .normal,
        stallTrigger: MemoryPressureLevel? = nil
    ) {
        self.meminfo = meminfo
        self.stallTrigger = stallTrigger
        self.cgroup = cgroup
        self.pressure = pressure
        let total = min(meminfo.total, cgroup?.limit ?? .max)
        effectiveTotal = total
        effectiveAvailable = min(meminfo.available, cgroup?.available ?? .max, total)
        self.level = level
    }

    /// Available memory as a percentage (0–100) of ``effectiveTotal``; 100 when the total is 0
    /// (an unusable reading must not raise an alarm on its own).
    public var availablePercent: Double {
        guard effectiveTotal > 0 else { return 100 }
        return Double(effectiveAvailable) / Double(effectiveTotal) * 100
    }

    /// `true` when a cgroup limit, not the host, determines ``effectiveAvailable``.
    public var isCgroupBound: Bool {
        guard let available = cgroup?.available else { return false }
        return available < meminfo.available
    }
}
