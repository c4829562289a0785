import Testing

@testable import StateStore

@MainActor
@Suite("Lifecycle: application, observers, storyboard")
struct LifecycleApplicationTests {
    @Test("a memory warning reaches hidden, presented-over and child controllers")
    func memoryWarningReachesEveryLiveController() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), child = Probe("Child"), other = Probe("OtherTab"), modal = Probe("Modal")
        let detached = Probe("Detached")
        let nav = named("Nav", NavigationController(rootViewController: a))
        let tabs = TabBarController(viewControllers: [nav, other])
        tabs.restorationIdentifier = "Tabs"
        stage.show(tabs)
        nav.pushViewController(b, animated: false)  // A hidden under B
        b.addChild(child)  // a child
        tabs.present(modal, animated: false)  // everything but Modal presented over
        let observer = JournalObserver()
        stage.application.addObserver(observer)
        stage.take()

        stage.application.didReceiveMemoryWarning(level: .critical)
        let names = ["A", "B", "Child", "OtherTab", "Modal", "Detached", "Nav", "Tabs"]
        #expect(stage.take() == names.map { "\($0): didReceiveMemoryWarning(level: critical)" })
        #expect(observer.memoryWarnings == [.critical])
        #expect(stage.application.liveControllerCount == names.count)
        _ = detached
    }

    @Test("a memory warning does not keep controllers alive")
    func memoryWarningIsWeak() {
        let stage = Stage()
        stage.show(Probe("A"))
        weak var weakGone: Probe?
        do {
            let gone = Probe("Gone")
            weakGone = gone
        }
        #expect(weakGone == nil)
        stage.application.didReceiveMemoryWarning(level: .warning)
        #expect(stage.take() == ["A: didReceiveMemoryWarning(level: warning)"])
        #expect(stage.application.liveControllerCount == 1)
    }

    @Test("10,000 push/pop cycles leave the live-controller count where it started")
    func pushPopSoak() {
        let stage = Stage()
        let nav = NavigationController(rootViewController: Probe("A"))
        stage.window.rootViewController = nav
        stage.window.makeKeyAndVisible()
        stage.application.trace = nil
        let before = stage.application.liveControllerCount
        for cycle in 0..<10_000 {
            nav.pushViewController(Probe("B"), animated: cycle.isMultiple(of: 2))
            nav.popViewController(animated: cycle.isMultiple(of: 3))
        }
        #expect(stage.application.liveControllerCount == before)
        #expect(nav.viewControllers.count == 1)
        #expect(nav.view.subviews.count == 1)
        #expect(stage.application.lifecycleViolations.isEmpty)
    }

    @Test("observers hear willRun before the override and didRun after it")
    func observerBracketsOverride() {
        let stage = Stage()
        let journal = Journal()
        stage.application.addObserver(JournalObserver(journal: journal))
        let a = Probe("A")
        a.journal = journal
        stage.window.rootViewController = a
        stage.window.makeKeyAndVisible()
        let callbacks = [
            "loadView", "viewDidLoad", "viewWillAppear", "viewIsAppearing", "viewWillLayoutSubviews",
            "viewDidLayoutSubviews", "viewDidAppear",
        ]
        #expect(journal.entries == callbacks.flatMap { ["will \($0)", "override \($0)", "did \($0)"] })
    }

    @Test("observers can be removed")
    func removeObserver() {
        let stage = Stage()
        let observer = JournalObserver()
        stage.application.addObserver(observer)
        stage.application.addObserver(observer)
        #expect(stage.application.observers.count == 1)
        stage.application.removeObserver(observer)
        stage.show(Probe("A"))
        #expect(observer.journal.entries.isEmpty)
    }

    @Test("hierarchy changes are reported for every structural change")
    func hierarchyChanges() {
        let stage = Stage()
        let observer = JournalObserver()
        stage.application.addObserver(observer)
        let a = Probe("A")
        let nav = NavigationController(rootViewController: a)
        stage.window.rootViewController = nav  // 1
        stage.window.makeKeyAndVisible()
        nav.pushViewController(Probe("B"), animated: false)  // 2
        nav.popViewController(animated: false)  // 3
        nav.present(Probe("M"), animated: false)  // 4
        nav.dismiss(animated: false)  // 5
        a.addChild(Probe("C"))  // 6
        a.children[0].removeFromParent()  // 7
        #expect(observer.hierarchyChanges == 7)
    }

    @Test("an illegal transition is reported with the controller, its state and the callback, and not delivered")
    func violationIsReported() {
        let stage = Stage()
        let a = Probe("A")
        stage.show(a)
        var handled: [String] = []
        stage.application.violationHandler = { handled.append($0.description) }
        a.beginAppearanceTransition(true, animated: false)  // a second viewWillAppear
        #expect(stage.take() == [])
        let violation = stage.application.lifecycleViolations.first
        #expect(stage.application.lifecycleViolations.count == 1)
        #expect(violation?.controller === a)
        #expect(violation?.controllerName == "A")
        #expect(violation?.controllerType == "Probe")
        #expect(violation?.state == .appeared)
        #expect(violation?.callback == .viewWillAppear)
        #expect(handled.count == 1)
        #expect(handled.first?.contains("A (Probe) is appeared and cannot receive viewWillAppear") == true)
        #expect(a.lifecycleState == .appeared)

        // A correct custom-container transition is accepted.
        a.beginAppearanceTransition(false, animated: true)
        a.endAppearanceTransition()
        #expect(stage.take() == [disappear("A", will: true, true), disappear("A", will: false, true)])
        a.endAppearanceTransition()
        #expect(stage.application.lifecycleViolations.count == 2)
    }

    @Test("no appearance callbacks for a controller that is not in a window")
    func noAppearanceOutsideWindow() {
        let stage = Stage()
        let loose = Probe("Loose")
        stage.record()
        loose.beginAppearanceTransition(true, animated: false)
        #expect(stage.take() == load("Loose"))
        #expect(stage.application.lifecycleViolations.first?.callback == .viewWillAppear)
        #expect(loose.lifecycleState == .initialized)
    }

    @Test("storyboard instantiation sends awakeFromNib and sets the identifiers")
    func storyboard() throws {
        let storyboard = Storyboard()
        let application = Application(storyboard: storyboard)
        let trace = LifecycleTrace()
        application.trace = trace
        storyboard.register("inbox") { Probe("unused") }
        storyboard.register("compose") { ViewController() }
        let compose = try storyboard.instantiateViewController(withIdentifier: "compose")
        #expect(compose.storyboardIdentifier == "compose")
        #expect(compose.restorationIdentifier == "compose")
        #expect(compose.storyboard === storyboard)
        #expect(trace.lines == ["compose: awakeFromNib"])
        compose.restorationIdentifier = "draft"
        #expect(compose.restorationIdentifier == "draft")
        compose.restorationIdentifier = nil
        #expect(compose.restorationIdentifier == "compose")
        // An explicit restoration identifier wins over the storyboard's.
        let inbox = try storyboard.instantiateViewController(withIdentifier: "inbox")
        #expect(inbox.restorationIdentifier == "unused")
        #expect(inbox.storyboardIdentifier == "inbox")
        #expect(storyboard.identifiers == ["compose", "inbox"])

        #expect(throws: StoryboardError.unknownIdentifier("settings", known: ["compose", "inbox"])) {
            try storyboard.instantiateViewController(withIdentifier: "settings")
        }
        #expect(application.liveControllerCount == 2)
    }

    @Test("the view loads once, lazily")
    func lazyView() {
        let stage = Stage()
        let a = Probe("A")
        stage.record()
        #expect(!a.isViewLoaded)
        #expect(a.viewIfLoaded == nil)
        let view = a.view
        #expect(a.view === view)
        #expect(a.isViewLoaded)
        #expect(stage.take() == load("A"))
    }

    @Test("terminate tells the observers, then closes every window")
    func terminate() {
        let stage = Stage()
        let observer = JournalObserver()
        stage.application.addObserver(observer)
        stage.show(Probe("A"))
        let second = Window(size: Size(width: 100, height: 100), application: stage.application)
        second.rootViewController = Probe("B")
        second.makeKeyAndVisible()
        stage.take()
        #expect(stage.application.windows.count == 2)
        stage.application.terminate()
        #expect(observer.windowsOpenAtTermination == 2)
        #expect(
            stage.take() == [
                disappear("B", will: true, false), disappear("B", will: false, false),
                disappear("A", will: true, false), disappear("A", will: false, false),
            ])
        #expect(stage.application.windows.isEmpty)
        #expect(stage.application.isTerminated)
        #expect(stage.application.liveControllerCount == 0)
    }

    @Test("trace format and filtering")
    func traceFiltering() {
        let stage = Stage()
        let a = Probe("A")
        let trace = LifecycleTrace(recording: LifecycleCallback.appearance)
        stage.application.trace = trace
        stage.window.rootViewController = a
        stage.window.makeKeyAndVisible()
        #expect(trace.lines == ["A: viewWillAppear(animated: false)", "A: viewDidAppear(animated: false)"])
        #expect(trace.lines(for: "A") == ["viewWillAppear(animated: false)", "viewDidAppear(animated: false)"])
        let unnamed = ViewController()
        stage.application.trace = LifecycleTrace()
        _ = unnamed.view
        #expect(stage.application.trace?.lines == ["ViewController: loadView", "ViewController: viewDidLoad"])
    }
}

@MainActor
@Suite("Lifecycle: registration and off-screen transitions")
struct LifecycleRegistrationTests {
    @Test("a controller entering a window registers with that window's application")
    func adoptionMovesRegistration() {
        let first = Application()
        let window = Window(size: Size(width: 100, height: 100), application: first)
        let second = Application()
        #expect(Application.current === second)
        let nav = NavigationController(rootViewController: Probe("A"))
        #expect(second.liveControllerCount == 2)
        window.rootViewController = nav
        #expect(first.liveControllerCount == 2)
        #expect(second.liveControllerCount == 0)
        #expect(nav.application === first)
        second.terminate()
        #expect(Application.current == nil)
    }

    @Test(
        "a controller whose application is gone reports to none until it enters a window, then to that window's application"
    )
    func applicationAfterTheRegisteredOneIsReleased() {
        let home = Application()
        let window = Window(size: Size(width: 100, height: 100), application: home)
        let controller: ViewController
        do {
            let other = Application()
            controller = Probe("A")
            #expect(controller.application === other)
            other.terminate()
        }
        // The application it registered with is released; it is in no window yet.
        #expect(controller.application == nil)
        window.rootViewController = controller
        #expect(controller.application === home)
        window.rootViewController = nil
        #expect(controller.application === home, "registered with the window's application when it entered it")
        home.terminate()
    }

    @Test("with two applications alive, a controller in one's window reports to it, whichever it registered with")
    func theWindowsApplicationWinsWhileTwoAreAlive() {
        let home = Application()
        let window = Window(size: Size(width: 100, height: 100), application: home)
        let other = Application()
        let controller = Probe("A")
        window.rootViewController = controller
        // Registered with the other application after entering the window (a storyboard of
        // the other one handing out a controller already on screen).
        other.register(controller)
        #expect(controller.registeredApplication === other)
        #expect(controller.application === home)
        other.terminate()
        home.terminate()
    }

    @Test("an interactive pop of a navigation controller that is not on screen")
    func interactivePopOffscreen() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        nav.pushViewController(b, animated: false)
        stage.record()
        let transition = nav.beginInteractivePop()
        #expect(stage.take() == [])
        transition.finish()
        #expect(stage.take() == ["B: willMove(toParent: nil)", "B: didMove(toParent: nil)"])
        #expect(same(nav.viewControllers, [a]))
    }

    @Test("closing a window during an interactive pop cancels it first")
    func closeDuringInteractivePop() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        let transition = nav.beginInteractivePop()
        stage.take()
        stage.window.close()
        #expect(transition.state == .cancelled)
        #expect(
            stage.take() == [
                disappear("A", will: true, true), disappear("A", will: false, true),
                appear("B", will: true, true), appear("B", will: false, true),
                disappear("Nav", will: true, false), disappear("B", will: true, false),
                disappear("Nav", will: false, false), disappear("B", will: false, false),
            ])
        #expect(stage.violations.isEmpty)
    }
}
