import Foundation

// The application's side of a simulated process death: for the testing kit (`StateStoreTesting`),
// which relaunches an app in the same process "after a kill -9" and must leave behind what a
// killed process leaves, whatever objects of the dead launch the test still holds.

extension Application {
    /// Ends the application as the death of its process would, without a single callback:
    /// no controller disappears and nothing is flushed. States captured and not yet handed to
    /// the writer are gone, and so are the batches the writer had not committed; the store is
    /// closed as ``StateStore/simulateProcessDeath()`` says (the WAL as a killed process leaves
    /// it); the windows' scene claims go at once, as the kernel drops a dead process's locks;
    /// the memory-pressure monitors it started stop; the termination handlers it installed no
    /// longer terminate it, and their claim on SIGTERM and SIGINT goes; it is no longer
    /// ``current``.
    ///
    /// Not public: only a test can want a live object whose process is dead. After it, the
    /// application and its controllers must not be driven any more: whatever they would save
    /// reaches nothing. Calling it again does nothing more.
    package func simulateProcessDeath() {
        stopObservingAllMemoryPressure()
        if let coordinator = restorationCoordinator {
            coordinator.simulateProcessDeath()
            for window in windows {
                guard let scene = window.sceneClaim as? WindowScene, scene.owner.coordinator === coordinator else {
                    continue
                }
                scene.dropClaim()
            }
        }
        if TerminationSignals.target === self {
            TerminationSignals.target = nil
            TerminationSignalClaim.release(.terminationHandlers)
        }
        if Application.current === self { Application.current = nil }
    }
}

extension RestorationCoordinator {
    /// The coordinator's part of ``Application/simulateProcessDeath()``: what it captured and
    /// did not hand over is forgotten, its writer's waiting batches and held claims dropped,
    /// and its store ended.
    func simulateProcessDeath() {
        queued.removeAll()
        queuedIndex.removeAll()
        queuedEvents.removeAll()
        queuedRemovals.removeAll()
        queuedForgotten.removeAll()
        store.simulateProcessDeath()
        writer.dropEverythingAsDead()
    }
}
