import Foundation
import StateStoreLinux

extension Application {
    /// An application whose controllers save and restore their state in `store`, and,
    /// when `memoryMonitor` is given, receive its memory warnings (the monitor is started).
    /// It logs to the store's ``StateStore/Options/logger`` and records its metrics where the
    /// store does: its ``StateStore/Options/metricsFactory``, or the `MetricsSystem.factory` the
    /// store was opened under.
    public convenience init(
        store: StateStore,
        storyboard: Storyboard = Storyboard(),
        memoryMonitor: MemoryPressureMonitor? = nil,
        supportedOrientations: InterfaceOrientationMask = .all
    ) {
        self.init(
            storyboard: storyboard, supportedOrientations: supportedOrientations, logger: store.options.logger,
            metricsFactory: store.resolvedMetricsFactory
        )
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

    /// Rebuilds the hierarchy archived for `window`'s scene (see ``restoreHierarchyWithReport(in:)``),
    /// makes the window key and visible, and lets each controller restore its state on its
    /// first `viewWillAppear`.
    ///
    /// Returns whether a hierarchy was put in the window. `false` leaves the window empty for
    /// the app to fill: there was nothing to restore, the archive could not be rebuilt (it is
    /// set aside and reported), or the previous two launches died while restoring (the
    /// crash-loop guard; also set aside). `true` may still mean that some controllers could not
    /// be rebuilt: they are reported through ``RestorationCoordinator/errorHandler``, and
    /// ``restoreHierarchyWithReport(in:)`` lists them. Throws only when the store itself fails.
    ///
    /// ```swift
    /// let window = Window(size: Size(width: 390, height: 844), application: application)
    /// if try !application.restoreHierarchy(in: window) {  // nothing saved: the first screens
    ///     window.rootViewController = NavigationController(rootViewController: InboxController())
    ///     window.makeKeyAndVisible()
    /// }
    /// ```
    @discardableResult
    public func restoreHierarchy(in window: Window) throws(StateStoreError) -> Bool {
        try restoreHierarchyWithReport(in: window).restored
    }

    /// Rebuilds the hierarchy archived for `window`'s scene, as ``restoreHierarchy(in:)`` does,
    /// and says what happened: whether it was restored or set aside and why, and which archived
    /// controllers could not be rebuilt.
    ///
    /// The archive is checked whole before anything is made (its size, node count and depth
    /// within ``RestorationCoordinator/archiveLimits``, at most one presentation per
    /// containment tree, tab selections in range, kinds that fit their classes); one that fails
    /// is set aside unapplied. Controllers are made as ``HierarchyArchive`` describes, in time
    /// linear in the number of nodes. A controller this build cannot make is left out with what
    /// it contains, the rest is rebuilt, and the archive as saved is set aside for inspection
    /// (the live archive then describes what is on screen). When a controller's code now gives
    /// it a different restoration identifier than the archive knew, the code's wins and its
    /// state moves to the new path (or stays, when the new path already holds one). No state is
    /// ever removed.
    public func restoreHierarchyWithReport(in window: Window) throws(StateStoreError) -> HierarchyRestoration {
        let scene = window.sceneIdentifier
        guard let coordinator = restorationCoordinator else {
            return HierarchyRestoration(scene: scene, outcome: .nothingToRestore)
        }
        let store = coordinator.store
        let limits = coordinator.archiveLimits
        // A window showing another process's scene read-only writes nothing: no crash-loop
        // count, no archive set aside, no state moved.
        let readOnly = coordinator.isReadOnly(window)
        let guardrail = readOnly ? nil : CrashLoopGuard(store: store, scene: scene)
        guard let byteCount = try store.hierarchyArchiveByteCount(scene: scene) else {
            return HierarchyRestoration(scene: scene, outcome: .nothingToRestore)
        }
        if case .skipped(let attempts)? = try guardrail?.beginRestoration() {
            coordinator.report(.crashLoopDetected(interruptedAttempts: attempts))
            return HierarchyRestoration(scene: scene, outcome: .crashLoopSkipped(interruptedAttempts: attempts))
        }
        func setAside(_ reason: String) throws(StateStoreError) -> HierarchyRestoration {
            // A read-only window leaves the archive where it is: it is the holder's.
            let reason = readOnly ? reason + RestorationError.leftInPlace : reason
            if !readOnly { try store.setHierarchyArchiveAside(scene: scene, reason: reason) }
            try guardrail?.finishRestoration()
            coordinator.report(.archiveUnusable(reason: reason))
            return HierarchyRestoration(scene: scene, outcome: .setAside(reason: reason))
        }
        guard byteCount <= limits.maximumByteCount else {
            return try setAside(
                "the archive is \(byteCount) bytes, more than the limit of \(limits.maximumByteCount) bytes")
        }
        let archive: HierarchyArchive
        do {
            guard let data = try store.hierarchyArchive(scene: scene) else {
                try guardrail?.finishRestoration()
                return HierarchyRestoration(scene: scene, outcome: .nothingToRestore)
            }
            archive = try HierarchyArchive.decode(data, limits: limits)
        } catch {
            if case .decodingFailed(_, let reason) = error { return try setAside(reason) }
            throw error
        }
        guard archive.format >= 1 else {
            return try setAside("archive format \(archive.format) was never written; formats start at 1")
        }
        guard archive.format <= HierarchyArchive.currentFormat else {
            return try setAside(
                "archive format \(archive.format) is newer than this build's \(HierarchyArchive.currentFormat)")
        }
        do {
            try archive.validate(limits: limits)
        } catch {
            return try setAside(error.description)
        }
        guard let rootNode = archive.root else {
            try guardrail?.finishRestoration()
            return HierarchyRestoration(scene: scene, outcome: .nothingToRestore, unarchived: archive.unarchived)
        }
        var rebuild = RestorationCoordinator.Rebuild()
        let made: ViewController?
        do {
            made = try coordinator.instantiate(
                rootNode, from: storyboard, archivedParent: [], currentParent: [], location: rootNode.displayName,
                rebuild: &rebuild
            )
        } catch {
            let reason = if case .archiveUnusable(let reason) = error { reason } else { error.description }
            return try setAside(reason)
        }
        guard let root = made else {
            return try setAside(rebuild.notRebuilt.first?.description ?? "the root controller could not be made")
        }
        if let orientation = archive.orientation.flatMap(InterfaceOrientation.init(rawValue:)),
            orientation != window.orientation
        {
            _ = window.rotate(to: orientation)
        }
        // Until the whole hierarchy is back, its partial shape must not replace the archive.
        coordinator.isRestoringHierarchy = true
        var rebuiltAsArchived = true
        defer {
            coordinator.isRestoringHierarchy = false
            // The database holds the archive just read: when the window now has exactly that
            // shape, it is not encoded and written again.
            coordinator.submit(archiving: window, stored: rebuiltAsArchived ? archive : nil)
        }
        // States follow renamed identifiers before anything appears and restores.
        var moved = readOnly ? [] : coordinator.followRenamedIdentifiers(rebuild.renamed, scene: scene)
        rebuild.renamed.removeAll()
        window.rootViewController = root
        // Every rebuilt controller's state in one query, before any appears.
        coordinator.preloadStates(of: root)
        window.makeKeyAndVisible()
        // Presentations go on screen in order, each over its presenter, without animation.
        // Validation allowed at most one per containment tree, so each presenter is free.
        var index = 0
        while index < rebuild.presentations.count {
            let (presenter, node, archived, current) = rebuild.presentations[index]
            index += 1
            let location = archived.joined(separator: "/") + " ⤷ " + node.displayName
            do {
                guard
                    let presented = try coordinator.instantiate(
                        node, from: storyboard, archivedParent: archived, currentParent: current, location: location,
                        rebuild: &rebuild
                    )
                else { continue }
                if !readOnly { moved += coordinator.followRenamedIdentifiers(rebuild.renamed, scene: scene) }
                rebuild.renamed.removeAll()
                presenter.present(presented, animated: false, completion: nil)
            } catch {
                let reason = if case .archiveUnusable(let reason) = error { reason } else { error.description }
                rebuild.notRebuilt.append(.init(path: location, typeName: node.typeDescription, reason: reason))
            }
        }
        if !rebuild.notRebuilt.isEmpty {
            rebuiltAsArchived = false
            // What is on screen is not what was archived: keep the archive as saved for
            // inspection; the deferred flush archives what is on screen.
            // The reason names the first 20; the report (and the returned value) has them all.
            var missing = rebuild.notRebuilt.prefix(20).map(\.description).joined(separator: "; ")
            if rebuild.notRebuilt.count > 20 { missing += "; and \(rebuild.notRebuilt.count - 20) more" }
            if !readOnly {
                try store.setHierarchyArchiveAside(scene: scene, reason: "partly rebuilt; not rebuilt: \(missing)")
            }
            coordinator.forgetArchive(of: scene)
            // One report per controller for a few; past 20, one report for the rest.
            for omission in rebuild.notRebuilt.prefix(20) { coordinator.report(.notRebuilt(omission)) }
            if rebuild.notRebuilt.count > 20 {
                coordinator.report(
                    .archiveUnusable(
                        reason:
                            "\(rebuild.notRebuilt.count - 20) more controllers could not be rebuilt; restoreHierarchyWithReport(in:) lists them all"
                    ))
            }
        }
        for controller in coordinator.preorder(root) {
            coordinator.finishRestoring(controller)
        }
        try guardrail?.finishRestoration()
        return HierarchyRestoration(
            scene: scene, outcome: .restored, notRebuilt: rebuild.notRebuilt, unarchived: archive.unarchived,
            movedStates: moved
        )
    }

    /// The scenes a previous launch archived (see ``StateStore/savedSceneIdentifiers()``) that
    /// no other live process holds now, the default scene first; empty without a store. Create
    /// a window for each and restore it. A scene another instance of the app shows is left out:
    /// its window there saves it.
    public func savedSceneIdentifiers() throws(StateStoreError) -> [String] {
        guard let store else { return [] }
        var free: [String] = []
        for scene in try store.savedSceneIdentifiers() {
            // A claim file that cannot be read leaves its scene listed: the window made for it
            // finds out, and never shows it over a holder.
            if let holder = try? store.sceneHolder(of: scene), !holder.isThisProcess { continue }
            free.append(scene)
        }
        return free
    }

    /// Saves every visible controller's state now, in one transaction, and waits until it and
    /// every state handed to the writer before it are written: a flush point.
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
    /// terminated. The signals are unblocked in the calling (main) thread: a process its parent
    /// started with them blocked still takes them. Returns `false` when they could not be
    /// installed.
    ///
    /// One owner handles the signals: in a process whose `ServiceGroup` runs
    /// `ApplicationStateService` (the `StateStoreServiceLifecycle` product), the group owns
    /// them, and this installs nothing, returns `false` and reports a
    /// ``TerminationSignalsClaimedError`` (as ``RestorationError/terminationSignalsClaimed(_:)``
    /// to the ``RestorationCoordinator/errorHandler`` when the application has a store, and to
    /// ``logger``). See ``TerminationSignalClaim``.
    @discardableResult
    public func installTerminationHandlers(signals: [Int32] = [SIGTERM, SIGINT]) -> Bool {
        do {
            try TerminationSignalClaim.claim(.terminationHandlers)
        } catch {
            logger.info(
                "termination handlers not installed",
                metadata: [
                    "statestore.owner": "\(error.owner)", "statestore.error": "\(error)",
                ])
            restorationCoordinator?.report(.terminationSignalsClaimed(error))
            return false
        }
        guard TerminationSignals.install(signals, for: self) else {
            TerminationSignalClaim.release(.terminationHandlers)
            return false
        }
        return true
    }
}

/// The process-wide self-pipe behind ``Application/installTerminationHandlers(signals:)``.
enum TerminationSignals {
    /// The pipe's write end, which the handler writes into.
    @MainActor static var writeEnd: Int32 = -1
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
        // The handler is C (`clinux_termination_handler`): it writes the signal's number into
        // the pipe and nothing else, with nothing on its stack (see its comment).
        for number in signals where clinux_install_termination_handler(number, writeEnd) != 0 {
            return false
        }
        return true
    }
}
