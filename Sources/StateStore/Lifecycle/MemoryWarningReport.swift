import Foundation

/// What one memory warning did, measured by ``Application/respondToMemoryPressure(level:availableBytes:raisedAt:)``.
public struct MemoryWarningReport: Sendable, Hashable {
    public var level: MemoryPressureLevel
    /// When the warning was raised: the monitor's sample time, or the call for a simulated warning.
    public var raisedAt: Date
    /// Effective available memory (host or cgroup) when raised; `nil` for a simulated warning.
    public var availableBytes: UInt64?
    /// From ``raisedAt`` to the first controller's `didReceiveMemoryWarning`.
    public var delay: Duration
    /// From the first controller's warning to the last page returned to the system.
    public var duration: Duration
    /// Resident set size before the controllers were warned, and after memory was returned.
    public var rssBefore: UInt64
    public var rssAfter: UInt64
    /// Cost released by the controllers' and the global caches.
    public var cacheCostReleased: Int
    /// Live controllers that received the warning.
    public var controllerCount: Int

    /// Resident bytes given back (never negative).
    public var bytesFreed: UInt64 { rssBefore > rssAfter ? rssBefore - rssAfter : 0 }
}
