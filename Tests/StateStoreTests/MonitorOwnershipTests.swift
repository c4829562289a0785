import Foundation
import Testing
@testable import StateStore

/// The monitor's thread has an owner: whoever started it stops it, and `stop()` joins it.
@Suite("The monitor thread's owner")
@MainActor
struct MonitorOwnershipTests {
    let folder = TemporaryFolder()

    @Test func stopWaitsForTheThreadToExit() async throws {
        let monitor = MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        monitor.start()
        let thread = try await MonitorThreads.started(monitor)
        #expect(MonitorThreads.exists(thread))
        monitor.stop()
        #expect(monitor.threadID == nil)
        #expect(MonitorThreads.gone(thread))
    }

    @Test func anApplicationStopsTheMonitorItStartedWhenItTerminates() async throws {
        let monitor = MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        let application = Application()
        application.observeMemoryPressure(monitor)
        let thread = try await MonitorThreads.started(monitor)
        application.terminate()
        // The test still holds the monitor: only its owner's terminate stopped it.
        #expect(!monitor.isRunning)
        #expect(MonitorThreads.gone(thread))
    }

    @Test func aReleasedApplicationLeavesNoMonitorThreadBehind() async throws {
        let monitor = MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        var application: Application? = Application()
        application?.observeMemoryPressure(monitor)
        let thread = try await MonitorThreads.started(monitor)
        application = nil
        #expect(!monitor.isRunning)
        #expect(MonitorThreads.gone(thread))
    }

    @Test func aMonitorStartedElsewhereKeepsRunningForItsOwner() async throws {
        let monitor = MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
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
