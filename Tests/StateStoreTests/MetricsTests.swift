import CoreMetrics
import Foundation
import MetricsTestKit
import Testing

@testable import StateStore

/// The store, its writer, the monitor and the application emit through the factory they are
/// given, here MetricsTestKit's in-memory backend, after real work on a real file.
@Suite("Metrics")
@MainActor
struct MetricsTests {
    let folder = TemporaryFolder()

    func launch(_ store: StateStore) throws -> (Application, NavigationController) {
        let storyboard = Storyboard()
        for identifier in ["a", "b"] { storyboard.register(identifier) { NoteController() } }
        let application = Application(store: store, storyboard: storyboard)
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = NavigationController(
            rootViewController: try storyboard.instantiateViewController(withIdentifier: "a"))
        navigation.restorationIdentifier = "nav"
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        return (application, navigation)
    }

    @Test func directSavesRestoresAndQuarantinesAreRecorded() throws {
        let metrics = TestMetrics()
        let store = try StateStore(path: folder.file("direct.sqlite"), options: .init(metricsFactory: metrics))
        try store.save(NoteController.State(text: "one"), for: "direct")
        try store.save(NoteController.State(text: "two"), for: "direct")
        #expect(try store.restore(NoteController.State.self, for: "direct")?.text == "two")
        try store.quarantine("direct", reason: "a test")

        #expect(try metrics.expectTimer("statestore_save_duration", [("mode", "direct")]).values.count == 2)
        #expect(try metrics.expectTimer("statestore_restore_duration").values.count == 1)
        #expect(try metrics.expectCounter("statestore_quarantined_total").totalValue == 1)
    }

    @Test func theWriterRecordsItsTransactionsBacklogAndFailures() throws {
        let metrics = TestMetrics()
        let store = try StateStore(
            path: folder.file("writer.sqlite"), options: .init(maximumStateSize: 256, metricsFactory: metrics))
        let (application, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        #expect(coordinator.writesBehind)
        let note = try #require(navigation.topViewController as? NoteController)
        note.restorableState.text = "fits"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        application.saveVisibleState()

        let transactions = try metrics.expectTimer("statestore_save_duration", [("mode", "write_behind")]).values
        #expect(!transactions.isEmpty)
        #expect(try metrics.expectRecorder("statestore_write_behind_batch_states").values.reduce(0, +) >= 1)
        #expect(try metrics.expectRecorder("statestore_write_behind_backlog").values.allSatisfy { $0 >= 1 })
        #expect(try metrics.expectRecorder("statestore_write_behind_backlog").values.count >= 1)
        #expect((try? metrics.expectCounter("statestore_write_failures_total").totalValue) ?? 0 == 0)

        // Over maximumStateSize: the writer's failure is counted (and reported).
        let top = try #require(navigation.topViewController as? NoteController)
        top.restorableState.text = String(repeating: "x", count: 1_000)
        _ = navigation.popViewController(animated: false)
        application.saveVisibleState()
        #expect(try metrics.expectCounter("statestore_write_failures_total").totalValue == 1)
        #expect(coordinator.recentErrors.contains { if case .store(.stateTooLarge) = $0 { true } else { false } })
    }

    /// Another connection holds the write lock while the interface keeps navigating: the writer
    /// waits in its first transaction, and the hand-overs behind it are folded once eight wait,
    /// so what waits stays bounded; once the lock is released every newest state is written.
    @Test func aWriterHeldBackKeepsAtMostEightBatchesWaiting() throws {
        let metrics = TestMetrics()
        let path = folder.file("held.sqlite")
        let store = try StateStore(path: path, options: .init(metricsFactory: metrics))
        let (application, navigation) = try launch(store)
        application.restorationCoordinator?.flush()

        let other = try StateStore(path: path)
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            _ = try? other.write { (_) throws(StateStoreError) in
                locked.signal()
                release.wait()
            }
        }
        holder.start()
        locked.wait()
        let changes = 40
        for index in 0..<changes {
            let page = try #require(
                try application.storyboard.instantiateViewController(withIdentifier: "b") as? NoteController)
            navigation.pushViewController(page, animated: false)
            page.restorableState.text = "page \(index)"
            _ = navigation.popViewController(animated: false)
        }
        release.signal()
        application.restorationCoordinator?.flush()

        let backlog = try metrics.expectRecorder("statestore_write_behind_backlog").values
        #expect(backlog.allSatisfy { $0 <= 8 }, "backlog values: \(backlog)")
        #expect(backlog.count >= 2)
        // The newest of 40 saves of the page's path is the one on disk.
        #expect(try store.restore(NoteController.State.self, for: "nav/b")?.text == "page \(changes - 1)")
    }

    @Test func memoryWarningsAreCountedByLevelWithTheirDelayAndWhatTheyReleased() throws {
        let metrics = TestMetrics()
        let store = try StateStore(path: folder.file("warnings.sqlite"), options: .init(metricsFactory: metrics))
        let (application, navigation) = try launch(store)
        let cache = RecreatableCache<String, String>(name: "metrics.preview", registry: nil) { $0.utf8.count }
        navigation.topViewController?.register(cache)
        cache.setValue(String(repeating: "p", count: 2_000), forKey: "preview")
        cache.setValue(String(repeating: "q", count: 2_000), forKey: "thumbnail")

        application.didReceiveMemoryWarning(level: .warning)
        application.didReceiveMemoryWarning(level: .critical)

        #expect(try metrics.expectCounter("statestore_memory_warnings_total", [("level", "warning")]).totalValue == 1)
        #expect(try metrics.expectCounter("statestore_memory_warnings_total", [("level", "critical")]).totalValue == 1)
        #expect(try metrics.expectTimer("statestore_memory_warning_delay").values.count == 2)
        // Each warning releases cost from this controller's cache (the warning trims one entry,
        // the critical one empties it), and from process-wide ones other tests running now may fill.
        #expect(try metrics.expectCounter("statestore_cache_purges_total").totalValue >= 2)
        // A critical warning empties the cache: its 4,000 bytes are released, whatever the warning trimmed first.
        #expect(try metrics.expectCounter("statestore_cache_released_cost_total").totalValue >= 4_000)
        #expect(cache.totalCost == 0)
        #expect(try metrics.expectRecorder("statestore_memory_warning_rss_released_bytes").values.count == 2)
    }

    @Test func aStoreOpenedUnderATaskLocalFactoryRecordsInIt() throws {
        let metrics = TestMetrics()
        // No factory in the options: the store takes MetricsSystem.factory, which is the one
        // bound to the task while it opens (no process-wide bootstrap, so tests stay apart).
        let store = try withMetricsFactory(metrics) { try StateStore(path: folder.file("task-local.sqlite")) }
        try store.save(NoteController.State(text: "bound"), for: "task/local")
        #expect(try metrics.expectTimer("statestore_save_duration", [("mode", "direct")]).values.count == 1)
    }

    @Test func theMonitorRecordsTheLevel() throws {
        let metrics = TestMetrics()
        let root = folder.file("root")
        try MemoryFixtures.write(
            MemoryFixtures.meminfo(totalKB: 8_000_000, availableKB: 6_000_000), to: "/proc/meminfo", in: root)
        let monitor = try MemoryPressureMonitor(
            configuration: .init(root: root, readsCgroup: false), metricsFactory: metrics)
        try monitor.refresh()
        let gauge = try metrics.expectGauge("statestore_memory_pressure_level")
        #expect(gauge.lastValue == 0)
        try MemoryFixtures.write(
            MemoryFixtures.meminfo(totalKB: 8_000_000, availableKB: 40_000), to: "/proc/meminfo", in: root)
        try monitor.refresh()
        #expect(monitor.level > .normal)
        #expect(gauge.lastValue == Double(monitor.level.rawValue))
    }
}
