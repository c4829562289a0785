import Foundation

extension Application {
    /// The whole response to memory pressure, on the main actor:
    ///
    /// 1. every live controller, visible or not, gets `didReceiveMemoryWarning(level:)`
    ///    (by default each purges its own caches);
    /// 2. the global ``RecreatableCaches/shared`` caches purge (warning trims, critical empties),
    ///    but those a live controller holds (``ViewController/register(_:)``), left to it;
    /// 3. observers release what they hold (the restoration layer: SQLite's page cache, and on
    ///    critical, every visible controller's state goes to disk, since an OOM kill may follow);
    /// 4. `malloc_trim(0)` returns freed pages to the system;
    /// 5. RSS is measured before and after, and the report goes to the observers (the
    ///    restoration layer records it in the database).
    ///
    /// `.normal` is not a warning, and an application that has terminated takes none: nothing
    /// is delivered, counted or recorded, and the report says so (no controller, nothing released).
    @discardableResult
    public func respondToMemoryPressure(
        level: MemoryPressureLevel, availableBytes: UInt64?, raisedAt: Date
    ) -> MemoryWarningReport {
        let clock = ContinuousClock()
        let delay = Duration.seconds(max(0, Date().timeIntervalSince(raisedAt)))
        guard level > .normal, !isTerminated else {
            let rss = ProcessMemory.residentBytes() ?? 0
            return MemoryWarningReport(
                level: level, raisedAt: raisedAt, availableBytes: availableBytes, delay: delay, duration: .zero,
                rssBefore: rss, rssAfter: rss, cacheCostReleased: 0, controllerCount: 0
            )
        }
        let rssBefore = ProcessMemory.residentBytes() ?? 0
        let controllers = registry.live()
        let start = clock.now
        // Each cache once, however many controllers it was given to.
        var owned: [ObjectIdentifier: (cache: any PurgeableCache, cost: Int)] = [:]
        for controller in controllers {
            for cache in controller.ownedCaches { owned[ObjectIdentifier(cache)] = (cache, cache.totalCost) }
        }
        let releasedInside = CachePurgePass.run {
            for controller in controllers {
                controller.deliverMemoryWarning(level: level)
            }
        }
        // What the controllers' purges released, as the caches' costs fell (an override that
        // does not call `super` may purge none of them), less what a warning raised inside this
        // one released and reported itself.
        var ownedReleased = 0, cachesPurged = 0
        for (cache, before) in owned.values {
            let released = before - cache.totalCost
            if released > 0 {
                ownedReleased = ownedReleased.addingClamped(released)
                cachesPurged += 1
            }
        }
        ownedReleased = max(0, ownedReleased - releasedInside)
        CachePurgePass.report(ownedReleased)
        let global = RecreatableCaches.shared.purgeUnclaimed(for: level)
        cachesPurged += global.caches
        for observer in observers { observer.applicationDidReceiveMemoryWarning(self, level: level) }
        _ = ProcessMemory.trim()
        let report = MemoryWarningReport(
            level: level, raisedAt: raisedAt, availableBytes: availableBytes, delay: delay,
            duration: clock.now - start, rssBefore: rssBefore, rssAfter: ProcessMemory.residentBytes() ?? 0,
            cacheCostReleased: ownedReleased.addingClamped(global.released), controllerCount: controllers.count
        )
        lastMemoryWarning = report
        memoryWarningCount += 1
        metrics.record(report, cachesPurged: cachesPurged)
        for observer in observers { observer.applicationDidRespondToMemoryWarning(self, report: report) }
        return report
    }

    /// Delivers `monitor`'s warnings to this application on the main actor, and starts it
    /// unless it is running already. A return to normal is not a warning and is not delivered.
    ///
    /// A monitor that applications started runs while any application observes it: the last
    /// one to let go (``terminate()``, ``stopObservingMemoryPressure(_:)``, or its release) stops
    /// it and waits for its thread to exit, so a relaunch that observes with the new application
    /// before the old one terminates keeps it running. A monitor whose owner called
    /// ``MemoryPressureMonitor/start()`` (a `MemoryPressureMonitorService` in a `ServiceGroup`,
    /// say) belongs to that owner, and applications leave it running.
    public func observeMemoryPressure(_ monitor: MemoryPressureMonitor) {
        guard !memoryMonitors.contains(where: { $0.monitor === monitor }) else { return }
        let token = monitor.onEvent { [weak self] event in
            guard event.level > .normal else { return }
            Task { @MainActor in
                self?.respondToMemoryPressure(
                    level: event.level, availableBytes: event.availableBytes, raisedAt: event.time)
            }
        }
        memoryMonitors.append(MonitorLink(monitor: monitor, token: token, lease: MonitorLease(monitor)))
    }

    /// The monitors whose warnings this application takes (``observeMemoryPressure(_:)``), in
    /// the order it began observing them: where an adapter feeds a platform's own warnings in
    /// (``MemoryPressureMonitor/report(_:)``).
    public var observedMemoryMonitors: [MemoryPressureMonitor] { memoryMonitors.map(\.monitor) }

    /// Stops delivering `monitor`'s warnings; when no application observes it any more and
    /// applications started it, it is stopped (its thread joined).
    public func stopObservingMemoryPressure(_ monitor: MemoryPressureMonitor) {
        memoryMonitors.removeAll { link in
            guard link.monitor === monitor else { return false }
            monitor.removeHandler(link.token)
            link.lease.release()
            return true
        }
    }

    /// Stops observing every monitor: part of ``terminate()``.
    func stopObservingAllMemoryPressure() {
        for link in memoryMonitors {
            link.monitor.removeHandler(link.token)
            link.lease.release()
        }
        memoryMonitors.removeAll()
    }
}

/// A monitor an ``Application`` listens to.
struct MonitorLink {
    let monitor: MemoryPressureMonitor
    let token: MemoryPressureMonitor.HandlerToken
    let lease: MonitorLease
}

/// An application's hold on a monitor: taken when it starts observing, given back when it stops
/// or when the application is released without terminating, so the thread never outlives the
/// last application that started it.
final class MonitorLease: Sendable {
    let monitor: MemoryPressureMonitor
    private let held = Lock(true)

    init(_ monitor: MemoryPressureMonitor) {
        self.monitor = monitor
        monitor.acquireApplicationLease()
    }

    func release() {
        guard
            held.withLock({ held in
                defer { held = false }
                return held
            })
        else { return }
        monitor.releaseApplicationLease()
    }

    deinit { release() }
}
