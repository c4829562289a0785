import Foundation
import Testing

@testable import StateStore

/// The monitor's thread has an owner: whoever started it stops it, and `stop()` joins it.
@Suite("The monitor thread's owner")
@MainActor
struct MonitorOwnershipTests {
    let folder = TemporaryFolder()

    @Test func stopWaitsForTheThreadToExit() async throws {
        let monitor = try MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        monitor.start()
        let thread = try await MonitorThreads.started(monitor)
        #expect(MonitorThreads.exists(thread))
        monitor.stop()
        #expect(monitor.threadID == nil)
        #expect(MonitorThreads.gone(thread))
    }

    @Test func anApplicationStopsTheMonitorItStartedWhenItTerminates() async throws {
        let monitor = try MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        let application = Application()
        application.observeMemoryPressure(monitor)
        let thread = try await MonitorThreads.started(monitor)
        application.terminate()
        // The test still holds the monitor: only its owner's terminate stopped it.
        #expect(!monitor.isRunning)
        #expect(MonitorThreads.gone(thread))
    }

    @Test func aReleasedApplicationLeavesNoMonitorThreadBehind() async throws {
        let monitor = try MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        var application: Application? = Application()
        application?.observeMemoryPressure(monitor)
        let thread = try await MonitorThreads.started(monitor)
        application = nil
        #expect(!monitor.isRunning)
        #expect(MonitorThreads.gone(thread))
    }

    /// A relaunch in one process (the soak does it): the new application observes before the
    /// old one terminates, and the monitor keeps running for it until it terminates too.
    @Test func theLastApplicationObservingAMonitorStopsIt() async throws {
        let monitor = try MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        let old = Application()
        old.observeMemoryPressure(monitor)
        let thread = try await MonitorThreads.started(monitor)
        let fresh = Application()
        fresh.observeMemoryPressure(monitor)
        old.stopObservingMemoryPressure(monitor)
        old.terminate()
        #expect(monitor.isRunning)
        #expect(MonitorThreads.exists(thread))
        fresh.terminate()
        #expect(!monitor.isRunning)
        #expect(MonitorThreads.gone(thread))
    }

    @Test func aMonitorStartedElsewhereKeepsRunningForItsOwner() async throws {
        let monitor = try MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        monitor.start()
        let thread = try await MonitorThreads.started(monitor)
        let application = Application()
        application.observeMemoryPressure(monitor)
        application.terminate()
        #expect(monitor.isRunning)
        #expect(MonitorThreads.exists(thread))
        monitor.stop()
        #expect(MonitorThreads.gone(thread))
    }
}
