extension CgroupMemory {
    /// One cgroup directory's numbers.
    public struct Level: Sendable, Equatable {
        /// The directory.
        public var path: String
        /// The hard limit (v2 `memory.max`, v1 `memory.limit_in_bytes`); `nil` when unlimited.
        public var max: UInt64?
        /// v2 `memory.high`, the throttling limit; `nil` when `max` or on v1.
        public var high: UInt64?
        /// Charged bytes (v2 `memory.current`, v1 `memory.usage_in_bytes`).
        public var usage: UInt64
        /// v2 `memory.stat` `inactive_file`, v1 `memory.stat` `total_inactive_file`.
        public var inactiveFile: UInt64

        /// A directory's numbers as given, in bytes; `nil` for `max` or `high` means no limit.
        public init(path: String, max: UInt64?, high: UInt64? = nil, usage: UInt64, inactiveFile: UInt64) {
            self.path = path
            self.max = max
            self.high = high
            self.usage = usage
            self.inactiveFile = inactiveFile
        }

        /// `min(max, high)`: the kernel throttles and reclaims hard at `memory.high`, so that is
        /// where an application feels the wall. `nil` when neither is set.
        public var effectiveLimit: UInt64? {
            switch (max, high) {
            case let (max?, high?): Swift.min(max, high)
            case let (max?, nil): max
            case let (nil, high?): high
            case (nil, nil): nil
            }
        }

        /// Bytes in use that the kernel cannot simply drop: `usage − inactive_file`.
        public var workingSet: UInt64 { usage > inactiveFile ? usage - inactiveFile : 0 }

        /// `limit − (usage − inactive_file)`, clamped at zero; `nil` when unlimited.
        public var available: UInt64? {
            guard let limit = effectiveLimit else { return nil }
            return limit > workingSet ? limit - workingSet : 0
        }
    }
}
