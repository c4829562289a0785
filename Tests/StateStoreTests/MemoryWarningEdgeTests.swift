import CoreMetrics
import Foundation
import MetricsTestKit
import Synchronization
import Testing

@testable import StateStore

/// A page whose memory-warning override records what it got, and may skip `super`.
@MainActor
private final class WarnedPage: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var text = "" }
    var restorableState = State()
    var callsSuper = true
    var warnings: [MemoryPressureLevel] = []

    override func didReceiveMemoryWarning(level: MemoryPressureLevel) {
        warnings.append(level)
        if callsSuper { super.didReceiveMemoryWarning(level: level) }
    }
}

/// A page whose override escalates a warning to a critical one while it is delivered.
@MainActor
private final class EscalatingPage: ViewController {
    weak var app: Application?
    var inner: MemoryWarningReport?
    override func didReceiveMemoryWarning(level: MemoryPressureLevel) {
        super.didReceiveMemoryWarning(level: level)
        if level == .warning, inner == nil {
            inner = app?.respondToMemoryPressure(level: .critical, availableBytes: nil, raisedAt: Date())
        }
    }
}

private final class RaceFlags: Sendable {
    let stop = Atomic(false)
    let made = Atomic(0)
}

/// Memory warnings at their edges: caches given to several controllers or outliving theirs,
/// costs near `Int.max`, a registry used from many threads, `.normal` through the public entry
/// points, and where an application's metrics go.
@Suite("Memory warnings at the edges", .hangGuard(minutes: 10))
@MainActor
struct MemoryWarningEdgeTests {
    let folder = TemporaryFolder()

    func launch(
        _ store: StateStore? = nil, metrics: (any MetricsFactory)? = nil, pages: Int = 1
    ) -> (Application, NavigationController) {
        let application = store.map { Application(store: $0) } ?? Application(metricsFactory: metrics)
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let root = WarnedPage()
        root.restorationIdentifier = "root"
        let navigation = NavigationController(rootViewController: root)
        navigation.restorationIdentifier = "nav"
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        for index in 1..<pages {
            let page = WarnedPage()
            page.restorationIdentifier = "page\(index)"
            navigation.pushViewController(page, animated: false)
        }
        return (application, navigation)
    }

    /// A cache released on one thread while others list and purge its registry: the registry
    /// must never run the cache's deinit (which unregisters, under the registry's lock) inside
    /// its own lock. It used to trap on a recursive lock within seconds.
    @Test nonisolated func aRegistryListedWhileItsCachesGoAwayDoesNotDeadlockOrTrap() {
        let registry = RecreatableCaches()
        let flags = RaceFlags()
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread.detachNewThread {
                while !flags.stop.load(ordering: .relaxed) {
                    _ = registry.purgeAll(for: .warning)
                    _ = registry.caches.count
                }
                done.signal()
            }
        }
        Thread.detachNewThread {
            let deadline = ContinuousClock.now + .seconds(4)
            while ContinuousClock.now < deadline {
                for _ in 0..<100 {
                    let cache = RecreatableCache<Int, Int>(name: "short-lived", registry: registry)
                    cache[1] = 1
                    flags.made.add(1, ordering: .relaxed)
                }
            }
            flags.stop.store(true, ordering: .relaxed)
            done.signal()
        }
        for _ in 0..<3 { done.wait() }
        #expect(flags.made.load(ordering: .relaxed) > 1000)
        #expect(registry.caches.isEmpty)
    }

    /// Costs are the caller's: sums of them are held at `Int.max`, never trap.
    @Test func costsNearIntMaxAreHeldNotTrapped() {
        let cache = RecreatableCache<Int, Int>(name: "huge", registry: nil) { _ in .max }
        cache[1] = 1
        cache[2] = 2
        // The cost limit (`Int.max` by default) holds: the older entry went.
        #expect(cache.count == 1 && cache[2] == 2)
        #expect(cache.totalCost == .max)
        #expect(cache.purge(for: .warning) == .max)
        #expect(cache.count == 0)
        cache[3] = 3
        #expect(cache.purge(for: .critical) == .max)
        #expect(cache.totalCost == 0)
        #expect(cache.statistics.purgedCost == .max)
        let registry = RecreatableCaches()
        let one = RecreatableCache<Int, Int>(name: "one", registry: registry) { _ in .max / 2 + 1 }
        let two = RecreatableCache<Int, Int>(name: "two", registry: registry) { _ in .max / 2 + 1 }
        one[1] = 1
        two[1] = 1
        #expect(registry.totalCost == .max)
        #expect(registry.purgeAll(for: .critical) == .max)
    }

    @Test func aWarningOverCachesNearIntMaxReportsTheirCostHeld() {
        let (application, navigation) = launch(metrics: TestMetrics())
        let one = RecreatableCache<Int, Int>(name: "big1", registry: nil) { _ in .max / 2 + 1 }
        let two = RecreatableCache<Int, Int>(name: "big2", registry: nil) { _ in .max / 2 + 1 }
        one[1] = 1
        two[1] = 1
        navigation.topViewController!.register(one)
        navigation.topViewController!.register(two)
        let report = application.respondToMemoryPressure(level: .critical, availableBytes: nil, raisedAt: Date())
        #expect(report.cacheCostReleased == .max)
        #expect(one.count == 0 && two.count == 0)
    }

    /// A sample time from a clock set centuries wrong: the delay is held, not trapped on.
    @Test func aWarningRaisedCenturiesAgoIsHandled() throws {
        let metrics = TestMetrics()
        let (application, _) = launch(metrics: metrics)
        let report = application.respondToMemoryPressure(level: .warning, availableBytes: nil, raisedAt: .distantPast)
        #expect(report.delay > .seconds(60 * 60 * 24 * 365 * 300))
        #expect(try metrics.expectTimer("statestore_memory_warning_delay").values == [.max])
    }

    /// One cache given to two controllers is purged once per warning (a second `.warning` trim
    /// would halve it again).
    @Test func aCacheGivenToTwoControllersIsPurgedOnce() {
        let (application, navigation) = launch(metrics: TestMetrics(), pages: 2)
        let cache = RecreatableCache<Int, [UInt8]>(name: "shared-by-two", registry: nil) { $0.count }
        for controller in navigation.viewControllers { controller.register(cache) }
        for key in 0..<4 { cache[key] = [UInt8](repeating: 0, count: 250) }
        let report = application.respondToMemoryPressure(level: .warning, availableBytes: nil, raisedAt: Date())
        #expect(cache.statistics.purges == 1)
        #expect(cache.count == 2)
        #expect(report.cacheCostReleased >= 500)
        let critical = application.respondToMemoryPressure(level: .critical, availableBytes: nil, raisedAt: Date())
        #expect(cache.statistics.purges == 2)
        #expect(cache.totalCost == 0)
        #expect(critical.cacheCostReleased >= 500)
        // Outside a warning, each controller purges what it holds, as asked.
        cache[9] = [1]
        #expect(navigation.viewControllers[0].purgeCaches(for: .critical) == 1)
    }

    /// A cache of the shared registry given to a controller that goes away is purged with the
    /// others again; it used to leave the registry for good.
    @Test func aCacheOutlivingItsControllerIsPurgedAgain() {
        let (application, navigation) = launch(metrics: TestMetrics())
        let cache = RecreatableCache<Int, [UInt8]>(name: "outlives-its-page", cost: { $0.count })
        do {
            let page = WarnedPage()
            page.restorationIdentifier = "temporary"
            navigation.pushViewController(page, animated: false)
            page.register(cache)
            cache[1] = [UInt8](repeating: 0, count: 1_000)
            // While the page lives, the warning leaves the cache to it: purged once.
            application.respondToMemoryPressure(level: .warning, availableBytes: nil, raisedAt: Date())
            #expect(cache.statistics.purges == 1)
            _ = navigation.popViewController(animated: false)
        }
        cache[2] = [UInt8](repeating: 0, count: 10_000)
        application.respondToMemoryPressure(level: .critical, availableBytes: nil, raisedAt: Date())
        #expect(cache.totalCost == 0)
    }

    /// An override that skips `super` purges nothing, and nothing is counted for its caches.
    @Test func cachesAnOverrideLeavesAloneAreNotCountedAsPurged() throws {
        let metrics = TestMetrics()
        let (application, navigation) = launch(metrics: metrics)
        let page = try #require(navigation.topViewController as? WarnedPage)
        page.callsSuper = false
        let caches = (0..<5).map { RecreatableCache<Int, Int>(name: "left-alone-\($0)", registry: nil) }
        for cache in caches {
            cache[1] = 1
            page.register(cache)
        }
        let before = RecreatableCaches.shared.caches.count
        application.respondToMemoryPressure(level: .critical, availableBytes: nil, raisedAt: Date())
        let after = RecreatableCaches.shared.caches.count
        #expect(caches.allSatisfy { $0.count == 1 })
        // The shared registry's caches (other tests' among them) may release something; these
        // five did not, and used to be counted all the same.
        let purged = try metrics.expectCounter("statestore_cache_purges_total").totalValue
        #expect(purged <= max(before, after))
    }

    /// `.normal` through the public entry points is not a warning: nothing delivered, counted or recorded.
    @Test func normalThroughThePublicEntryPointsIsNotAWarning() throws {
        let metrics = TestMetrics()
        let path = folder.file("normal.sqlite")
        let store = try StateStore(path: path, options: .init(metricsFactory: metrics))
        let (application, navigation) = launch(store)
        let page = try #require(navigation.topViewController as? WarnedPage)
        let cache = RecreatableCache<Int, Int>(name: "normal", registry: nil)
        cache[1] = 1
        page.register(cache)
        application.didReceiveMemoryWarning(level: .normal)
        let report = application.respondToMemoryPressure(level: .normal, availableBytes: 1, raisedAt: Date())
        application.restorationCoordinator?.flush()
        #expect(page.warnings.isEmpty)
        #expect(application.memoryWarningCount == 0)
        #expect(application.lastMemoryWarning == nil)
        #expect(report.controllerCount == 0 && report.cacheCostReleased == 0)
        #expect(cache.count == 1)
        #expect(try metrics.expectCounter("statestore_memory_warnings_total", [("level", "warning")]).totalValue == 0)
        #expect(try metrics.expectCounter("statestore_cache_purges_total").totalValue == 0)
        #expect(try store.pressureEvents().isEmpty)
    }

    /// A warning reaching two applications (a relaunch observing the monitor before the old
    /// one terminates) purges a controller's cache once: the other application's purge of the
    /// shared registry leaves it to its controller; a direct purge of the registry does too.
    @Test func aControllersCacheIsLeftToItByEveryApplication() {
        let (first, navigation) = launch(metrics: TestMetrics())
        let (second, _) = launch(metrics: TestMetrics())
        let cache = RecreatableCache<Int, Int>(name: "owned-across-applications")
        for index in 0..<100 { cache.setValue(index, forKey: index, cost: 1) }
        navigation.topViewController!.register(cache)
        first.respondToMemoryPressure(level: .warning, availableBytes: nil, raisedAt: Date())
        second.respondToMemoryPressure(level: .warning, availableBytes: nil, raisedAt: Date())
        RecreatableCaches.shared.purgeAll(for: .warning)
        #expect(cache.count == 50)
    }

    /// A critical warning raised inside a warning's delivery: the two reports together count
    /// what the controller's cache released once.
    @Test func aWarningRaisedInsideAWarningIsNotCountedTwice() throws {
        let (application, navigation) = launch(metrics: TestMetrics())
        let page = EscalatingPage()
        page.restorationIdentifier = "escalating"
        page.app = application
        navigation.pushViewController(page, animated: false)
        // Entries of 1 GB each: what other tests' caches in the shared registry add to the
        // reports (a few MB at most) cannot hide 50 of them counted twice.
        let gigabyte = 1 << 30
        let cache = RecreatableCache<Int, Int>(name: "escalated", registry: nil)
        for index in 0..<100 { cache.setValue(index, forKey: index, cost: gigabyte) }
        page.register(cache)
        let outer = application.respondToMemoryPressure(level: .warning, availableBytes: nil, raisedAt: Date())
        let inner = try #require(page.inner)
        #expect(cache.count == 0)
        // The warning trimmed 50 entries, the critical inside it the other 50.
        #expect(
            inner.cacheCostReleased >= 50 * gigabyte && inner.cacheCostReleased < 75 * gigabyte,
            "inner \(inner.cacheCostReleased)")
        #expect(
            outer.cacheCostReleased >= 50 * gigabyte && outer.cacheCostReleased < 75 * gigabyte,
            "outer \(outer.cacheCostReleased)")
    }

    /// A warning that reaches an application after it terminated (a monitor's event queued on
    /// the main actor meanwhile) is not handled or recorded.
    @Test func aWarningAfterTerminateIsNotHandled() throws {
        let store = try StateStore(path: folder.file("terminated.sqlite"))
        let (application, navigation) = launch(store)
        let page = try #require(navigation.topViewController as? WarnedPage)
        application.terminate()
        let report = application.respondToMemoryPressure(level: .critical, availableBytes: nil, raisedAt: Date())
        #expect(report.controllerCount == 0)
        #expect(page.warnings.isEmpty && application.memoryWarningCount == 0)
        #expect(try store.pressureEvents().isEmpty)
    }

    /// An application on a store opened under a task-local metrics factory records in it, as the store does.
    @Test func anApplicationRecordsWhereItsStoreDoes() throws {
        let metrics = TestMetrics()
        let store = try withMetricsFactory(metrics) { try StateStore(path: folder.file("task-local.sqlite")) }
        let (application, _) = launch(store)
        application.didReceiveMemoryWarning(level: .warning)
        #expect(try metrics.expectCounter("statestore_memory_warnings_total", [("level", "warning")]).totalValue == 1)
    }
}
