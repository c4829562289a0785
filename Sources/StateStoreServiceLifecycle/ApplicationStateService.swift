import ServiceLifecycle
import StateStore

/// An application's state as a `Service`: running, it holds the application; at graceful
/// shutdown (or cancellation) it terminates it, the same flush as ``StateStore/Application/terminate()``,
/// so every visible controller's state and everything handed to the store's writer is committed
/// before ``run()`` returns.
///
/// Put it in a `ServiceGroup` whose `gracefulShutdownSignals` include SIGTERM and SIGINT,
/// after the services the application uses (a ``MemoryPressureMonitorService``, a server): the
/// group shuts services down in reverse order, so the state is flushed first. The group then
/// owns the signals: do not also call ``StateStore/Application/installTerminationHandlers(signals:)``.
/// ``run()`` claims the signals for the group (``StateStore/TerminationSignalClaim``) and throws
/// ``StateStore/TerminationSignalsClaimedError`` when the application installed its handlers
/// already; that call, made while the service runs, is refused and reported.
///
/// ```swift
/// let monitor = MemoryPressureMonitor()
/// let application = Application(store: store, storyboard: storyboard, memoryMonitor: monitor)
/// let group = ServiceGroup(configuration: .init(
///     services: [
///         .init(service: MemoryPressureMonitorService(monitor: monitor)),
///         .init(service: ApplicationStateService(application: application)),
///     ],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger
/// ))
/// try await group.run()
/// ```
public struct ApplicationStateService: Service {
    /// The application whose state is flushed at shutdown.
    public let application: Application

    public init(application: Application) {
        self.application = application
    }

    /// Waits for graceful shutdown or cancellation, then terminates the application on the
    /// main actor and returns once its state is committed.
    ///
    /// - Throws: ``StateStore/TerminationSignalsClaimedError`` when
    ///   ``StateStore/Application/installTerminationHandlers(signals:)`` owns the signals; nothing
    ///   is terminated then.
    public func run() async throws {
        try TerminationSignalClaim.claim(.serviceGroup)
        defer { TerminationSignalClaim.release(.serviceGroup) }
        // Returns at graceful shutdown, throws at cancellation: either way, flush.
        try? await gracefulShutdown()
        await MainActor.run { application.terminate() }
    }
}
