import Foundation

/// What one memory warning did, measured by ``Application/respondToMemoryPressure(level:availableBytes:raisedAt:)``.
public struct MemoryWarningReport: Sendable, Hashable {
    /// The level the warning was raised at; for `.normal`, which is not a warning, nothing was delivered.
    public var level: MemoryPressureLevel
    /// When the warning was raised: the monitor's sample time, or the call for a simulated warning.
    public var raisedAt: Date
    /// Effective available memory (host or cgroup) when raised; `nil` for a simulated warning.
    public var availableBytes: UInt64?
    /// From ``raisedAt`` to the first controller's `didReceiveMemoryWarning`.
    public var delay: Duration
    /// From the first controller's warning to the last page returned to the system.
    public var duration: Duration
    /// Resident set size in bytes before the controllers were warned; 0 when it cannot be read.
    public var rssBefore: UInt64
    /// Resident set size in bytes after memory was returned to the system; 0 when it cannot be read.
    public var rssAfter: UInt64
    /// Cost released by the controllers' and the global caches.
    public var cacheCostReleased: Int
    /// Live controllers that received the warning.
    public var controllerCount: Int

    /// Resident bytes given back (never negative).
    public var bytesFreed: UInt64 { rssBefore > rssAfter ? rssBefore - rssAfter : 0 }
}
