import Foundation
import Glibc
import StateStore
import Synchronization

/// Set by SIGTERM in the harness process: finish the current operation, flush, report, exit.
let soakStopRequested = Atomic<Bool>(false)

/// The harness: the process that runs the controllers under pressure (inside the soak's
/// memory cgroup, in cgroup mode) and reports to the supervisor as JSON lines on stdout
/// (see ``SoakMessage``).
///
/// Everything runs on the main actor, as an app's UI does. The traffic loop performs one
/// random operation at a time (seeded, so `--seed` replays it), paced to at most
/// ``operationsPerSecond``, and yields between operations so that the monitor's warnings,
/// which `Application(store:storyboard:memoryMonitor:)` delivers as main-actor tasks, are
/// handled as soon as the current operation ends, as on a real main thread.
///
/// What it checks itself, continuously:
/// - each controller's viewWillDisappear records the checksum of the state it saves under its
///   restoration path (``recordSave(of:)``); every fresh instance that appears compares the
///   state it restored with that record (``checkRestored(_:)``); each simulated relaunch also
///   reads every recorded path back from the store;
/// - lifecycle violations go to a handler that counts them (instead of asserting);
/// - every monitor event above normal must come back as a delivered report;
/// - after a critical report, no live controller's cache holds anything.
@MainActor
package final class SoakHarness {
    struct Configuration {
        var databasePath: String
        var controllers: Int
        var duration: Double
        var seed: UInt64
        var monitorConfiguration: MemoryPressureMonitor.Configuration
        var expectationsPath: String
        var relaunchInterval: Double
        var operationsPerSecond: Double
    }

    let configuration: Configuration
    let store: StateStore
    let monitor: MemoryPressureMonitor
    let ledger = SoakEventLedger()
    private(set) var application: Application?
    private var windows: [Window] = []
    private var random: SoakRandom
    /// Restoration path → checksum of the state last saved there (what a restore must give back).
    private(set) var expectations: [String: UInt64] = [:]
    /// Paths saved since the last simulated relaunch: what that relaunch reads back. Every save
    /// is thus read back after the relaunch that follows it, while the main actor is not held
    /// for a read of every path ever saved (which grows with the run and would delay warnings);
    /// the final flush and the fresh process read every path.
    private var savedSinceRelaunch: Set<String> = []
    var transitions = 0
    var final = SoakFinal()
    /// The deepest a navigation stack grows.
    let depthCap: Int
    private let navigationIdentifiers = ["nav0", "nav1", "nav2", "nav3"]

    init(configuration: Configuration) throws {
        self.configuration = configuration
        store = try StateStore(path: configuration.databasePath)
        monitor = try MemoryPressureMonitor(configuration: configuration.monitorConfiguration)
        random = SoakRandom(seed: configuration.seed)
        depthCap = max(3, min(40, configuration.controllers / 40))
    }

    // MARK: Reporting

    func emit(_ message: SoakMessage) { soakWriteLine(message.line) }

    func note(_ error: String) {
        if final.errors.count < 50 { final.errors.append(error) }
        var message = SoakMessage(type: "error")
        message.detail = error
        emit(message)
    }

    // MARK: Controllers' hooks

    /// The payload saved with `counter`: deterministic, 200–2,000 bytes.
    func payload(for index: Int, counter: Int) -> String {
        var generator = SoakRandom(seed: configuration.seed &+ UInt64(index) &* 1_000_003 &+ UInt64(counter))
        let length = Int.random(in: 200...2000, using: &generator)
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<length).map { _ in letters[Int(generator.next() % UInt64(letters.count))] })
    }

    /// Bytes of one rendered cache entry of controller `index`: 128–384 KiB.
    func renderedSize(for index: Int) -> Int {
        var generator = SoakRandom(seed: UInt64(index) &* 31 &+ configuration.seed)
        return Int.random(in: (128 << 10)...(384 << 10), using: &generator)
    }

    func recordSave(of controller: SoakController) {
        guard let path = application?.restorationCoordinator?.restorationPath(for: controller) else { return }
        expectations[path.rawValue] = controller.restorableState.checksum
        savedSinceRelaunch.insert(path.rawValue)
    }

    func checkRestored(_ controller: SoakController) {
        guard let path = application?.restorationCoordinator?.restorationPath(for: controller),
            let expected = expectations[path.rawValue]
        else { return }
        if controller.restorableState.checksum != expected {
            final.restoreMismatches += 1
            var message = SoakMessage(type: "restore")
            message.path = path.rawValue
            message.detail =
                "restored counter \(controller.restorableState.counter), checksum differs from the last save"
            emit(message)
        }
    }

    // MARK: Launch

    private func makeStoryboard() -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register("tabs") { TabBarController() }
        for identifier in navigationIdentifiers + ["side"] {
            storyboard.register(identifier) { NavigationController() }
        }
        for index in 0..<configuration.controllers {
            storyboard.register("c\(index)") { [unowned self] in SoakController(harness: self, index: index) }
        }
        return storyboard
    }

    /// A new application on the store, observing the monitor, with its violation and error handlers.
    private func makeApplication() -> Application {
        let application = Application(store: store, storyboard: makeStoryboard(), memoryMonitor: monitor)
        application.violationHandler = { [weak self] violation in
            guard let self else { return }
            final.violations += 1
            var message = SoakMessage(type: "violation")
            message.detail = violation.description
            emit(message)
        }
        application.restorationCoordinator?.errorHandler = { [weak self] error in
            self?.note("restoration: \(error.description)")
        }
        application.addObserver(SoakWarningObserver(harness: self))
        return application
    }

    private func makeWindows(for application: Application) -> [Window] {
        [
            Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application),
            Window(size: Size(width: 820, height: 1180), orientation: .portrait, application: application),
        ]
    }

    private func instantiate(_ identifier: String, in application: Application) -> ViewController? {
        do {
            let controller = try application.storyboard.instantiateViewController(withIdentifier: identifier)
            if controller is SoakController { final.controllersInstantiated += 1 }
            return controller
        } catch {
            note("storyboard: \(error)")
            return nil
        }
    }

    /// The first launch's hierarchy: a tab bar of four navigation stacks, and a second window
    /// with one navigation stack.
    private func buildFreshHierarchy(in windows: [Window], application: Application) {
        let tabs = instantiate("tabs", in: application) as! TabBarController
        var stacks: [ViewController] = []
        var index = 0
        for identifier in navigationIdentifiers {
            let navigation = instantiate(identifier, in: application) as! NavigationController
            if let root = instantiate("c\(index)", in: application) {
                navigation.setViewControllers([root], animated: false)
            }
            index += 1
            stacks.append(navigation)
        }
        tabs.viewControllers = stacks
        windows[0].rootViewController = tabs
        windows[0].makeKeyAndVisible()
        let side = instantiate("side", in: application) as! NavigationController
        if let root = instantiate("c\(index)", in: application) { side.setViewControllers([root], animated: false) }
        windows[1].rootViewController = side
        windows[1].makeKeyAndVisible()
    }

    /// Whether the last ``launch()`` restored an archived hierarchy (rather than building a fresh one).
    private(set) var launchRestored = false

    /// Uses recorded expectations (the verifying process, after a real restart).
    func adopt(expectations recorded: [String: UInt64]) { expectations = recorded }

    func launch() throws {
        let application = makeApplication()
        self.application = application
        windows = makeWindows(for: application)
        var restored = true
        for window in windows { restored = try application.restoreHierarchy(in: window) && restored }
        launchRestored = restored
        if !restored {
            for window in windows { window.close() }
            windows = makeWindows(for: application)
            buildFreshHierarchy(in: windows, application: application)
        }
    }

    // MARK: Traffic

    /// Every navigation stack, the tab bar's then the side window's.
    private var navigationControllers: [NavigationController] {
        windows.flatMap { $0.allViewControllers.compactMap { $0 as? NavigationController } }
    }

    private var tabBar: TabBarController? { windows.first?.rootViewController as? TabBarController }

    private func freeIndex() -> Int? {
        var used = Set<Int>()
        for window in windows {
            for controller in window.allViewControllers {
                if let soak = controller as? SoakController { used.insert(soak.index) }
            }
        }
        guard used.count < configuration.controllers else { return nil }
        for _ in 0..<64 {
            let candidate = Int.random(in: 0..<configuration.controllers, using: &random)
            if !used.contains(candidate) { return candidate }
        }
        return (0..<configuration.controllers).first { !used.contains($0) }
    }

    private func count(_ operation: String) { final.operations[operation, default: 0] += 1 }

    /// One random operation.
    func step() {
        guard let application else { return }
        let roll = Int.random(in: 0..<100, using: &random)
        let stacks = navigationControllers
        switch roll {
        case 0..<38:
            guard let navigation = stacks.randomElement(using: &random) else { return }
            if navigation.viewControllers.count >= depthCap {
                navigation.popViewController(animated: false)
                count("pop")
            } else if let index = freeIndex(), let controller = instantiate("c\(index)", in: application) {
                navigation.pushViewController(controller, animated: false)
                count("push")
            }
        case 38..<56:
            guard let navigation = stacks.filter({ $0.viewControllers.count > 1 }).randomElement(using: &random) else {
                return
            }
            navigation.popViewController(animated: false)
            count("pop")
        case 56..<58:
            guard let navigation = stacks.filter({ $0.viewControllers.count > 1 }).randomElement(using: &random) else {
                return
            }
            navigation.popToRootViewController(animated: false)
            count("pop_to_root")
        case 58..<64:
            let visible = stacks.filter {
                $0.viewControllers.count > 1 && $0.lifecycleState == .appeared && $0.presentedViewController == nil
            }
            guard let navigation = visible.randomElement(using: &random) else { return }
            let transition = navigation.beginInteractivePop()
            if Bool.random(using: &random) {
                transition.finish()
                count("interactive_pop_finished")
            } else {
                transition.cancel()
                count("interactive_pop_cancelled")
            }
        case 64..<73:
            guard let window = windows.randomElement(using: &random), let top = window.topViewController else { return }
            var depth = 0
            var node: ViewController? = top
            while let current = node?.presentingViewController {
                depth += 1
                node = current
            }
            guard depth < 2, let index = freeIndex(), let controller = instantiate("c\(index)", in: application) else {
                return
            }
            top.present(controller, animated: false, completion: nil)
            count("present")
        case 73..<82:
            guard let window = windows.randomElement(using: &random), let top = window.topViewController,
                let presenter = top.presentingViewController
            else { return }
            presenter.dismiss(animated: false, completion: nil)
            count("dismiss")
        case 82..<94:
            guard let tabs = tabBar, tabs.viewControllers.count > 1 else { return }
            tabs.selectedIndex = Int.random(in: 0..<tabs.viewControllers.count, using: &random)
            count("tab_switch")
        default:
            guard let window = windows.randomElement(using: &random) else { return }
            let orientations: [InterfaceOrientation] = [.portrait, .landscapeLeft, .landscapeRight]
            if window.rotate(to: orientations.randomElement(using: &random)!) { count("rotation") }
        }
    }

    // MARK: Relaunch

    /// Reads recorded paths back from the store (`paths`, or every one): (verified, lost, corrupt).
    func verifyStore(paths: Set<String>? = nil) -> (verified: Int, lost: Int, corrupt: Int) {
        var verified = 0, lost = 0, corrupt = 0
        let selected = paths.map { paths in expectations.filter { paths.contains($0.key) } } ?? expectations
        for (path, checksum) in selected {
            do {
                let restored = try store.restore(SoakState.self, for: RestorationPath(validating: path))
                guard let restored else {
                    lost += 1
                    note("lost: nothing stored at \(path)")
                    continue
                }
                if restored.checksum == checksum {
                    verified += 1
                } else {
                    corrupt += 1
                    note("corrupt: \(path) holds counter \(restored.counter), not the last save")
                }
            } catch {
                corrupt += 1
                note("corrupt: \(path): \(error)")
            }
        }
        return (verified, lost, corrupt)
    }

    /// Waits, at most `limit`, for warnings already raised to be delivered, so none is in
    /// flight to an application that is about to go away.
    private func drainWarnings(within limit: Duration = .milliseconds(300)) async {
        let deadline = ContinuousClock.now + limit
        while !ledger.isEmpty, ContinuousClock.now < deadline {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// A simulated relaunch: a new `Application` on the same store starts observing the monitor
    /// (before the old one stops, so no warning falls in between), the old one terminates (its
    /// state flushed), every recorded save is read back, the old controllers must all be gone,
    /// and the new application rebuilds the hierarchy with `restoreHierarchy(in:)`; its live
    /// controller count must equal the old hierarchy's.
    func relaunch() async {
        await drainWarnings()
        guard let old = application else { return }
        let started = ContinuousClock.now
        let baseline = windows.reduce(0) { $0 + $1.allViewControllers.count }
        var oldControllers: [WeakController] = old.liveControllers.map { WeakController(controller: $0) }
        let strays = old.liveControllerCount - baseline

        let fresh = makeApplication()
        old.stopObservingMemoryPressure(monitor)
        old.terminate()
        application = fresh
        windows = []
        let (verified, lost, corrupt) = verifyStore(paths: savedSinceRelaunch)
        savedSinceRelaunch.removeAll()
        let leaked = oldControllers.filter { $0.controller != nil }.count
        if leaked > 0 { note("\(leaked) controller(s) of the previous launch still alive after it terminated") }
        oldControllers.removeAll()

        windows = makeWindows(for: fresh)
        var restored = true
        do {
            for window in windows { restored = try fresh.restoreHierarchy(in: window) && restored }
        } catch {
            restored = false
            note("restoreHierarchy: \(error)")
        }
        let live = fresh.liveControllerCount
        final.relaunches += 1
        count("relaunch")
        var message = SoakMessage(type: "relaunch")
        message.t = SoakValues.now()
        message.verified = verified
        message.lost = lost
        message.corrupt = corrupt
        message.baseline = baseline
        message.live = live
        message.leaked = leaked + max(0, strays)
        message.restored = restored
        message.duration = (ContinuousClock.now - started).seconds
        emit(message)
        if !restored {
            for window in windows { window.close() }
            windows = makeWindows(for: fresh)
            buildFreshHierarchy(in: windows, application: fresh)
        }
    }

    // MARK: Samples

    /// Bytes in recreatable caches: the controllers' rendered entries, and the restoration
    /// layer's recent states (bounded, purged on warnings like the others).
    func cacheBytes() -> Int {
        (application?.liveControllers ?? []).reduce(0) { $0 + (($1 as? SoakController)?.cacheBytes ?? 0) }
            + (application?.restorationCoordinator?.recentStatesCost ?? 0)
    }

    private var samplesTaken = 0

    func emitSample() {
        var message = SoakMessage(type: "sample")
        message.t = SoakValues.now()
        let sample = monitor.lastSample
        message.available = sample?.effectiveAvailable
        message.total = sample?.effectiveTotal
        let level = monitor.level
        message.rss = ProcessMemory.residentBytes()
        // Twice a second at normal level, the RSS trend's sample: malloc first hands its free
        // pages back, so the reading is what the process holds rather than what the allocator
        // keeps for reuse. That retention swings by several MiB between samples and grows with
        // the number of threads that allocate (each gets an arena): it is not a leak, and left
        // in, it drowned a one-minute fit. Not at every sample: the pages handed back are
        // faulted in again, which costs most under emulation.
        samplesTaken += 1
        if level == .normal, samplesTaken % 2 == 0 {
            ProcessMemory.trim()
            message.rss_trimmed = ProcessMemory.residentBytes()
        }
        message.cache = cacheBytes()
        message.level = level.rawValue
        message.live = application?.liveControllerCount
        message.transitions = transitions
        emit(message)
    }

    // MARK: Run

    /// Runs the traffic for the configured duration (or until SIGTERM), then terminates the
    /// application, reads every save back once more, writes the expectations for the verifying
    /// process and sends the `final` line.
    func run() async {
        monitor.onEvent { [ledger] event in
            ledger.count.withLock { $0 += 1 }
            if event.level > .normal { ledger.raised(event) }
            var message = SoakMessage(type: "event")
            message.t = event.time.timeIntervalSince1970
            message.level = event.level.rawValue
            message.previous = event.previousLevel.rawValue
            message.trigger = event.trigger.rawValue
            message.source = event.source.rawValue
            message.ahead = event.aheadOfPoll.map(\.seconds)
            message.available = event.availableBytes
            message.total = event.totalBytes
            soakWriteLine(message.line)
        }
        do {
            try launch()
        } catch {
            note("launch: \(error)")
            return
        }
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + .seconds(configuration.duration)
        var nextSample = start
        var nextRelaunch = start + .seconds(configuration.relaunchInterval)
        var nextLedgerCheck = start + .seconds(1)
        var operations = 0
        while clock.now < end && !soakStopRequested.load(ordering: .relaxed) {
            step()
            operations += 1
            let now = clock.now
            if now >= nextSample {
                emitSample()
                nextSample = now + .milliseconds(250)
            }
            if now >= nextRelaunch {
                await relaunch()
                nextRelaunch = clock.now + .seconds(configuration.relaunchInterval)
            }
            if now >= nextLedgerCheck {
                checkUndelivered(olderThan: 3)
                nextLedgerCheck = now + .seconds(1)
            }
            // Pace, and let main-actor work queued meanwhile (memory warnings) run.
            let due = start + .seconds(Double(operations) / configuration.operationsPerSecond)
            if due > clock.now {
                try? await Task.sleep(until: due, clock: clock)
            } else {
                await Task.yield()
            }
        }
        // A warning raised just before the end gets as long to arrive as one during the run
        // (`checkUndelivered(olderThan: 3)`): a critical one flushes every visible controller
        // first, which took up to 353 ms in the cgroup v2 VM, longer than a relaunch's wait.
        await drainWarnings(within: .seconds(3))
        checkUndelivered(olderThan: 0)
        finish()
    }

    /// Counts events above normal that no report matched within `seconds`.
    func checkUndelivered(olderThan seconds: Double) {
        let cutoff = SoakValues.now() - seconds
        let missed: [MemoryPressureEvent] = ledger.book.withLock { book in
            let old = book.pending.values.filter { $0.time.timeIntervalSince1970 <= cutoff }
            for event in old { book.pending.removeValue(forKey: SoakEventLedger.key(event.time)) }
            return old
        }
        for event in missed {
            final.undelivered += 1
            note("the \(event.level) event raised at \(event.time) was never delivered")
        }
    }

    private func finish() {
        let baseline = windows.reduce(0) { $0 + $1.allViewControllers.count }
        final.watch = monitor.watchDescription
        application?.stopObservingMemoryPressure(monitor)
        application?.terminate()
        monitor.stop()
        let (verified, lost, corrupt) = verifyStore()
        var relaunch = SoakMessage(type: "relaunch")
        relaunch.t = SoakValues.now()
        relaunch.verified = verified
        relaunch.lost = lost
        relaunch.corrupt = corrupt
        relaunch.detail = "final flush"
        emit(relaunch)
        final.transitions = transitions
        final.finalBaseline = baseline
        final.distinctPaths = expectations.count
        final.monitorEvents = ledger.count.withLock { $0 }
        final.expectationsFile = configuration.expectationsPath
        do {
            let data = try JSONEncoder().encode(expectations.mapValues { String($0) })
            try data.write(to: URL(fileURLWithPath: configuration.expectationsPath))
        } catch {
            note("cannot write \(configuration.expectationsPath): \(error)")
        }
        var message = SoakMessage(type: "final")
        message.final = final
        emit(message)
    }
}
