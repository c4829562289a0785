/// A memory warning from outside the monitor's own readings: GLib's `GMemoryMonitor`, a desktop
/// portal, a supervisor's message. Handed to ``MemoryPressureMonitor/report(_:)``, it feeds the
/// same levels, hysteresis and events as the monitor's own samples.
public struct ExternalMemoryWarning: Sendable, Hashable {
    /// Who raised it, for logs and for ``MemoryPressureEvent/externalWarning``: `"GMemoryMonitor"`.
    public var sender: String
    /// The level the sender's warning stands for. The monitor's level is at least this much for
    /// the sample the warning wakes it for: a level of `.normal` only asks for a fresh reading.
    public var level: MemoryPressureLevel
    /// What the sender's warning is based on, for an event whose level it raised above the
    /// monitor's own reading. GLib's warnings come from pressure stall information (the
    /// low-memory-monitor service and the desktop portal both read PSI): `.pressureStall`.
    public var trigger: MemoryPressureEvent.Trigger
    /// The sender's own words for it, such as `"low-memory-warning 255"`.
    public var detail: String?

    /// A warning from `sender` that stands for `level`.
    public init(
        sender: String, level: MemoryPressureLevel, trigger: MemoryPressureEvent.Trigger = .pressureStall,
        detail: String? = nil
    ) {
        self.sender = sender
        self.level = level
        self.trigger = trigger
        self.detail = detail
    }
}
