import ServiceLifecycle
import StateStore

/// An application's state as a `Service`: running, it holds the application; at graceful
/// shutdown (or cancellation) it terminates it, the same flush as ``StateStore/Application/terminate()``,
/// so every visible controller's state and everything handed to the store's writer is committed
/// before ``run()`` returns.
///
/// Put it in a `ServiceGroup` whose `gracefulShutdownSignals` include SIGTERM and SIGINT,
/// after the ``MemoryPressureMonitorService`` and before the services that use the application
/// (a server): the group shuts services down in reverse order, so the server stops, then the
/// state is flushed, then the monitor stops. The group then owns the signals: do not also call
/// ``StateStore/Application/installTerminationHandlers(signals:)``. ``run()`` claims them for the
/// group (``StateStore/TerminationSignalClaim``) and throws ``StateStore/TerminationSignalsClaimedError``
/// when the application installed its handlers already; that call, made while the service runs,
/// is refused and reported.
///
/// ```swift
/// let monitor = try MemoryPressureMonitor()
/// let application = Application(store: store, storyboard: storyboard, memoryMonitor: monitor)
/// let group = ServiceGroup(
///     configuration: .init(
///         services: [
///             .init(service: MemoryPressureMonitorService(monitor: monitor)),
///             .init(service: ApplicationStateService(application: application)),
///         ],
///         gracefulShutdownSignals: [.sigterm, .sigint],
///         logger: logger
///     ))
/// try await group.run()
/// ```
public struct ApplicationStateService: Service {
    /// The application whose state is flushed at shutdown.
    public let application: Application
    /// Whether ``run()`` claims SIGTERM and SIGINT for the group.
    public let claimsTerminationSignals: Bool

    /// - Parameters:
    ///   - application: The application whose state is flushed at shutdown.
    ///   - claimsTerminationSignals: `true` (the default) when the group traps SIGTERM or SIGINT
    ///     (its `gracefulShutdownSignals`), so that ``StateStore/Application/installTerminationHandlers(signals:)``
    ///     and the group never both handle them. Pass `false` for a group that traps no signals
    ///     (one shut down by its owner's code or by ServiceLifecycleTestKit): the service then
    ///     claims nothing, and the application may install its own handlers.
    public init(application: Application, claimsTerminationSignals: Bool = true) {
        self.application = application
        self.claimsTerminationSignals = claimsTerminationSignals
    }

    /// Waits for graceful shutdown or cancellation, then terminates the application on the
    /// main actor and returns once its state is committed.
    ///
    /// - Throws: ``StateStore/TerminationSignalsClaimedError`` when it claims the signals and
    ///   ``StateStore/Application/installTerminationHandlers(signals:)`` owns them; nothing is
    ///   terminated then. ``UnsavedStateError`` when the final save did not reach the database
    ///   (a full disk, a lock another process held past the busy timeout, twice, a key the
    ///   store was not given), or was committed and then could not be synced to storage
    ///   (``StateStore/StateStoreError/notSynced(file:_:)``): the group's `run()` then throws it,
    ///   so the program does not end as if everything had been saved.
    public func run() async throws {
        if claimsTerminationSignals { try TerminationSignalClaim.claim(.serviceGroup) }
        defer { if claimsTerminationSignals { TerminationSignalClaim.release(.serviceGroup) } }
        // Returns at graceful shutdown, throws at cancellation: either way, flush.
        try? await gracefulShutdown()
        let unsaved: UnsavedStateError? = await MainActor.run {
            let coordinator = application.restorationCoordinator
            let before = coordinator.map { (reported: $0.reportedCount, dropped: $0.droppedStateWrites) }
            application.terminate()
            guard let coordinator, let before else { return nil }
            // A state or archive the final save kept for a retry, or a state it dropped (a
            // failure that cannot pass, such as a key the store was not given): either way, not
            // in the database. Or committed, and the sync after it failed: in the database, and
            // a power cut may take it back. A failure to record a pressure event loses no state.
            let recent = coordinator.recentErrors
            let stored = recent.suffix(min(coordinator.reportedCount - before.reported, recent.count))
                .filter { if case .store = $0 { true } else { false } }
            let isNotSynced = { (error: RestorationError) in if case .store(.notSynced) = error { true } else { false }
            }
            if coordinator.hasUnsavedWrites || coordinator.droppedStateWrites > before.dropped {
                // What kept the save out, not a sync that failed after it: reported last, it
                // would say the state was committed.
                return UnsavedStateError(problem: stored.last { !isNotSynced($0) })
            }
            return stored.last(where: isNotSynced).map(UnsavedStateError.init)
        }
        if let unsaved { throw unsaved }
    }
}

/// The application's final save at shutdown did not reach the database, so what changed since
/// its last save is lost when the process ends; or it was committed and the sync after it failed,
/// so a power cut may take it back. ``ApplicationStateService/run()`` throws it.
public struct UnsavedStateError: Error, Sendable, CustomStringConvertible {
    /// What the final save met, as the coordinator reported it to its `errorHandler`
    /// (`nil` when it was reported before the shutdown and is still waiting for a retry).
    public let problem: RestorationError?

    /// An error carrying what the final save met, or `nil` when it was reported before the shutdown.
    public init(problem: RestorationError?) {
        self.problem = problem
    }

    public var description: String {
        if let problem, case .store(.notSynced) = problem {
            return
                "The application's state was committed at shutdown, but could not be synced to storage, so a power cut may take back what changed since its last sync: \(problem)"
        }
        return "The application's state could not be saved at shutdown, so what changed since its last save is lost"
            + (problem.map { ": \($0)" } ?? ".")
    }
}
