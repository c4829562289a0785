import StateStore

/// A weak reference to a controller, to see whether it outlived its application.
struct WeakController {
    weak var controller: ViewController?
}

/// Sees every memory warning the application handled, matches it to the monitor event that
/// raised it, checks that a critical one emptied every controller's caches, and reports it.
@MainActor
final class SoakWarningObserver: LifecycleObserver {
    unowned let harness: SoakHarness

    init(harness: SoakHarness) { self.harness = harness }

    func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {
        harness.ledger.delivered(raisedAt: report.raisedAt)
        harness.final.warningsDelivered += 1
        var message = SoakMessage(type: "warning")
        message.t = SoakValues.now()
        message.level = report.level.rawValue
        message.raised_at = report.raisedAt.timeIntervalSince1970
        message.delay = report.delay.seconds
        message.duration = report.duration.seconds
        message.rss_before = report.rssBefore
        message.rss_after = report.rssAfter
        message.released = report.cacheCostReleased
        message.cache_left =
            application.liveControllers.reduce(0) { $0 + $1.caches.reduce(0) { $0 + $1.totalCost } }
            + RecreatableCaches.shared.totalCost
        message.controllers = report.controllerCount
        harness.emit(message)
    }
}
