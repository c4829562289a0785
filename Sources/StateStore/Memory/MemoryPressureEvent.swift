import Foundation

/// A change (or a rate-limited repeat) of the memory-pressure level.
public struct MemoryPressureEvent: Sendable, Equatable {
    /// What made the level what it is.
    public enum Trigger: String, Sendable, Codable {
        /// Available memory (host or cgroup) fell below a threshold.
        case availableMemory
        /// Pressure stall information crossed a threshold.
        case pressureStall
        /// The condition eased past the hysteresis margin: the level went down.
        case recovery
        /// The level held; this is a rate-limited reminder.
        case `repeat`
    }

    /// What woke the monitor up for the sample behind this event.
    public enum Source: String, Sendable, Codable {
        /// A timed poll.
        case poll
        /// A PSI trigger the monitor registered fired.
        case pressureStallTrigger
        /// systemd's `$MEMORY_PRESSURE_WATCH` fired.
        case systemdWatch
        /// A direct call: ``MemoryPressureMonitor/refresh(source:)``, or
        /// ``MemoryPressureMonitor/report(_:)`` for an outside warning (then
        /// ``MemoryPressureEvent/externalWarning`` names it).
        case manual
    }

    /// When the event was raised.
    public var time: Date
    /// The new level.
    public var level: MemoryPressureLevel
    /// The level before (equal to ``level`` for a repeat).
    public var previousLevel: MemoryPressureLevel
    /// The sample's effective available bytes.
    public var availableBytes: UInt64
    /// The sample's effective total bytes.
    public var totalBytes: UInt64
    /// Why the level is what it is.
    public var trigger: Trigger
    /// What woke the monitor.
    public var source: Source
    /// For an event raised on a PSI trigger or systemd watch wake-up: how long before the next
    /// timed poll was due it came, so how much earlier than polling alone. `nil` otherwise.
    public var aheadOfPoll: Duration?
    /// For an event raised on an outside warning (``MemoryPressureMonitor/report(_:)``): that
    /// warning. When its level is above the monitor's own reading of the sample, the event's
    /// ``level`` and ``trigger`` are the warning's. `nil` otherwise.
    public var externalWarning: ExternalMemoryWarning?

    /// An event with the given values; `aheadOfPoll` is `nil` unless a PSI trigger or systemd watch raised it.
    public init(
        time: Date, level: MemoryPressureLevel, previousLevel: MemoryPressureLevel, availableBytes: UInt64,
        totalBytes: UInt64, trigger: Trigger, source: Source, aheadOfPoll: Duration? = nil
    ) {
        self.aheadOfPoll = aheadOfPoll
        self.time = time
        self.level = level
        self.previousLevel = previousLevel
        self.availableBytes = availableBytes
        self.totalBytes = totalBytes
        self.trigger = trigger
        self.source = source
    }
}
