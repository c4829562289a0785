import Foundation
import StateStore
import StateStoreGTK4

/// Feeds GLib's own low-memory warnings (`GMemoryMonitor`'s `low-memory-warning`) into a
/// `MemoryPressureMonitor`, as one more source of the same levels.
///
/// GLib reads them from the low-memory-monitor service on the system bus, or from the desktop
/// portal inside a sandbox; both grade the kernel's pressure stall information. Each warning
/// becomes `MemoryPressureMonitor.report(_:)`: the monitor samples at once and takes the
/// warning's level as a floor for that sample, so a warning above the level the monitor reads
/// itself raises one event (with the warning in `MemoryPressureEvent.externalWarning`), and a
/// warning at or below it raises nothing: the two sources are deduplicated, and the monitor's
/// hysteresis and rate limits apply to both.
///
/// | GLib's level | `MemoryPressureLevel` |
/// |---|---|
/// | `G_MEMORY_MONITOR_WARNING_LEVEL_LOW` (50): free memory to keep the interactive experience smooth | `.warning` |
/// | `G_MEMORY_MONITOR_WARNING_LEVEL_MEDIUM` (100): background processes should quit | `.warning` |
/// | `G_MEMORY_MONITOR_WARNING_LEVEL_CRITICAL` (255): the system will start killing processes | `.critical` |
///
/// A level under 50 (GLib defines none) asks only for a fresh reading.
///
/// ``GTKApplication`` makes one for each monitor its application observes
/// (`Application.observedMemoryMonitors`) once `launch` has run, unless
/// ``GTKApplication/feedsGLibMemoryWarnings`` is `false`. Where no low-memory-monitor runs (no
/// system bus, or the service not installed), GLib never warns, and the monitor's own readings
/// of `/proc`, the cgroup and PSI are the only source.
///
/// Made and used on the main thread: GLib delivers the signal in the main context, which GTK's
/// loop runs.
@MainActor
public final class GLibMemoryWarnings {
    /// The sender (`ExternalMemoryWarning.sender`) of the warnings this feeds: `"GMemoryMonitor"`.
    public static let sender = "GMemoryMonitor"

    /// A warning GLib gave, and what the monitor made of it.
    public struct Warning: Sendable {
        /// GLib's level: 50, 100 or 255.
        public var glibLevel: Int
        /// The level it stands for (see the table above).
        public var level: MemoryPressureLevel
        /// The event the monitor raised for it; `nil` when the monitor's level already was as
        /// high (the warning was deduplicated), or `/proc/meminfo` could not be read.
        public var event: MemoryPressureEvent?
    }

    /// The monitor the warnings feed.
    public let monitor: MemoryPressureMonitor

    /// Called on the main thread for each warning, after the monitor took it.
    public var onWarning: (@MainActor (Warning) -> Void)?

    private var glibMonitor: OpaquePointer?
    private var handler: gulong = 0

    /// Connects to GLib's default `GMemoryMonitor` (`g_memory_monitor_dup_default`) and feeds its
    /// warnings to `monitor` until ``stop()``.
    public init(feeding monitor: MemoryPressureMonitor) {
        self.monitor = monitor
        glibMonitor = g_memory_monitor_dup_default()
        guard let glibMonitor else { return }
        handler = cgtk_connect_low_memory_warning(
            glibMonitor,
            { _, level, data in
                let box = Unmanaged<GLibMemoryWarnings>.fromOpaque(data!)
                let glibLevel = Int(level.rawValue)
                if Thread.isMainThread {
                    MainActor.assumeIsolated { box.takeUnretainedValue().warn(glibLevel: glibLevel) }
                } else {
                    // A GMemoryMonitor first made on another thread signals in that thread's
                    // context: hop to the main thread, holding the object until then.
                    let held = box.retain()
                    DispatchQueue.main.async { held.takeRetainedValue().warn(glibLevel: glibLevel) }
                }
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    isolated deinit { stop() }

    /// Stops taking GLib's warnings.
    public func stop() {
        guard let glibMonitor else { return }
        g_signal_handler_disconnect(UnsafeMutableRawPointer(glibMonitor), handler)
        g_object_unref(UnsafeMutableRawPointer(glibMonitor))
        self.glibMonitor = nil
    }

    /// The level a GLib warning level stands for: 255 and over `.critical`, 50 and over
    /// `.warning`, `.normal` under 50.
    public nonisolated static func level(forGLibLevel glibLevel: Int) -> MemoryPressureLevel {
        if glibLevel >= Int(G_MEMORY_MONITOR_WARNING_LEVEL_CRITICAL.rawValue) { return .critical }
        if glibLevel >= Int(G_MEMORY_MONITOR_WARNING_LEVEL_LOW.rawValue) { return .warning }
        return .normal
    }

    /// Takes one of GLib's warnings, as its signal does.
    func warn(glibLevel: Int) {
        let level = Self.level(forGLibLevel: glibLevel)
        let warning = ExternalMemoryWarning(
            sender: Self.sender, level: level, trigger: .pressureStall, detail: "low-memory-warning \(glibLevel)")
        let event = try? monitor.report(warning)
        onWarning?(Warning(glibLevel: glibLevel, level: level, event: event))
    }
}
