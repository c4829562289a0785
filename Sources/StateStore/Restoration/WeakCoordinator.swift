import Synchronization

/// A weak, `Sendable` handle on a coordinator, for the writer to wake it.
final class WeakCoordinator: Sendable {
    @MainActor weak var coordinator: RestorationCoordinator?
    /// Whether a task to take in the outcomes is queued on the main actor and has not begun.
    private let absorbQueued = Atomic<Bool>(false)

    /// Asks the main actor to take in the writer's outcomes at its next turn. At most one such
    /// task waits at a time: an app that drives its controllers without letting the main queue
    /// run (a synchronous test, an event loop that does not drain it) would otherwise keep one
    /// task (about a kilobyte) for every batch the writer finished, for as long as it runs. The
    /// flag is cleared before the outcomes are taken, so one delivered after that schedules
    /// another task, and none is missed.
    func scheduleAbsorb() {
        guard absorbQueued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        Task { @MainActor in
            self.absorbQueued.store(false, ordering: .releasing)
            self.coordinator?.absorbWriterOutcomes()
        }
    }
}
