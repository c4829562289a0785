import ServiceLifecycle
import StateStore

/// A ``StateStore/MemoryPressureMonitor`` as a `Service`: ``run()`` starts the monitor (unless
/// it runs already), owns it while the service runs, and at graceful shutdown or cancellation
/// stops it and waits for its thread to exit.
///
/// Place it before the services that listen to the monitor (an ``ApplicationStateService``):
/// a `ServiceGroup` shuts down in reverse order, so the monitor stops last.
public struct MemoryPressureMonitorService: Service {
    /// The monitor this service runs.
    public let monitor: MemoryPressureMonitor

    /// A service that runs `monitor`; nothing starts until ``run()``.
    public init(monitor: MemoryPressureMonitor) {
        self.monitor = monitor
    }

    /// Starts the monitor, waits for graceful shutdown or cancellation, then stops it.
    public func run() async throws {
        monitor.start()
        defer { monitor.stop() }
        try? await gracefulShutdown()
    }
}
