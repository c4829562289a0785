import Foundation

/// A memory-pressure event as the application handled it, stored in `pressure_events`.
public struct PressureEvent: Sendable, Hashable, Codable {
    /// When the warning was raised (the report's ``MemoryWarningReport/raisedAt``).
    public var occurredAt: Date
    /// The level the warning was raised at.
    public var level: MemoryPressureLevel
    /// Effective available memory (host or cgroup, whichever is tighter) when the event was raised.
    public var availableBytes: UInt64
    /// Resident set size in bytes before the application released its caches.
    public var rssBefore: UInt64
    /// Resident set size in bytes after the application released its caches and returned memory to the system.
    public var rssAfter: UInt64
    /// How long the response took: from the first controller's warning to the memory returned
    /// to the system (controllers, caches, the critical flush, `malloc_trim`), not counting the
    /// delay before the warning was handled.
    public var duration: Duration

    /// Bytes the response gave back (never negative).
    public var bytesFreed: UInt64 { rssBefore > rssAfter ? rssBefore - rssAfter : 0 }

    /// An event with the given values, as a report gives them or a row of `pressure_events` holds them.
    public init(
        occurredAt: Date, level: MemoryPressureLevel, availableBytes: UInt64,
        rssBefore: UInt64, rssAfter: UInt64, duration: Duration
    ) {
        self.occurredAt = occurredAt
        self.level = level
        self.availableBytes = availableBytes
        self.rssBefore = rssBefore
        self.rssAfter = rssAfter
        self.duration = duration
    }
}

extension Duration {
    /// How a pressure event's duration is stored: whole microseconds.
    var storedMicroseconds: Int64 { saturatingMicroseconds }
}
