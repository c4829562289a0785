extension MemoryPressureMonitor {
    /// Where the monitor reads from and how it grades what it reads.
    ///
    /// ## Why these defaults
    ///
    /// - **Available memory.** `warning` at ≤ 25 % and `critical` at ≤ 15 % of the effective
    ///   total are Chrome's Linux thresholds (`SystemMemoryPressureEvaluator`: moderate at 75 %
    ///   used, critical at 85 % used). `critical` stays above earlyoom's default, which sends
    ///   SIGTERM at 10 % available and SIGKILL at 5 %, so caches are released before anything is
    ///   killed.
    /// - **PSI.** `warning` when `some avg10` ≥ 10 %: the same 200 ms per 2 s that systemd
    ///   writes by default into `$MEMORY_PRESSURE_WRITE` (`some 200000 2000000`), close to
    ///   Android lmkd's partial-stall default (70 ms per 1 s). `critical` when `full avg10` ≥
    ///   30 %: half of systemd-oomd's default kill limit (60 % over 30 s) and below lmkd's
    ///   complete-stall default (700 ms per 1 s), so the application acts first.
    /// - **Hysteresis.** 5 percentage points on both scales, and a level is held at least 5 s
    ///   before it may go down: a sample hovering on a threshold does not flap.
    /// - **Repeats.** While under pressure, the level is repeated at most every 10 s (Chrome's
    ///   moderate-pressure cooldown), so late-comers are told without an event storm. Escalation
    ///   is never delayed.
    /// - **Polling.** Every 1 s with plenty of headroom, down to every 100 ms near the critical
    ///   threshold: the cost of a poll is three small file reads.
    public struct Configuration: Sendable, Equatable {
        /// A directory standing in for `/`: `<root>/proc/meminfo`, `<root>/proc/pressure/memory`,
        /// `<root>/proc/self/cgroup`, `<root>/proc/self/mountinfo`, `<root>/sys/fs/cgroup/…`.
        public var root: String
        /// A cgroup directory (relative to ``root``) to watch instead of the process's own, for
        /// supervising a child or a container; `nil` discovers the process's cgroup.
        public var cgroupPath: String?
        /// Whether to read the memory cgroup at all.
        public var readsCgroup: Bool
        /// `warning` at or below this percentage of effective memory available.
        public var warningAvailablePercent: Double
        /// `critical` at or below this percentage of effective memory available.
        public var criticalAvailablePercent: Double
        /// `warning` when PSI `some avg10` reaches this percentage; `nil` ignores PSI for warnings.
        public var warningPressureStallPercent: Double?
        /// `critical` when PSI `full avg10` reaches this percentage; `nil` ignores PSI for critical.
        public var criticalPressureStallPercent: Double?
        /// Percentage points a reading must clear a threshold by before the level goes down.
        public var hysteresisPercent: Double
        /// How long a level is held before it may go down.
        public var minimumLevelDuration: Duration
        /// The shortest time between two events for the same level; `nil` never repeats.
        public var repeatInterval: Duration?
        /// Polling interval when headroom is nearly gone.
        public var minimumPollingInterval: Duration
        /// Polling interval with plenty of headroom.
        public var maximumPollingInterval: Duration
        /// Register kernel PSI triggers (`some 200000 2000000`, `full 600000 2000000`) to wake up
        /// at once when stalls start; falls back to polling where the kernel refuses.
        public var usesPressureStallTriggers: Bool
        /// Honour systemd's `$MEMORY_PRESSURE_WATCH` / `$MEMORY_PRESSURE_WRITE` (only with root `/`).
        public var usesSystemdPressureWatch: Bool
        /// Where those two variables are read: the process's environment when `nil`. A test
        /// hands its own, since setting the process's would reach every child process started
        /// meanwhile (and `setenv` races with threads that read the environment).
        var environment: [String: String]?

        /// A configuration with the given values; the defaults are those explained above. Nothing is
        /// checked here: ``validate()`` does that.
        public init(
            root: String = "/",
            cgroupPath: String? = nil,
            readsCgroup: Bool = true,
            warningAvailablePercent: Double = 25,
            criticalAvailablePercent: Double = 15,
            warningPressureStallPercent: Double? = 10,
            criticalPressureStallPercent: Double? = 30,
            hysteresisPercent: Double = 5,
            minimumLevelDuration: Duration = .seconds(5),
            repeatInterval: Duration? = .seconds(10),
            minimumPollingInterval: Duration = .milliseconds(100),
            maximumPollingInterval: Duration = .seconds(1),
            usesPressureStallTriggers: Bool = true,
            usesSystemdPressureWatch: Bool = true
        ) {
            self.root = root
            self.cgroupPath = cgroupPath
            self.readsCgroup = readsCgroup
            self.warningAvailablePercent = warningAvailablePercent
            self.criticalAvailablePercent = criticalAvailablePercent
            self.warningPressureStallPercent = warningPressureStallPercent
            self.criticalPressureStallPercent = criticalPressureStallPercent
            self.hysteresisPercent = hysteresisPercent
            self.minimumLevelDuration = minimumLevelDuration
            self.repeatInterval = repeatInterval
            self.minimumPollingInterval = minimumPollingInterval
            self.maximumPollingInterval = maximumPollingInterval
            self.usesPressureStallTriggers = usesPressureStallTriggers
            self.usesSystemdPressureWatch = usesSystemdPressureWatch
        }

        /// Throws ``MemoryError/invalidConfiguration(name:reason:)`` for a duration the monitor
        /// cannot honour: a negative ``minimumLevelDuration``, a ``repeatInterval`` that is not
        /// positive, a ``minimumPollingInterval`` under a millisecond (a busy loop), or a
        /// ``maximumPollingInterval`` below the minimum.
        /// ``MemoryPressureMonitor/init(configuration:logger:metricsFactory:)`` calls it; call it yourself
        /// to check a configuration read from elsewhere.
        public func validate() throws(MemoryError) {
            guard minimumLevelDuration >= .zero else {
                throw .invalidConfiguration(
                    name: "minimumLevelDuration", reason: "is \(minimumLevelDuration); it must be zero or more")
            }
            if let repeatInterval, repeatInterval <= .zero {
                throw .invalidConfiguration(
                    name: "repeatInterval",
                    reason: "is \(repeatInterval); it must be more than zero (or nil never to repeat a level)")
            }
            guard minimumPollingInterval >= .milliseconds(1) else {
                throw .invalidConfiguration(
                    name: "minimumPollingInterval",
                    reason:
                        "is \(minimumPollingInterval); it must be at least 1 ms, or the monitor would poll in a busy loop"
                )
            }
            guard maximumPollingInterval >= minimumPollingInterval else {
                throw .invalidConfiguration(
                    name: "maximumPollingInterval",
                    reason:
                        "is \(maximumPollingInterval); it must be at least minimumPollingInterval (\(minimumPollingInterval))"
                )
            }
        }
    }
}
