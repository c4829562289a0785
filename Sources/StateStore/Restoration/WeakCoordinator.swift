/// A weak, `Sendable` handle on a coordinator, for the writer to wake it.
final class WeakCoordinator: Sendable {
    @MainActor weak var coordinator: RestorationCoordinator?

    /// Asks the main actor to take in the writer's outcomes at its next turn.
    func scheduleAbsorb() {
        Task { @MainActor in self.coordinator?.absorbWriterOutcomes() }
    }
}
