import Foundation

extension Application {
    /// An application whose controllers save and restore their state in `store`, and,
    /// when `memoryMonitor` is given, receive its memory warnings (the monitor is started).
    public convenience init(
        store: StateStore,
        storyboard: Storyboard = Storyboard(),
        memoryMonitor: MemoryPressureMonitor? = nil,
        supportedOrientations: InterfaceOrientationMask = .all
    ) {
        self.init(storyboard: storyboard, supportedOrientations: supportedOrientations)
        let coordinator = RestorationCoordinator(store: store)
        addObserver(coordinator)
        if let memoryMonitor { observeMemoryPressure(memoryMonitor) }
    }

    /// The observer that saves and restores state, when the application has a store.
    public var restorationCoordinator: RestorationCoordinator? {
        observers.lazy.compactMap { $0 as? RestorationCoordinator }.first
    }

    /// The store the application saves into, if any.
    public var store: StateStore? { restorationCoordinator?.store }

    /// Rebuilds the hierarchy archived for `window` (the controllers, by storyboard identifier,
    /// in their navigation stacks, tabs and presentations), makes the window key and visible,
    /// and lets each controller restore its state on its first `viewWillAppear`.
    ///
    /// Returns `false`, leaving the window empty for the app to fill, when there is nothing to
    /// restore, when the archive cannot be rebuilt (it is set aside and reported), or when the
    /// previous two launches died while restoring (the crash-loop guard; also set aside).
    /// Throws only when the store itself fails.
    @discardableResult
    public func restoreHierarchy(in window: Window) throws(StateStoreError) -> Bool {
        guard let coordinator = restorationCoordinator else { return false }
        let scene = coordinator.sceneName(of: window, in: self)
        let guardrail = CrashLoopGuard(store: coordinator.store, scene: scene)
        guard let data = try coordinator.store.hierarchyArchive(scene: scene) else { return false }
        if case .skipped(let attempts) = try guardrail.beginRestoration() {
            coordinator.report(.crashLoopDetected(interruptedAttempts: attempts))
            return false
        }
        let archive: HierarchyArchive
        do {
            archive = try HierarchyArchive.decode(data)
            guard archive.format <= HierarchyArchive.currentFormat else {
                throw StateStoreError.decodingFailed(path: "hierarchy", reason: "archive format \(archive.format) is newer than this build's")
            }
        } catch {
            try coordinator.store.setHierarchyArchiveAside(scene: scene)
            try guardrail.finishRestoration()
            coordinator.report(.archiveUnusable(reason: "\(error)"))
            return false
        }
        guard let rootNode = archive.root else {
            try guardrail.finishRestoration()
            return false
        }
        var presentations: [(ViewController, HierarchyArchive.Node)] = []
        let root: ViewController
        do {
            root = try coordinator.instantiate(rootNode, from: storyboard, presentations: &presentations)
        } catch {
            try coordinator.store.setHierarchyArchiveAside(scene: scene)
            try guardrail.finishRestoration()
            coordinator.report(error)
            return false
        }
        if let orientation = archive.orientation.flatMap(InterfaceOrientation.init(rawValue:)), orientation != window.orientation {
            _ = window.rotate(to: orientation)
        }
        // Until the whole hierarchy is back, its partial shape must not replace the archive.
        coordinator.isRestoringHierarchy = true
        defer {
            coordinator.isRestoringHierarchy = false
            coordinator.flush(archiving: window)
        }
        window.rootViewController = root
        window.makeKeyAndVisible()
        // Presentations go on screen in order, each over its presenter, without animation.
        var index = 0
        while index < presentations.count {
            let (presenter, node) = presentations[index]
            var nested: [(ViewController, HierarchyArchive.Node)] = []
            do {
                let presented = try coordinator.instantiate(node, from: storyboard, presentations: &nested)
                presenter.present(presented, animated: false, completion: nil)
            } catch {
                coordinator.report(error)
            }
            presentations += nested
            index += 1
        }
        for controller in coordinator.preorder(root) {
            (controller as? any StateRestoring)?.applicationFinishedRestoringState()
        }
        try guardrail.finishRestoration()
        return true
    }

    /// Saves every visible controller's state now, in one transaction.
    public func saveVisibleState() {
        restorationCoordinator?.saveVisibleControllers(of: self)
    }

    /// Calls ``terminate()`` when the process receives SIGTERM or SIGINT, then exits with
    /// 128 + the signal number. The main queue must be running (`dispatchMain()` or a run loop).
    ///
    /// The handler is installed before this returns: a signal that arrives at once is not
    /// lost. It only writes the signal number to a pipe (all a signal handler may safely do)
    /// and restores the default action, so a second signal ends a process whose main thread
    /// is stuck; the main queue reads the pipe and terminates the application there. The
    /// handlers are process-wide: the application that installed them last is the one
    /// terminated. Returns `false` when they could not be installed.
    @discardableResult
    public func installTerminationHandlers(signals: [Int32] = [SIGTERM, SIGINT]) -> Bool {
        TerminationSignals.install(signals, for: self)
    }
}

/// The process-wide self-pipe behind ``Application/installTerminationHandlers(signals:)``.
enum TerminationSignals {
    /// Written only by the signal handler, after ``install(_:for:)`` set it (before any handler runs).
    nonisolated(unsafe) static var writeEnd: Int32 = -1
    @MainActor static weak var target: Application?
    @MainActor static var source: (any DispatchSourceRead)?

    @MainActor
    static func install(_ signals: [Int32], for application: Application) -> Bool {
        if source == nil {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return false }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
            writeEnd = ends[1]
            let readEnd = ends[0]
            let reader = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .main)
            reader.setEventHandler {
                var number: UInt8 = 0
                guard read(readEnd, &number, 1) == 1 else { return }
                MainActor.assumeIsolated {
                    TerminationSignals.target?.terminate()
                    exit(128 + Int32(number))
                }
            }
            reader.resume()
            source = reader
        }
        target = application
        for number in signals {
            let previous = signal(number) { received in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(TerminationSignals.writeEnd, &byte, 1)
                signal(received, SIG_DFL)
                errno = saved
            }
            // SIG_ERR is the handler whose bits are -1.
            if let previous, unsafeBitCast(previous, to: Int.self) == -1 { return false }
        }
        return true
    }
}
