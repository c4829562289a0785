import Foundation
import StateStore

/// The machine's memory as a test sets it: the files `MemoryPressureMonitor` reads
/// (`/proc/meminfo`, the process's memory cgroup, `/proc/pressure/memory`), written in a folder
/// of the test's own, and a live monitor reading them.
///
/// The warning reaches the app the way production's does: the monitor's thread reads the
/// files, grades them with the production thresholds, hysteresis and hold time, and hands the
/// level to the main actor, where `Application.respondToMemoryPressure` tells every controller,
/// purges the caches, trims the heap and measures RSS. Nothing is called on the app's behalf.
///
/// ```swift
/// let memory = try SimulatedMemory(in: store)
/// memory.observe(by: launch.application)
/// let report = try await memory.raise(to: .critical, for: launch.application)
/// // report.cacheCostReleased, report.bytesFreed; the app's caches are empty
/// ```
///
/// Only the polling is quicker than production's (every 10 ms), so a test does not wait for a
/// warning; the thresholds, the hysteresis and the hold time before a level may go down are the
/// `MemoryPressureMonitor.Configuration` given (its defaults unless you pass one).
@MainActor
public final class SimulatedMemory {
    /// The folder standing in for `/`: `proc/meminfo`, `proc/pressure/memory` and, with a
    /// cgroup, `sys/fs/cgroup/app/memory.{max,current,stat}`.
    public let root: String
    /// The monitor reading ``root``. It runs while an application observes it
    /// (``observe(by:)``), as an app's own monitor does.
    public let monitor: MemoryPressureMonitor
    /// The machine's memory, `MemTotal`.
    public let totalBytes: UInt64
    /// The memory cgroup's limit (`memory.max`), or `nil` for a process outside any limit.
    public let cgroupLimit: UInt64?
    /// `MemAvailable`, as last written (in whole kilobytes, as the file counts).
    public private(set) var availableBytes: UInt64
    /// The cgroup's charged bytes (`memory.current`), as last written.
    public private(set) var cgroupUsage: UInt64
    /// PSI `some avg10` and `full avg10`, in percent, as last written.
    public private(set) var pressureStall: (some: Double, full: Double) = (0, 0)

    /// The cgroup's folder under ``root``, as the monitor's `cgroupPath`.
    static let cgroupPath = "sys/fs/cgroup/app"

    /// Writes a machine with plenty of room (60 % available, no stall) in a folder `memory`
    /// inside `store`'s folder, and makes the monitor that reads it.
    ///
    /// - Parameters:
    ///   - store: Whose folder holds the files (removed with it).
    ///   - totalBytes: `MemTotal`. 8 GiB by default.
    ///   - cgroupLimit: A memory cgroup (v2) limit the process runs under; `nil` for none. The
    ///     monitor grades against the smaller of the two, as it does on a real machine.
    ///   - configuration: Thresholds, hysteresis and hold time, as the app's own monitor has
    ///     them. Its `root`, `cgroupPath`, polling intervals and kernel triggers are the kit's.
    /// - Throws: ``StateStoreTestingError/memoryFilesNotWritten(path:reason:)``; a `MemoryError`
    ///   for a configuration the monitor refuses.
    public init(
        in store: TemporaryStore, totalBytes: UInt64 = 8 << 30, cgroupLimit: UInt64? = nil,
        configuration: MemoryPressureMonitor.Configuration = .init()
    ) throws {
        root = store.folder + "/memory"
        self.totalBytes = totalBytes
        self.cgroupLimit = cgroupLimit
        availableBytes = Self.bytes(percent: 60, of: totalBytes)
        cgroupUsage = cgroupLimit.map { $0 / 10 } ?? 0
        var configuration = configuration
        configuration.root = root
        configuration.cgroupPath = cgroupLimit == nil ? nil : Self.cgroupPath
        configuration.readsCgroup = cgroupLimit != nil
        configuration.minimumPollingInterval = .milliseconds(10)
        configuration.maximumPollingInterval = .milliseconds(10)
        // Fixture files raise no kernel event: the monitor polls them.
        configuration.usesPressureStallTriggers = false
        configuration.usesSystemdPressureWatch = false
        try Self.writeFiles(
            in: root, total: totalBytes, available: availableBytes, cgroupLimit: cgroupLimit, usage: cgroupUsage,
            stall: (0, 0))
        monitor = try MemoryPressureMonitor(configuration: configuration)
    }

    /// Delivers the monitor's warnings to `application` (`observeMemoryPressure`), which starts
    /// the monitor. Call it again for each relaunch's application: a relaunch after a kill stops
    /// the monitors its application observed, as the process's death would.
    public func observe(by application: Application) {
        application.observeMemoryPressure(monitor)
    }

    /// Sets `MemAvailable`.
    public func setAvailable(_ bytes: UInt64) throws(StateStoreTestingError) {
        // `/proc/meminfo` counts in kB.
        availableBytes = min(bytes, totalBytes) / 1024 * 1024
        try writeFiles()
    }

    /// Sets the cgroup's charged bytes (`memory.current`); only with a ``cgroupLimit``.
    public func setCgroupUsage(_ bytes: UInt64) throws(StateStoreTestingError) {
        cgroupUsage = bytes
        try writeFiles()
    }

    /// Sets PSI's `some avg10` and `full avg10` (percent of time stalled).
    public func setPressureStall(some: Double, full: Double) throws(StateStoreTestingError) {
        pressureStall = (some, full)
        try writeFiles()
    }

    /// Moves the memory to `level`, as the default thresholds grade it, and waits until
    /// `application` has responded to a warning of that level or higher; returns the report of
    /// that response (what the caches released, RSS before and after).
    ///
    /// `.warning` leaves 20 % of the effective total available, `.critical` 10 % (with a cgroup
    /// limit, by raising its `memory.current`; else by lowering `MemAvailable`), `.normal` 60 %,
    /// with no stall. A return to `.normal` is not a warning: it returns once the files say so,
    /// with `nil`; the monitor lowers its level only after its hold time (5 s by default).
    ///
    /// - Parameters:
    ///   - level: The level to move the memory to.
    ///   - application: The application whose response to wait for; it must observe the
    ///     monitor (``observe(by:)``).
    ///   - timeout: How long to wait for the response, counting only the time this wait had
    ///     the main actor (other tests running in parallel can keep it busy, and the warning
    ///     is delivered there). A warning arrives within milliseconds.
    /// - Returns: The report of the application's response; `nil` for `.normal`.
    /// - Throws: ``StateStoreTestingError/noMemoryWarning(level:within:lastReceived:)`` when
    ///   none comes, with what the application last received.
    @discardableResult
    public func raise(
        to level: MemoryPressureLevel, for application: Application, timeout: Duration = .seconds(10)
    ) async throws -> MemoryWarningReport? {
        let before = application.memoryWarningCount
        let percent: UInt64 =
            switch level {
            case .normal: 60
            case .warning: 20
            case .critical: 10
            }
        if let cgroupLimit {
            availableBytes = Self.bytes(percent: 60, of: totalBytes)
            cgroupUsage = cgroupLimit / 100 * (100 - percent)
        } else {
            availableBytes = Self.bytes(percent: percent, of: totalBytes)
        }
        pressureStall = (0, 0)
        try writeFiles()
        guard level > .normal else { return nil }
        return try await nextWarning(at: level, for: application, after: before, timeout: timeout)
    }

    /// Waits until `application` has responded to a warning of `level` or higher after its
    /// `count`-th one (`Application.memoryWarningCount`), letting the main actor run meanwhile:
    /// for a change made with ``setAvailable(_:)``, ``setCgroupUsage(_:)`` or
    /// ``setPressureStall(some:full:)``.
    ///
    /// - Parameters:
    ///   - level: The least level of the warning to wait for.
    ///   - application: The application whose response to wait for.
    ///   - count: `application.memoryWarningCount` before the change.
    ///   - timeout: How long to wait.
    /// - Returns: The report of the application's response.
    /// - Throws: ``StateStoreTestingError/noMemoryWarning(level:within:lastReceived:)``.
    public func nextWarning(
        at level: MemoryPressureLevel, for application: Application, after count: Int,
        timeout: Duration = .seconds(10)
    ) async throws -> MemoryWarningReport {
        func received() -> MemoryWarningReport? {
            guard application.memoryWarningCount > count, let report = application.lastMemoryWarning,
                report.level >= level
            else { return nil }
            return report
        }
        // The time this wait had the main actor, not the time since it began: the warning is
        // delivered on the main actor, and other tests running in parallel can keep it busy for
        // minutes, during which nothing could have arrived. A turn counts for 50 ms at most.
        let clock = ContinuousClock()
        var waited = Duration.zero
        while waited < timeout {
            if let report = received() { return report }
            let start = clock.now
            try await Task.sleep(for: .milliseconds(2))
            waited += min(clock.now - start, .milliseconds(50))
        }
        if let report = received() { return report }
        throw StateStoreTestingError.noMemoryWarning(
            level: level, within: timeout, lastReceived: application.lastMemoryWarning?.level)
    }

    /// `percent` of `total`, in whole kilobytes (as `/proc/meminfo` counts).
    private static func bytes(percent: UInt64, of total: UInt64) -> UInt64 {
        total / 100 * percent / 1024 * 1024
    }

    /// Writes every file from the values held.
    private func writeFiles() throws(StateStoreTestingError) {
        try Self.writeFiles(
            in: root, total: totalBytes, available: availableBytes, cgroupLimit: cgroupLimit, usage: cgroupUsage,
            stall: pressureStall)
    }

    private static func writeFiles(
        in root: String, total: UInt64, available: UInt64, cgroupLimit: UInt64?, usage: UInt64,
        stall: (some: Double, full: Double)
    ) throws(StateStoreTestingError) {
        try write(
            """
            MemTotal:       \(total / 1024) kB
            MemFree:        \(available / 2048) kB
            MemAvailable:   \(available / 1024) kB
            Buffers:        0 kB
            Cached:         0 kB

            """, to: "proc/meminfo", in: root)
        try write(
            """
            some avg10=\(String(format: "%.2f", stall.some)) avg60=0.00 avg300=0.00 total=0
            full avg10=\(String(format: "%.2f", stall.full)) avg60=0.00 avg300=0.00 total=0

            """, to: "proc/pressure/memory", in: root)
        if let cgroupLimit {
            try write("\(cgroupLimit)\n", to: cgroupPath + "/memory.max", in: root)
            try write("\(usage)\n", to: cgroupPath + "/memory.current", in: root)
            try write("anon \(usage)\ninactive_file 0\n", to: cgroupPath + "/memory.stat", in: root)
        }
    }

    /// Writes `text` at `relative` under ``root`` by a rename, so the monitor's thread reads the
    /// old file or the new, never a part.
    private static func write(_ text: String, to relative: String, in root: String) throws(StateStoreTestingError) {
        let path = root + "/" + relative
        do {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .memoryFilesNotWritten(path: path, reason: "\(error)")
        }
    }
}
