extension CgroupMemory {
    /// Counters from a v2 cgroup's `memory.events`.
    public struct Events: Sendable, Equatable {
        /// Every counter in the file.
        public var values: [String: UInt64]
        /// Times usage went over `memory.high` and the cgroup was throttled.
        public var high: UInt64 { values["high"] ?? 0 }
        /// Times usage hit `memory.max`.
        public var max: UInt64 { values["max"] ?? 0 }
        /// Times the cgroup hit its limit and the OOM path ran.
        public var oom: UInt64 { values["oom"] ?? 0 }
        /// Processes in the cgroup killed by the OOM killer.
        public var oomKill: UInt64 { values["oom_kill"] ?? 0 }

        /// Counters keyed by their name in `memory.events` (`high`, `max`, `oom`, `oom_kill`, …).
        public init(values: [String: UInt64]) { self.values = values }

        /// Parses the text of `memory.events`.
        public static func parse(_ text: String, file: String = "memory.events") throws(MemoryError) -> Events {
            Events(values: try FlatKeyedFile.parse(text, file: file))
        }
    }
}
