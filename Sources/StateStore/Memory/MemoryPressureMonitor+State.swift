extension MemoryPressureMonitor {
    /// What the level computation remembers between samples.
    public struct State: Sendable, Equatable {
        /// The current (hysteresis-filtered) level.
        public var level: MemoryPressureLevel
        /// When the current level was entered; `nil` before the first sample.
        public var levelSince: ContinuousClock.Instant?
        /// When the last event was raised; `nil` when none was.
        public var lastEvent: ContinuousClock.Instant?

        /// A state with the given values; the default is the state before the first sample.
        public init(
            level: MemoryPressureLevel = .normal, levelSince: ContinuousClock.Instant? = nil,
            lastEvent: ContinuousClock.Instant? = nil
        ) {
            self.level = level
            self.levelSince = levelSince
            self.lastEvent = lastEvent
        }
    }
}
