import Foundation
import Testing

@testable import StateStore

@MainActor
@Suite("Restoration: save on disappear, restore on appear")
struct RestorationTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    func storyboard(finished: ((String) -> Void)? = nil) -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register("nav") {
            let navigation = RestoringNavigationController()
            navigation.onFinishedRestoring = finished
            return navigation
        }
        for identifier in ["a", "b", "c"] {
            storyboard.register(identifier) {
                let note = NoteController()
                return note
            }
        }
        storyboard.register("counter") { CounterController() }
        return storyboard
    }

    /// A visible window whose root is a navigation controller holding `stack`.
    func launch(
        _ store: StateStore, stack: [String] = ["a"], finished: ((String) -> Void)? = nil
    ) throws
        -> (Application, Window, NavigationController)
    {
        let application = Application(store: store, storyboard: storyboard(finished: finished))
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = try #require(
            try application.storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
        navigation.setViewControllers(
            try stack.map { try application.storyboard.instantiateViewController(withIdentifier: $0) }, animated: false)
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        return (application, window, navigation)
    }

    @Test func theStateIsRestoredBeforeWillAppearAndSavedAfterWillDisappear() throws {
        let store = try StateStore(path: database)
        try store.save(NoteController.State(text: "from last time", edits: 3), for: "nav/a")
        let (application, _, navigation) = try launch(store)
        let note = try #require(navigation.topViewController as? NoteController)
        #expect(note.stateInWillAppear == .init(text: "from last time", edits: 3))

        note.uncommittedText = "committed by the override"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: true)
        #expect(
            try store.restore(NoteController.State.self, for: "nav/a")
                == .init(text: "committed by the override", edits: 3))
    }

    /// Two screens pushed in turn at the same place whose identifiers are canonically
    /// equivalent but different bytes ("café" precomposed, then decomposed) are two paths, two
    /// rows: the second does not take the first one's path, nor its state.
    @Test func identifiersThatAreEqualStringsButDifferentBytesAreDifferentPaths() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        for (identifier, text) in [
            (composed, "precomposed"), (decomposed, "decomposed"), (composed, "precomposed again"),
        ] {
            let note = NoteController()
            note.restorationIdentifier = identifier
            navigation.pushViewController(note, animated: false)
            if note.restorableState.text.isEmpty || text.hasSuffix("again") { note.restorableState.text = text }
            _ = navigation.popViewController(animated: false)
        }
        application.restorationCoordinator?.flush()
        #expect(
            try store.restore(NoteController.State.self, for: RestorationPath(validating: "nav/" + composed))?.text
                == "precomposed again")
        #expect(
            try store.restore(NoteController.State.self, for: RestorationPath(validating: "nav/" + decomposed))?.text
                == "decomposed")
    }

    @Test func controllersOfManyClassesAreSavedAndRestoredEachAsItsOwnType() throws {
        enum T0 {}
        enum T1 {}
        enum T2 {}
        enum T3 {}
        enum T4 {}
        enum T5 {}
        enum T6 {}
        enum T7 {}
        enum T8 {}
        enum T9 {}
        enum T10 {}
        enum T11 {}
        enum T12 {}
        // More classes than the coordinator keeps in its list of classes met, some not
        // restoring, some restoring through an inherited conformance, met over and over.
        let makers: [@MainActor () -> ViewController] = [
            { TaggedController<T0>() }, { PlainTagged<T0>() }, { TaggedSubclass<T1>() }, { TaggedController<T2>() },
            { PlainTagged<T1>() }, { TaggedController<T3>() }, { TaggedSubclass<T4>() }, { TaggedController<T5>() },
            { PlainTagged<T2>() }, { TaggedController<T6>() }, { TaggedSubclass<T7>() }, { TaggedController<T8>() },
            { PlainTagged<T3>() }, { TaggedController<T9>() }, { TaggedSubclass<T10>() }, { TaggedController<T11>() },
            { PlainTagged<T4>() }, { TaggedController<T12>() }, { TaggedSubclass<T12>() }, { PlainTagged<T5>() },
        ]
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        for round in 0..<3 {
            for (index, make) in makers.enumerated() {
                let controller = make()
                controller.restorationIdentifier = "screen\(index)"
                navigation.pushViewController(controller, animated: false)
                if let tagged = controller as? any TextState {
                    // Restored as it appeared: what the previous round's instance left.
                    #expect(tagged.stateText == (round == 0 ? "" : "\(index) in round \(round - 1)"), "screen \(index)")
                    tagged.stateText = "\(index) in round \(round)"
                }
                _ = navigation.popViewController(animated: false)
            }
        }
        try #require(application.restorationCoordinator).flush()
        for (index, make) in makers.enumerated() {
            let saved = try store.restore(
                TaggedController<T0>.State.self, for: RestorationPath(validating: "nav/screen\(index)"))
            #expect(
                saved == (make() is any StateRestoring ? .init(text: "\(index) in round 2") : nil), "screen \(index)")
        }
    }

    @Test func thePushWritesTheStateAndTheArchiveInOneTransaction() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        coordinator.flush()
        let before = coordinator.statistics
        (try #require(navigation.topViewController as? NoteController)).restorableState.text = "edited"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: true)
        let after = coordinator.statistics
        #expect(after.transactions == before.transactions + 1)
        #expect(after.stateWrites == before.stateWrites + 1)
        #expect(after.archiveWrites == before.archiveWrites + 1)
        let archive = try HierarchyArchive.decode(try #require(try store.hierarchyArchive()))
        #expect(archive.root?.children.map(\.storyboardIdentifier) == ["a", "b"])
    }

    @Test(arguments: [false, true])
    func anUnchangedStateIsNotRewritten(writesBehind: Bool) throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        coordinator.writesBehind = writesBehind
        let note = try #require(navigation.topViewController as? NoteController)
        note.restorableState.text = "once"
        for _ in 0..<20 {
            navigation.pushViewController(
                try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
            _ = navigation.popViewController(animated: false)
        }
        coordinator.flush()
        // "a" was written once; each fresh "b" once (its state never changes afterwards, but each
        // new instance starts from what the store holds and writes identical bytes: skipped).
        #expect(try store.generation(at: "nav/a") == 1)
        #expect(try store.generation(at: "nav/b") == 1)
        #expect(coordinator.statistics.stateWrites == 2)
        if !writesBehind {
            // Write-through commits each change alone; write-behind may fold changes handed
            // over while the writer was busy into one batch, which checks each path once.
            #expect(coordinator.statistics.unchangedSkips >= 38)
        }
        note.restorableState.edits += 1
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        #expect(try store.generation(at: "nav/a") == 2)
    }

    /// Runs `body` while another connection holds the write lock: the writer's first batch
    /// waits for it, and everything handed over meanwhile is folded into the batch after it.
    func withWriterHeldBack(_ body: () throws -> Void) async throws {
        let other = try StateStore(path: database)
        let locked = LockHeld()
        let holder = Thread {
            try? other.write { (_) throws(StateStoreError) in
                locked.flag.store(true, ordering: .sequentiallyConsistent)
                while !locked.release.load(ordering: .sequentiallyConsistent) { Thread.sleep(forTimeInterval: 0.002) }
            }
        }
        holder.start()
        while !locked.flag.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
        defer { locked.release.store(true, ordering: .sequentiallyConsistent) }
        try body()
    }

    @Test func aFoldedStateThatCannotBeWrittenFallsBackToTheOneItReplaced() async throws {
        let store = try StateStore(path: database, options: .init(maximumStateSize: 200))
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        coordinator.writesBehind = true
        let note = try #require(navigation.topViewController as? NoteController)
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        _ = navigation.popViewController(animated: false)
        coordinator.flush()
        try await withWriterHeldBack {
            // Both saves of "a" are handed over while the writer waits: folded into one batch.
            note.restorableState.text = "short"
            navigation.pushViewController(
                try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
            _ = navigation.popViewController(animated: false)
            note.restorableState.text = String(repeating: "long ", count: 100)
            navigation.pushViewController(
                try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        }
        coordinator.flush()
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "short")
        #expect(
            coordinator.recentErrors.contains {
                if case .store(.stateTooLarge(let path, _, 200)) = $0 { return path == "nav/a" } else { return false }
            })
        #expect(!coordinator.hasPendingWrites)
        let archive = try HierarchyArchive.decode(try #require(try store.hierarchyArchive()))
        #expect(archive.root?.children.map(\.storyboardIdentifier) == ["a", "b"])
    }

    @Test func aWriterThatFallsBehindFoldsTheChangesHandedToIt() async throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        coordinator.writesBehind = true
        // "b" once, so that its later instances are restored from what the coordinator knows.
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        _ = navigation.popViewController(animated: false)
        coordinator.flush()
        let before = coordinator.statistics
        let note = try #require(navigation.topViewController as? NoteController)
        try await withWriterHeldBack {
            for step in 1...50 {
                note.restorableState.edits = step
                navigation.pushViewController(
                    try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
                _ = navigation.popViewController(animated: false)
            }
        }
        coordinator.flush()
        let after = coordinator.statistics
        // 100 structural changes; one batch waited for the lock, the rest were folded behind it.
        #expect(after.transactions - before.transactions <= 3)
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.edits == 50)
        let archive = try HierarchyArchive.decode(try #require(try store.hierarchyArchive()))
        #expect(archive.root?.children.map(\.storyboardIdentifier) == ["a"])
    }

    @Test func removalsAndArchivesOfOneSceneAreNeverFoldedTogether() {
        let archive = HierarchySnapshot()
        var archived = WriteBatch()
        archived.archives = [("window2", "window2", archive)]
        var removal = WriteBatch()
        removal.removedScenes = ["window2"]
        // Archived, then closed: folded, an archive kept for a retry after a failure that may
        // pass would outlive the removal and bring the window back.
        #expect(!archived.canAbsorb(removal))
        // Closed, then archived again: the archive must come after the removal.
        #expect(!removal.canAbsorb(archived))
        // Other scenes fold freely.
        var other = WriteBatch()
        other.archives = [("main", "", archive)]
        #expect(removal.canAbsorb(other) && other.canAbsorb(removal))
        removal.absorb(other)
        #expect(removal.archives.count == 1 && removal.removedScenes == ["window2"])
    }

    @Test func anAppearanceSeesAnotherConnectionsCommitAndQueriesNothingOtherwise() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        func showB(editing text: String? = nil) throws -> NoteController {
            let b = try #require(
                try application.storyboard.instantiateViewController(withIdentifier: "b") as? NoteController)
            navigation.pushViewController(b, animated: false)
            if let text { b.restorableState.text = text }
            _ = navigation.popViewController(animated: false)
            return b
        }
        _ = try showB(editing: "mine")
        coordinator.flush()
        // Nothing changed elsewhere: a new "b" is restored from what the coordinator knows.
        let queries = coordinator.statistics.restoreQueries
        usleep(2_000)
        #expect(try showB().stateInWillAppear?.text == "mine")
        #expect(coordinator.statistics.restoreQueries == queries)
        // Another connection (as another process would) writes "nav/b": the next "b" sees it.
        let other = try StateStore(path: database)
        try other.save(NoteController.State(text: "theirs", edits: 7), for: "nav/b")
        usleep(2_000)
        #expect(try showB().stateInWillAppear == .init(text: "theirs", edits: 7))
        #expect(coordinator.statistics.restoreQueries > queries)
    }

    @Test func anUnchangedSaveWhileAnotherConnectionCommitsDoesNotHideThatCommit() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        application.storyboard.register("g") { GatedNoteController() }
        let root = try #require(navigation.topViewController as? NoteController)
        func showG(_ text: String? = nil, changingRoot rootText: String? = nil) throws -> GatedNoteController {
            if let rootText { root.restorableState.text = rootText }
            let g = try #require(
                try application.storyboard.instantiateViewController(withIdentifier: "g") as? GatedNoteController)
            navigation.pushViewController(g, animated: false)
            if let text { g.restorableState.text = text }
            _ = navigation.popViewController(animated: false)
            return g
        }
        _ = try showG("X")
        coordinator.flush()
        // The next save of "nav/g" is unchanged ("X" again); the writer stops before committing
        // its batch (which also holds the root's changed state) while another connection, as
        // another process would, commits "Y" there.
        let gate = noteEncodingGate
        gate.armed.store(true, ordering: .sequentiallyConsistent)
        #expect(try showG(changingRoot: "changed").stateInWillAppear?.text == "X")
        let deadline = ContinuousClock.now + .seconds(30)
        while !gate.entered.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline { usleep(500) }
        let entered = gate.entered.load(ordering: .sequentiallyConsistent)
        #expect(entered)
        let other = try StateStore(path: database)
        try other.save(GatedNoteController.State(text: "Y"), for: "nav/g")
        gate.open.store(true, ordering: .sequentiallyConsistent)
        coordinator.flush()
        // The batch began before that commit: what it settled is not taken as verified past it.
        usleep(2_000)
        #expect(try showG().stateInWillAppear?.text == "Y")
        #expect(try store.restore(GatedNoteController.State.self, for: "nav/g")?.text == "Y")
    }

    /// Shows a new instance of `identifier` on `navigation` and takes it off again.
    func showAndHide(
        _ identifier: String, on navigation: NavigationController, editing text: String? = nil
    ) throws -> NoteController {
        let note = try #require(
            try navigation.application?.storyboard.instantiateViewController(withIdentifier: identifier)
                as? NoteController)
        navigation.pushViewController(note, animated: false)
        if let text { note.restorableState.text = text }
        _ = navigation.popViewController(animated: false)
        return note
    }

    @Test func aDatabaseWithNoStateAnswersFirstAppearancesWithoutAQueryAndStillSeesOtherConnections() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        // The store held no state at open: neither the root "a" nor a first "b" asks the database.
        #expect(try showAndHide("b", on: navigation).stateInWillAppear == .init())
        #expect(coordinator.statistics.restoreQueries == 0)
        // Another connection writes "nav/c", a path this coordinator never wrote: it is seen.
        let other = try StateStore(path: database)
        try other.save(NoteController.State(text: "theirs", edits: 2), for: "nav/c")
        usleep(2_000)
        #expect(try showAndHide("c", on: navigation).stateInWillAppear == .init(text: "theirs", edits: 2))
        #expect(coordinator.statistics.restoreQueries > 0)
    }

    @Test func aStateSavedThroughTheStoreAfterOpenIsRestoredOnADatabaseThatHadNone() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        try store.save(NoteController.State(text: "direct", edits: 1), for: "nav/b")
        #expect(try showAndHide("b", on: navigation).stateInWillAppear == .init(text: "direct", edits: 1))
        withExtendedLifetime(application) {}
    }

    @Test func aSecondApplicationOnTheSameStoreSeesWhatTheFirstOnesWriterWrote() throws {
        let store = try StateStore(path: database)
        let (first, _, navigation) = try launch(store)
        _ = try showAndHide("b", on: navigation, editing: "from the first")
        first.restorationCoordinator?.flush()
        // Its writer's commits raise no change count: the second coordinator must ask.
        let (second, _, secondNavigation) = try launch(store)
        #expect(try showAndHide("b", on: secondNavigation).stateInWillAppear?.text == "from the first")
        withExtendedLifetime(second) {}
    }

    @Test func theFirstApplicationOnAStoreSeesWhatASecondOnesWriterWrote() throws {
        let store = try StateStore(path: database)
        let (first, _, navigation) = try launch(store)
        let (second, _, secondNavigation) = try launch(store)
        _ = try showAndHide("c", on: secondNavigation, editing: "from the second")
        second.restorationCoordinator?.flush()
        // The first coordinator was the store's only one when it was made; it is not any more.
        #expect(try showAndHide("c", on: navigation).stateInWillAppear?.text == "from the second")
        withExtendedLifetime(first) {}
    }

    @Test func aStateWrittenBeforeASaveThatCannotBeIsStillRestoredOnADatabaseThatHadNone() throws {
        var options = StateStore.Options()
        options.maximumStateSize = 200
        let store = try StateStore(path: database, options: options)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        _ = try showAndHide("b", on: navigation, editing: "small")
        coordinator.flush()
        // Over the size limit: reported and dropped; the row keeps "small".
        _ = try showAndHide("b", on: navigation, editing: String(repeating: "x", count: 400))
        coordinator.flush()
        #expect(coordinator.recentErrors.contains { "\($0)".contains("200") })
        #expect(try showAndHide("b", on: navigation).stateInWillAppear?.text == "small")
    }

    @Test func aVersion1RowMigratesToVersion2OnRead() throws {
        let store = try StateStore(path: database)
        try store.save(CounterController.Version1(text: "three little words"), for: "nav/counter", version: 1)
        let (application, _, navigation) = try launch(store, stack: ["counter"])
        let counter = try #require(navigation.topViewController as? CounterController)
        #expect(counter.restorableState == .init(title: "three little words", words: 3))
        #expect(application.restorationCoordinator?.statistics.migrations == 1)
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "a"), animated: false)
        #expect(try store.entries(under: "nav/counter").first?.version == 2)
        #expect(try store.restore(CounterController.State.self, for: "nav/counter") == counter.restorableState)
    }

    @Test func aRowFromANewerVersionIsQuarantinedWithItsBytesAndTheDefaultStateIsUsed() throws {
        let store = try StateStore(path: database)
        try store.save(["from": "the future"], for: "nav/counter", version: 3)
        let original = try #require(try store.state(at: "nav/counter"))
        let (application, _, navigation) = try launch(store, stack: ["counter"])
        #expect((try #require(navigation.topViewController as? CounterController)).restorableState == .init())
        let quarantined = try #require(try store.quarantinedStates().first)
        #expect(quarantined.bytes == original.bytes)
        #expect(quarantined.version == 3)
        #expect(quarantined.reason.contains("version 3 is newer"))
        #expect(try store.state(at: "nav/counter") == nil)
        #expect(
            application.restorationCoordinator?.recentErrors.contains {
                if case .quarantined(let path, _) = $0 { return path == "nav/counter" } else { return false }
            } == true)
    }

    @Test func garbageBytesAreQuarantined() throws {
        let store = try StateStore(path: database)
        let garbage = Data([0xFF, 0x00, 0x13, 0x37])
        try store.save(encoded: garbage, encoding: .binary, typeName: "?", version: 1, for: "nav/a")
        let (_, _, navigation) = try launch(store)
        #expect((try #require(navigation.topViewController as? NoteController)).restorableState == .init())
        #expect(try store.quarantinedStates().map(\.bytes) == [garbage])
    }

    @Test func aCancelledInteractivePopSavesAndRestoresConsistently() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store, stack: ["a", "b"])
        let a = try #require(navigation.viewControllers[0] as? NoteController)
        let b = try #require(navigation.viewControllers[1] as? NoteController)
        a.restorableState.text = "under"
        b.restorableState.text = "on top"
        let pop = navigation.beginInteractivePop()
        // B began to disappear: its state then is what gets saved.
        b.restorableState.edits = 1
        pop.cancel()
        // B appears again without being overwritten by its own, older, saved state.
        #expect(b.restorableState == .init(text: "on top", edits: 1))
        #expect(a.restorableState.text == "under")
        application.restorationCoordinator?.flush()
        #expect(try store.restore(NoteController.State.self, for: "nav/b") == .init(text: "on top", edits: 0))
        #expect(application.lifecycleViolations.isEmpty)

        // A relaunch comes back to the same place.
        application.terminate()
        let relaunched = Application(store: store, storyboard: storyboard())
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: relaunched)
        #expect(try relaunched.restoreHierarchy(in: window))
        let stack = (try #require(window.rootViewController as? NavigationController)).viewControllers
        #expect(stack.map(\.restorationIdentifier) == ["a", "b"])
        #expect(try #require(stack[1] as? NoteController).restorableState == .init(text: "on top", edits: 1))
    }

    @Test func replacingAWindowsRootCommitsWhatDisappearedWithTheNewArchiveInOneTransaction() throws {
        // The window's transition ends before the window announces its new root: what the old
        // root's controllers queued as they disappeared must wait for that archive, not go out
        // alone when the transition ends (a crash between the two would pair the new states
        // with the old hierarchy). Write-through makes each batch one transaction, at once.
        let store = try StateStore(path: database)
        let (application, window, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        coordinator.writesBehind = false
        (try #require(navigation.topViewController as? NoteController)).restorableState.text = "left behind"
        let before = coordinator.statistics.transactions
        window.rootViewController = try application.storyboard.instantiateViewController(withIdentifier: "b")
        #expect(coordinator.statistics.transactions == before + 1)
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "left behind")
        #expect(
            try store.hierarchyArchive().map { try HierarchyArchive(decoding: $0) }?.root?.storyboardIdentifier == "b")
    }

    @Test func aCriticalWarningSavesVisibleStatePurgesCachesAndIsRecorded() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let note = try #require(navigation.topViewController as? NoteController)
        let cache = RecreatableCache<Int, [UInt8]>(name: "previews", cost: { $0.count })
        note.register(cache)
        for key in 0..<16 { cache[key] = [UInt8](repeating: UInt8(key), count: 64 << 10) }
        note.restorableState.text = "typed but not yet saved"

        let warning = application.respondToMemoryPressure(level: .warning, availableBytes: 1 << 30, raisedAt: Date())
        #expect(cache.count == 8)
        #expect(warning.cacheCostReleased >= 8 * (64 << 10))
        #expect(try store.restore(NoteController.State.self, for: "nav/a") == nil)

        application.didReceiveMemoryWarning(level: .critical)
        #expect(cache.count == 0)
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "typed but not yet saved")
        let events = try store.pressureEvents(limit: 10)
        #expect(events.map(\.level) == [.critical, .warning])
        #expect(events.last?.availableBytes == 1 << 30)
        #expect(application.memoryWarningCount == 2)
    }

    @Test func restoringRunsTheFinishedHookParentsBeforeChildren() throws {
        let store = try StateStore(path: database)
        do {
            let (application, _, navigation) = try launch(store, stack: ["a", "b", "c"])
            navigation.pushViewController(
                try application.storyboard.instantiateViewController(withIdentifier: "a"), animated: false)
            application.terminate()
        }
        let archived = try store.hierarchyArchive()
        var order: [String] = []
        let application = Application(store: store, storyboard: storyboard(finished: { order.append($0) }))
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let restoration = try application.restoreHierarchyWithReport(in: window)
        #expect(restoration.restored, "\(restoration); \(application.restorationCoordinator?.recentErrors ?? [])")
        #expect(order == ["nav"])
        // Rebuilding did not replace the archive with a half-built shape on the way.
        #expect(try store.hierarchyArchive() == archived)
        let navigation = try #require(window.rootViewController as? NavigationController)
        #expect(navigation.viewControllers.map(\.restorationIdentifier) == ["a", "b", "c", "a"])
    }
}
