import Foundation
import Testing

@testable import StateStore

/// Archives checked before they are applied, rebuilt in linear time, partly rebuilt honestly,
/// and scenes migrated from databases that predate them.
@MainActor
@Suite("Restoration: archive validation, limits, partial rebuilds and scenes")
struct RestorationArchiveTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    typealias Node = HierarchyArchive.Node

    func problem(_ archive: HierarchyArchive, limits: HierarchyArchive.Limits = .standard) -> String? {
        do {
            try archive.validate(limits: limits)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func validationNamesWhatIsWrongAndWhere() {
        let inbox = Node(storyboardIdentifier: "inbox", kind: .plain)
        let good = HierarchyArchive(
            root: Node(
                storyboardIdentifier: "tabs", kind: .tabBar, children: [inbox], selectedIndex: 0,
                presented: Node(storyboardIdentifier: "compose", kind: .plain)
            ))
        #expect(problem(good) == nil)

        let outOfRange = HierarchyArchive(
            root: Node(storyboardIdentifier: "tabs", kind: .tabBar, children: [inbox], selectedIndex: 3))
        #expect(problem(outOfRange) == "at tabs: selected tab 3 is out of range (1 tabs)")

        let selectionOnPlain = HierarchyArchive(
            root: Node(storyboardIdentifier: "box", kind: .plain, children: [inbox], selectedIndex: 0))
        #expect(problem(selectionOnPlain) == "at box: a plain node has no selected tab")

        let wrongKind = HierarchyArchive(
            root: Node(
                storyboardIdentifier: nil, restorationIdentifier: "nav",
                restorationClass: "StateStore.NavigationController", kind: .tabBar
            ))
        #expect(problem(wrongKind) == "at nav: a tabBar node cannot be a StateStore.NavigationController")

        let anonymous = HierarchyArchive(
            root: Node(
                storyboardIdentifier: "box", kind: .plain,
                children: [
                    Node(storyboardIdentifier: nil, kind: .plain)
                ]))
        #expect(
            problem(anonymous)
                == "at box/<unnamed>: the node names no storyboard identifier, restoration identifier or class")

        let slash = HierarchyArchive(
            root: Node(storyboardIdentifier: "box", restorationIdentifier: "a/b", kind: .plain))
        #expect(problem(slash)?.contains("cannot be a path component") == true)

        let twoPresentations = HierarchyArchive(
            root: Node(
                storyboardIdentifier: "tabs", kind: .tabBar,
                children: [
                    Node(
                        storyboardIdentifier: "mail", kind: .navigation,
                        presented: Node(storyboardIdentifier: "settings", kind: .plain))
                ],
                presented: Node(storyboardIdentifier: "compose", kind: .plain)
            ))
        #expect(problem(twoPresentations)?.contains("two controllers of one containment tree present") == true)

        // A presented controller is a containment tree of its own: it may present in turn.
        let chain = HierarchyArchive(
            root: Node(
                storyboardIdentifier: "tabs", kind: .tabBar,
                presented: Node(
                    storyboardIdentifier: "compose", kind: .plain,
                    presented: Node(storyboardIdentifier: "picker", kind: .plain))
            ))
        #expect(problem(chain) == nil)

        // A location runs through presentations and children alike.
        let deepInChain = HierarchyArchive(
            root: Node(
                storyboardIdentifier: "tabs", kind: .tabBar, children: [inbox],
                presented: Node(
                    storyboardIdentifier: "compose", kind: .plain,
                    children: [
                        Node(
                            storyboardIdentifier: "picker", kind: .plain,
                            children: [Node(storyboardIdentifier: nil, kind: .plain)])
                    ])
            ))
        #expect(
            problem(deepInChain)
                == "at tabs ⤷ compose/picker/<unnamed>: the node names no storyboard identifier, restoration identifier or class"
        )

        let wide = HierarchyArchive(
            root: Node(storyboardIdentifier: "box", kind: .plain, children: Array(repeating: inbox, count: 11)))
        #expect(
            problem(wide, limits: .init(maximumNodeCount: 10))
                == "the archive holds more than 10 controllers, the most rebuilt")
        var deep = inbox
        for _ in 0..<5 { deep = Node(storyboardIdentifier: "box", kind: .plain, children: [deep]) }
        #expect(
            problem(HierarchyArchive(root: deep), limits: .init(maximumDepth: 5))
                == "controllers nest more than 5 levels deep, the most rebuilt")
        #expect(problem(HierarchyArchive(root: deep), limits: .init(maximumDepth: 6)) == nil)
    }

    /// The storyboard keeps the class factory it found last: names of two classes taken in
    /// turn, and a factory replaced after a lookup, each make what is registered now.
    @Test func classFactoriesFoundInTurnAndReplacedMakeWhatIsRegistered() {
        final class First: ViewController {}
        final class Second: ViewController {}
        let storyboard = Storyboard()
        storyboard.registerRestoration(of: First.self) {
            let made = First()
            made.restorationIdentifier = "first"
            return made
        }
        storyboard.registerRestoration(of: Second.self) { Second() }
        let (first, second) = (String(reflecting: First.self), String(reflecting: Second.self))
        for name in [first, second, second, first, "Missing.Type", first] {
            let made = storyboard.makeForRestoration(identifier: nil, typeName: name)
            switch name {
            case first: #expect(made is First && made?.restorationIdentifier == "first")
            case second: #expect(made is Second)
            default: #expect(made == nil)
            }
        }
        #expect(
            storyboard.hasRestorationFactory(typeName: first)
                && !storyboard.hasRestorationFactory(typeName: "Missing.Type"))
        // Replaced right after being found: the new factory makes the next one.
        storyboard.registerRestoration(of: First.self) {
            let made = First()
            made.restorationIdentifier = "replaced"
            return made
        }
        #expect(storyboard.makeForRestoration(identifier: nil, typeName: first)?.restorationIdentifier == "replaced")
        // An identifier's factory comes before the class's.
        storyboard.registerRestoration(identifier: "special") { Second() }
        #expect(storyboard.makeForRestoration(identifier: "special", typeName: first) is Second)
        #expect(
            storyboard.makeForRestoration(identifier: "other", typeName: first)?.restorationIdentifier == "replaced")
        // A name found without a factory, then registered: the new factory makes the next one.
        final class Third: ViewController {}
        let third = String(reflecting: Third.self)
        #expect(storyboard.makeForRestoration(identifier: nil, typeName: third) == nil)
        #expect(!storyboard.hasRestorationFactory(typeName: third))
        storyboard.registerRestoration(of: Third.self) { Third() }
        #expect(storyboard.hasRestorationFactory(typeName: third))
        #expect(storyboard.makeForRestoration(identifier: nil, typeName: third) is Third)
    }

    @Test func anArchiveTooDeepToDecodeIsNamedAsSuchNotAsInvalidJSON() {
        let depth = 10_000
        let json =
            #"{"format":2,"root":"#
            + String(repeating: #"{"kind":"plain","storyboardIdentifier":"a","children":["#, count: depth)
            + String(repeating: "]}", count: depth) + "}"
        #expect(
            throws: StateStoreError.decodingFailed(
                path: "hierarchy", reason: ArchiveScan.Problem.tooDeep(limit: 64).description)
        ) {
            try HierarchyArchive(decoding: Data(json.utf8))
        }
        // Braces inside strings do not count.
        let braces = #"{"format":2,"root":{"kind":"plain","storyboardIdentifier":"{{{[[[\"{","children":[]}}"#
        #expect(throws: Never.self) { try HierarchyArchive(decoding: Data(braces.utf8)) }
    }

    /// The limits' scan skips strings eight bytes at a time: an escaped quote or backslash at
    /// any offset of a long string of brackets keeps the string going, and nesting after it
    /// counts again.
    @Test func theScanSkipsStringsWhateverTheirEscapesAndWhereverTheyFall() {
        let limits = HierarchyArchive.Limits(maximumDepth: 1)  // six levels of JSON
        for offset in 0...24 {
            for escape in [#"\""#, #"\\"#, #"\u0041"#] {
                var name = String(repeating: "{[", count: 12)
                name.insert(contentsOf: escape, at: name.index(name.startIndex, offsetBy: offset))
                let shallow = #"{"a":""# + name + #"","b":{"c":{}}}"#
                #expect(ArchiveScan.scan(Data(shallow.utf8), limits: limits) == nil, "\(shallow)")
                let deep =
                    #"{"a":""# + name + #"","b":"# + String(repeating: "[", count: 7) + String(repeating: "]", count: 7)
                    + "}"
                #expect(
                    ArchiveScan.scan(Data(deep.utf8), limits: limits)?.description
                        == ArchiveScan.Problem.tooDeep(limit: 1).description, "\(deep)")
            }
        }
    }

    @Test func anArchiveWithAnImpossibleKindIsSetAsideWithTheReason() throws {
        let store = try StateStore(path: database)
        let json = #"{"format":2,"root":{"kind":"spaceship","storyboardIdentifier":"nav","children":[]}}"#
        try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(Data(json.utf8))
        }
        let application = Application(store: store, storyboard: storyboard())
        application.restorationCoordinator?.errorHandler = { _ in }
        let window = Window(size: Size(width: 400, height: 800), application: application)
        let report = try application.restoreHierarchyWithReport(in: window)
        guard case .setAside(let reason) = report.outcome else {
            Issue.record("expected the archive to be set aside, got \(report.outcome)")
            return
        }
        #expect(reason.contains("spaceship"), "\(reason)")
        #expect(try store.hierarchyArchive(scene: "main", setAside: true) == Data(json.utf8))
        #expect(window.rootViewController == nil)
    }

    @Test func anArchiveOfFormat1StillDecodes() throws {
        let json =
            #"{"format":1,"orientation":"portrait","root":{"kind":"navigation","storyboardIdentifier":"nav","children":[{"kind":"plain","storyboardIdentifier":"a","restorationIdentifier":"a1","children":[]}]}}"#
        let archive = try HierarchyArchive(decoding: Data(json.utf8))
        #expect(archive.root?.children.first?.effectiveRestorationIdentifier == "a1")
        #expect(archive.unarchived.isEmpty)
        #expect(problem(archive) == nil)
    }

    func storyboard() -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register("nav") { NavigationController() }
        for identifier in ["a", "b"] { storyboard.register(identifier) { NoteController() } }
        return storyboard
    }

    @Test func aMissingPresentedControllerIsReportedAndTheArchiveAsSavedIsSetAside() throws {
        let store = try StateStore(path: database)
        let saved = HierarchyArchive(
            orientation: "portrait",
            root: Node(
                storyboardIdentifier: "nav", kind: .navigation,
                children: [Node(storyboardIdentifier: "a", kind: .plain)],
                presented: Node(storyboardIdentifier: "ghost", kind: .plain)
            ))
        let bytes = try saved.encodedJSON()
        try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(bytes) }
        try store.save(NoteController.State(text: "ghost's", edits: 1), for: "nav/ghost")

        let application = Application(store: store, storyboard: storyboard())
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        var errors: [RestorationError] = []
        application.restorationCoordinator?.errorHandler = { errors.append($0) }
        let window = Window(size: Size(width: 400, height: 800), application: application)
        let report = try application.restoreHierarchyWithReport(in: window)

        #expect(report.outcome == .restored)
        #expect(report.notRebuilt.map(\.path) == ["nav ⤷ ghost"])
        #expect(report.notRebuilt.first?.reason.contains("\"ghost\"") == true)
        #expect((window.rootViewController as? NavigationController)?.viewControllers.count == 1)
        #expect(window.rootViewController?.presentedViewController == nil)
        guard case .notRebuilt(let omission)? = errors.first else {
            Issue.record("expected a notRebuilt report, got \(errors)")
            return
        }
        #expect(omission.path == "nav ⤷ ghost")
        #expect(!errors.contains { if case .archiveUnusable = $0 { true } else { false } })
        // The archive as saved is kept aside; the live one says what is on screen; the state stays.
        #expect(try store.hierarchyArchive(scene: "main", setAside: true) == bytes)
        #expect(
            try store.hierarchySetAsideReason()?.hasPrefix(
                "partly rebuilt; not rebuilt: nav ⤷ ghost (storyboard identifier \"ghost\"): ") == true)
        let live = try HierarchyArchive(decoding: try #require(try store.hierarchyArchive(scene: "main")))
        #expect(live.root?.presented == nil)
        #expect(live.root?.children.map(\.storyboardIdentifier) == ["a"])
        #expect(
            try store.restore(NoteController.State.self, for: "nav/ghost")
                == NoteController.State(text: "ghost's", edits: 1))
        // The Bool form is unchanged: true, a hierarchy is on screen.
        #expect(report.restored)
    }

    /// Twenty times the children take about twenty times as long to rebuild, not four hundred:
    /// measured as a ratio within one run (1,000 then 20,000 children, after a rebuild that
    /// warms the code up), so a slow or busy machine moves both. Quadratic, as it was, the
    /// 20,000 took over 30 s in a debug build; linear, about 1.5 s.
    @Test func twentyThousandContainedChildrenRebuildInLinearTime() throws {
        func rebuild(_ count: Int) throws -> Duration {
            let folder = TemporaryFolder()
            let store = try StateStore(path: folder.file("children.sqlite"))
            let children = (0..<count).map {
                Node(
                    storyboardIdentifier: nil, restorationIdentifier: "c\($0)",
                    restorationClass: "StateStore.ViewController", kind: .plain)
            }
            let archive = HierarchyArchive(
                root: Node(
                    storyboardIdentifier: nil, restorationIdentifier: "root",
                    restorationClass: "StateStore.ViewController", kind: .plain,
                    children: children
                ))
            let bytes = try archive.encodedJSON()
            try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(bytes) }
            let application = Application(store: store)
            application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
            let window = Window(size: Size(width: 400, height: 800), application: application)
            var restored = false
            let elapsed = try ContinuousClock().measure { restored = try application.restoreHierarchy(in: window) }
            #expect(restored)
            #expect(window.rootViewController?.children.count == count)
            #expect(window.rootViewController?.children.last?.lifecycleState == .appeared)
            application.terminate()
            return elapsed
        }
        _ = try rebuild(200)
        let small = try rebuild(1_000)
        let large = try rebuild(20_000)
        // Linear is 20×, quadratic 400×: 60× leaves room for noise in either measurement, and
        // fails once the quadratic part is an eighth of the linear one at 1,000 children.
        #expect(large < small * 60, "1,000 children took \(small), 20,000 took \(large)")
        // And a guard against a hang.
        #expect(large < .seconds(60), "20,000 children took \(large)")
    }

    /// A `restorationIdentifier` getter may run any code, even code that changes the hierarchy
    /// the capture (or a check of siblings) is walking: here the first child's getter removes
    /// its sibling, which nothing else holds. The walk goes on over the children it started
    /// with, and once the hierarchy has settled the archive names only what is left.
    @Test func anIdentifierGetterThatRemovesASiblingDuringACaptureIsSurvived() throws {
        let store = try StateStore(path: database)
        let storyboard = Storyboard()
        storyboard.register("root") { ViewController() }
        storyboard.register("pruner") { SiblingPruningController() }
        storyboard.register("victim") { ViewController() }
        let application = Application(store: store, storyboard: storyboard)
        let window = Window(size: Size(width: 390, height: 844), application: application)
        let root = try storyboard.instantiateViewController(withIdentifier: "root")
        let pruner = try #require(
            try storyboard.instantiateViewController(withIdentifier: "pruner") as? SiblingPruningController)
        root.addChild(pruner)
        do {
            // Held only by `root` from here on.
            let victim = try storyboard.instantiateViewController(withIdentifier: "victim")
            root.addChild(victim)
        }
        window.rootViewController = root
        window.makeKeyAndVisible()
        application.restorationCoordinator?.flush()

        pruner.prunesOnNextRead = true
        application.restorationCoordinator?.flush(archiving: window)
        #expect(root.children.count == 1 && root.children.first === pruner)
        // The hierarchy has settled: the next capture sees the pruner alone.
        application.restorationCoordinator?.flush(archiving: window)
        let bytes = try #require(try store.hierarchyArchive(scene: window.sceneIdentifier))
        let archive = try HierarchyArchive.decode(bytes)
        #expect(archive.root?.children.map(\.storyboardIdentifier) == ["pruner"])
        #expect(application.restorationCoordinator?.recentErrors.isEmpty == true)
        application.terminate()
    }

    @Test func anOversizedArchiveIsSetAsideUnreadAndTheStatesKept() throws {
        let store = try StateStore(path: database)
        try store.save(NoteController.State(text: "kept", edits: 1), for: "nav/a")
        let bytes =
            Data(repeating: UInt8(ascii: " "), count: 2_000)
            + (try HierarchyArchive(root: Node(storyboardIdentifier: "nav", kind: .navigation)).encodedJSON())
        try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(bytes) }
        let application = Application(store: store, storyboard: storyboard())
        application.restorationCoordinator?.archiveLimits = .init(maximumByteCount: 1_000)
        var errors: [RestorationError] = []
        application.restorationCoordinator?.errorHandler = { errors.append($0) }
        let window = Window(size: Size(width: 400, height: 800), application: application)
        let report = try application.restoreHierarchyWithReport(in: window)
        let reason = "the archive is \(bytes.count) bytes, more than the limit of 1000 bytes"
        #expect(report.outcome == .setAside(reason: reason))
        #expect(errors == [.archiveUnusable(reason: reason)])
        #expect(window.rootViewController == nil)
        #expect(try store.hierarchyArchive(scene: "main") == nil)
        #expect(try store.hierarchyArchive(scene: "main", setAside: true) == bytes)
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "kept")
    }

    @Test func aDatabaseFromBeforeScenesKeepsItsWindowsPaths() throws {
        // Schema 2, as an older build left it: two positional scenes, shared unprefixed paths.
        try makeSchema2Database(
            database,
            rows: """
                INSERT INTO hierarchy(scene, set_aside, archive, updated_at) VALUES
                  ('main', 0, CAST('{"format":1,"root":{"kind":"navigation","storyboardIdentifier":"nav","children":[]}}' AS BLOB), 1),
                  ('window1', 0, CAST('{"format":1,"root":{"kind":"navigation","storyboardIdentifier":"nav","children":[{"kind":"plain","storyboardIdentifier":"a","children":[]}]}}' AS BLOB), 2);
                """)
        let store = try StateStore(path: database)
        #expect(try store.savedSceneIdentifiers() == ["main", "window1"])
        #expect(try store.scenePathPrefix(scene: "window1") == "")
        try store.save(NoteController.State(text: "before scenes", edits: 1), for: "nav/a")

        let application = Application(store: store, storyboard: storyboard())
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        let main = Window(size: Size(width: 400, height: 800), application: application)
        let other = Window(size: Size(width: 400, height: 800), sceneIdentifier: "window1", application: application)
        #expect(main.sceneIdentifier == "main")
        #expect(try application.restoreHierarchy(in: main))
        #expect(try application.restoreHierarchy(in: other))
        let note = try #require(
            (other.rootViewController as? NavigationController)?.topViewController as? NoteController)
        #expect(note.restorableState.text == "before scenes")
        #expect(application.restorationCoordinator?.restorationPath(for: note) == "nav/a")

        // A new scene gets its own prefix, so it never shares the old windows' states.
        let fresh = Window(size: Size(width: 400, height: 800), application: application)
        // window1 is open (restored from the old database): the new window is window2.
        #expect(fresh.sceneIdentifier == "window2")
        let navigation = try #require(
            try application.storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
        let freshNote = try application.storyboard.instantiateViewController(withIdentifier: "a")
        navigation.setViewControllers([freshNote], animated: false)
        fresh.rootViewController = navigation
        fresh.makeKeyAndVisible()
        #expect(
            application.restorationCoordinator?.restorationPath(for: freshNote)?.rawValue
                == "\(fresh.sceneIdentifier)/nav/a")
        application.terminate()
        #expect(try store.scenePathPrefix(scene: fresh.sceneIdentifier) == fresh.sceneIdentifier)
        #expect(try store.savedSceneIdentifiers() == ["main", "window1", fresh.sceneIdentifier])
    }

    @Test func aControllerThatCannotBeArchivedIsReportedOnceWithItsPathTypeAndReason() throws {
        let store = try StateStore(path: database)
        let application = Application(store: store, storyboard: storyboard())
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        var errors: [RestorationError] = []
        application.restorationCoordinator?.errorHandler = { errors.append($0) }
        let window = Window(size: Size(width: 400, height: 800), application: application)
        let navigation = NavigationController(
            rootViewController: try application.storyboard.instantiateViewController(withIdentifier: "a"))
        navigation.restorationIdentifier = "nav"
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        let loose = NoteController()
        loose.restorationIdentifier = "loose"
        // A container without an identifier hides its identified child from the archive.
        let anonymous = ViewController()
        let inner = NoteController()
        inner.restorationIdentifier = "inner"
        anonymous.addChild(inner)
        for _ in 0..<3 {
            navigation.pushViewController(loose, animated: false)
            _ = navigation.popViewController(animated: false)
        }
        navigation.pushViewController(anonymous, animated: false)
        navigation.pushViewController(loose, animated: false)
        let omissions = errors.compactMap { error -> HierarchyArchive.Omission? in
            if case .notArchivable(let omission) = error { omission } else { nil }
        }
        #expect(omissions.map(\.path) == ["nav/loose", "nav/<ViewController>/inner"])
        #expect(omissions.first?.typeName == "StateStoreTests.NoteController")
        #expect(omissions.first?.reason.contains("registerRestoration") == true)
        #expect(omissions.last?.reason.contains("which has no restoration identifier") == true)
        let archive = try HierarchyArchive(decoding: try #require(try store.hierarchyArchive()))
        #expect(archive.unarchived.map(\.path) == ["nav/<ViewController>/inner", "nav/loose"])
        #expect(archive.root?.restorationClass == "StateStore.NavigationController")
        #expect(archive.root?.children.map(\.storyboardIdentifier) == ["a"])
    }

    /// A capture asks each class once whether the engine can make it (kept for the class met
    /// last), and each controller whether a factory is registered for its identifier: siblings
    /// of several classes, in any order, are archived or reported each as its class and its
    /// identifier say, and a factory registered between two captures counts in the second.
    @Test func siblingsOfSeveralClassesAreArchivedEachAsItsClassAndIdentifierSay() throws {
        let store = try StateStore(path: database)
        let storyboard = storyboard()
        storyboard.registerRestoration(of: NoteController.self) { NoteController() }
        storyboard.registerRestoration(identifier: "byIdentifier") { LooseController() }
        let application = Application(store: store, storyboard: storyboard)
        var errors: [RestorationError] = []
        application.restorationCoordinator?.errorHandler = { errors.append($0) }
        let window = Window(size: Size(width: 400, height: 800), application: application)
        let root = ViewController()
        root.restorationIdentifier = "root"
        window.rootViewController = root
        window.makeKeyAndVisible()
        let children: [(String, ViewController)] = [
            ("n1", NoteController()), ("l1", LooseController()), ("byIdentifier", LooseController()),
            ("v1", ViewController()),
            ("l2", LooseController()), ("n2", NoteController()), ("nav", NavigationController()),
            ("l3", LooseController()),
        ]
        for (identifier, child) in children {
            child.restorationIdentifier = identifier
            root.addChild(child)
            root.view.addSubview(child.view)
            child.didMove(toParent: root)
        }
        application.restorationCoordinator?.flush(archiving: window)
        func archived() throws -> [String?] {
            let archive = try HierarchyArchive(decoding: try #require(try store.hierarchyArchive()))
            return try #require(archive.root).children.map(\.restorationIdentifier)
        }
        #expect(try archived() == ["n1", "byIdentifier", "v1", "n2", "nav"])
        let omitted = errors.compactMap { error -> String? in
            if case .notArchivable(let omission) = error { omission.path } else { nil }
        }
        #expect(omitted == ["root/l1", "root/l2", "root/l3"])
        let archive = try HierarchyArchive(decoding: try #require(try store.hierarchyArchive()))
        #expect(
            try #require(archive.root).children.map(\.restorationClass) == [
                "StateStoreTests.NoteController", "StateStoreTests.LooseController", "StateStore.ViewController",
                "StateStoreTests.NoteController", "StateStore.NavigationController",
            ])
        storyboard.registerRestoration(of: LooseController.self) { LooseController() }
        application.restorationCoordinator?.flush(archiving: window)
        #expect(try archived() == ["n1", "l1", "byIdentifier", "v1", "l2", "n2", "nav", "l3"])
        application.terminate()
    }

    @Test func anArchiveOverTheNodeLimitIsSetAsideBeforeItIsDecoded() throws {
        let store = try StateStore(path: database)
        let archive = HierarchyArchive(
            root: Node(
                storyboardIdentifier: "nav", kind: .navigation,
                children: Array(repeating: Node(storyboardIdentifier: "a", kind: .plain), count: 150)
            ))
        let bytes = try archive.encodedJSON()
        try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(bytes) }
        let application = Application(store: store, storyboard: storyboard())
        application.restorationCoordinator?.archiveLimits = .init(maximumNodeCount: 100)
        application.restorationCoordinator?.errorHandler = { _ in }
        let window = Window(size: Size(width: 400, height: 800), application: application)
        let report = try application.restoreHierarchyWithReport(in: window)
        #expect(report.outcome == .setAside(reason: "the archive holds more than 100 controllers, the most rebuilt"))
        #expect(try store.hierarchyArchive(scene: "main", setAside: true) == bytes)
    }
}

/// A controller built in code whose class has no factory unless a test registers one.
final class LooseController: ViewController {}

/// Removes its siblings from its parent the first time its identifier is read after
/// ``prunesOnNextRead`` is set, as a getter with side effects might.
final class SiblingPruningController: ViewController {
    var prunesOnNextRead = false
    override var restorationIdentifier: String? {
        get {
            if prunesOnNextRead, let parent {
                prunesOnNextRead = false
                for sibling in parent.children where sibling !== self { sibling.removeFromParent() }
            }
            return super.restorationIdentifier
        }
        set { super.restorationIdentifier = newValue }
    }
}
