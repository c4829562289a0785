import Testing

@testable import StateStore

/// A controller that runs a script once, from one of its appearance callbacks.
@MainActor
final class Scripted: ViewController {
    var onWillAppear: (() -> Void)?
    var orientations: InterfaceOrientationMask = .all

    init(_ name: String) {
        super.init()
        restorationIdentifier = name
    }

    override var supportedInterfaceOrientations: InterfaceOrientationMask { orientations }

    override func viewWillAppear(_ animated: Bool) {
        let script = onWillAppear
        onWillAppear = nil
        script?()
    }
}

/// Lines of the rotation callbacks, as the trace writes them.
func rotation(_ name: String, to new: InterfaceOrientation, from old: InterfaceOrientation) -> (String, String) {
    ("\(name): willRotate(to: \(new), duration: 0.3)", "\(name): didRotate(from: \(old))")
}

@MainActor
@Suite("Lifecycle: nested transitions and misuse")
struct LifecycleEngineTests {
    // MARK: Nested transitions

    /// A push asked for by the `viewWillAppear` of a controller being pushed waits for that
    /// push to finish, then runs as a push of its own: UIKit's order for each push
    /// (https://developer.apple.com/documentation/uikit/uinavigationcontroller/pushviewcontroller(_:animated:)
    /// and "Responding to view-related events" in
    /// https://developer.apple.com/documentation/uikit/uiviewcontroller).
    @Test("a push from the viewWillAppear of a controller being pushed runs after that push")
    func pushFromWillAppearOfPushed() {
        let stage = Stage()
        let a = Probe("A"), b = Scripted("B"), c = Probe("C")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        b.onWillAppear = { nav.pushViewController(c, animated: true) }
        nav.pushViewController(b, animated: true)
        #expect(
            stage.take() == ["B: willMove(toParent: Nav)"] + load("B")
                + [disappear("A", will: true, true), appear("B", will: true, true)] + layout("B")
                + [disappear("A", will: false, true), appear("B", will: false, true), "B: didMove(toParent: Nav)"]
                + ["C: willMove(toParent: Nav)"] + load("C")
                + [disappear("B", will: true, true), appear("C", will: true, true)] + layout("C")
                + [disappear("B", will: false, true), appear("C", will: false, true), "C: didMove(toParent: Nav)"])
        #expect(same(nav.viewControllers, [a, b, c]))
        #expect(b.lifecycleState == .disappeared && c.lifecycleState == .appeared)
        #expect(stage.violations.isEmpty)
    }

    /// A dismissal asked for by the `viewWillAppear` of the controller being presented: the
    /// presentation finishes (its completion runs), then the dismissal, each in UIKit's
    /// order (https://developer.apple.com/documentation/uikit/uiviewcontroller/present(_:animated:completion:)
    /// and https://developer.apple.com/documentation/uikit/uiviewcontroller/dismiss(animated:completion:)).
    @Test("a dismiss from the viewWillAppear of a controller being presented runs after the presentation")
    func dismissFromWillAppearOfPresented() {
        let stage = Stage()
        let a = Probe("A"), b = Scripted("B")
        stage.show(a)
        b.onWillAppear = { b.dismiss(animated: true) { stage.trace.append("dismissed") } }
        a.present(b, animated: true) { stage.trace.append("presented") }
        #expect(
            stage.take() == load("B")
                + [disappear("A", will: true, true), appear("B", will: true, true)] + layout("B")
                + [disappear("A", will: false, true), appear("B", will: false, true), "presented"]
                + [
                    disappear("B", will: true, true), appear("A", will: true, true),
                    disappear("B", will: false, true), appear("A", will: false, true), "dismissed",
                ])
        #expect(a.presentedViewController == nil)
        #expect(a.lifecycleState == .appeared && b.lifecycleState == .disappeared)
        #expect(stage.violations.isEmpty)
    }

    /// UIKit refuses a presentation while one is in progress; StateStore queues it instead,
    /// so the screen is never left half presented: B appears, then C is presented over it with the order of
    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/present(_:animated:completion:),
    /// and dismissing from the root brings the root back.
    @Test("a present from the viewWillAppear of a controller being presented runs after that presentation")
    func presentFromWillAppearOfPresented() {
        let stage = Stage()
        let a = Probe("A"), b = Scripted("B"), c = Probe("C")
        stage.show(a)
        b.onWillAppear = { b.present(c, animated: false) { stage.trace.append("C presented") } }
        a.present(b, animated: false) { stage.trace.append("B presented") }
        #expect(
            stage.take() == load("B")
                + [disappear("A", will: true, false), appear("B", will: true, false)] + layout("B")
                + [disappear("A", will: false, false), appear("B", will: false, false), "B presented"]
                + load("C")
                + [disappear("B", will: true, false), appear("C", will: true, false)] + layout("C")
                + [disappear("B", will: false, false), appear("C", will: false, false), "C presented"])
        #expect(b.presentedViewController === c && stage.window.topViewController === c)
        a.dismiss(animated: false)
        #expect(
            stage.take() == [
                disappear("C", will: true, false), appear("A", will: true, false),
                disappear("C", will: false, false), appear("A", will: false, false),
            ])
        #expect(stage.window.topViewController === a && a.lifecycleState == .appeared)
        #expect(stage.violations.isEmpty)
    }

    /// A tab switch cancels a pending pop gesture first, as `beginInteractivePop()` promises
    /// and as UIKit reports a gesture that did not complete
    /// (https://developer.apple.com/documentation/uikit/uiviewcontrollertransitioncoordinatorcontext/iscancelled);
    /// a later `finish()` sends nothing, so no hidden tab ever gets `viewDidAppear`.
    @Test("a tab switch while a pop gesture is pending cancels the gesture first")
    func tabSwitchDuringInteractivePop() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), x = Probe("X")
        let nav = named("Nav", NavigationController(rootViewController: a))
        nav.pushViewController(b, animated: false)
        let tabs = TabBarController(viewControllers: [nav, x])
        tabs.restorationIdentifier = "Tabs"
        stage.show(tabs)
        let pop = nav.beginInteractivePop()
        stage.take()
        tabs.selectedIndex = 1
        #expect(pop.state == .cancelled)
        #expect(
            stage.take() == [
                disappear("A", will: true, true), disappear("A", will: false, true),
                appear("B", will: true, true), appear("B", will: false, true),
            ]
                + load("X")
                + [
                    disappear("Nav", will: true, false), disappear("B", will: true, false),
                    appear("X", will: true, false),
                ]
                + layout("X")
                + [
                    disappear("Nav", will: false, false), disappear("B", will: false, false),
                    appear("X", will: false, false),
                ])
        pop.finish()
        #expect(stage.take() == [])
        #expect(same(nav.viewControllers, [a, b]))
        #expect(
            a.lifecycleState == .disappeared && b.lifecycleState == .disappeared && nav.lifecycleState == .disappeared)
        #expect(stage.violations.isEmpty)
    }

    /// While a pop gesture is pending both controllers are on screen, so a rotation resizes
    /// the uncovered one too and sends it the rotation callbacks
    /// (https://developer.apple.com/documentation/uikit/uiviewcontroller/viewwilltransition(to:with:)).
    @Test("a rotation during a pending pop gesture resizes and tells both controllers")
    func rotationDuringInteractivePop() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        let pop = nav.beginInteractivePop()
        stage.trace.callbacks = [.willRotate, .didRotate]
        stage.take()
        #expect(stage.window.rotate(to: .landscapeLeft))
        #expect(a.view.frame.size == Size(width: 844, height: 390))
        #expect(b.view.frame.size == Size(width: 844, height: 390))
        let lines = stage.take()
        for name in ["Nav", "A", "B"] {
            let (will, did) = rotation(name, to: .landscapeLeft, from: .portrait)
            #expect(lines.contains(will) && lines.contains(did))
        }
        pop.finish()
        #expect(a.lifecycleState == .appeared && a.view.frame.size == Size(width: 844, height: 390))
        #expect(stage.violations.isEmpty)
    }

    // MARK: Misuse

    /// UIKit raises "Pushing a navigation controller is not supported"; a tab bar controller
    /// must be a window's root (https://developer.apple.com/documentation/uikit/uitabbarcontroller).
    @Test("pushing a navigation or tab bar controller is a reported violation and changes nothing")
    func pushContainer() {
        let stage = Stage()
        let a = Probe("A")
        let nav = named("Nav", NavigationController(rootViewController: a))
        let innerNav = NavigationController(rootViewController: Probe("B"))
        let innerTabs = TabBarController(viewControllers: [Probe("C")])
        stage.show(nav)
        nav.pushViewController(innerNav, animated: true)
        nav.pushViewController(innerTabs, animated: true)
        #expect(stage.take() == [])
        #expect(same(nav.viewControllers, [a]))
        #expect(stage.violations.count == 2)
        #expect(stage.violations.allSatisfy { $0.controllerName == "Nav" })
    }

    /// The built-in containers manage their children through their own API
    /// (https://developer.apple.com/documentation/uikit/uinavigationcontroller/viewcontrollers).
    @Test("addChild on a navigation or tab bar controller is a reported violation and changes nothing")
    func addChildToBuiltInContainer() {
        let stage = Stage()
        let a = Probe("A"), x = Probe("X"), y = Probe("Y")
        let nav = named("Nav", NavigationController(rootViewController: a))
        let tabs = TabBarController(viewControllers: [nav, x])
        stage.show(tabs)
        nav.addChild(Probe("B"))
        tabs.addChild(y)
        #expect(stage.take() == [])
        #expect(same(nav.children, [a]) && same(tabs.children, [nav, x]))
        #expect(y.parent == nil && y.lifecycleState == .initialized)
        #expect(stage.violations.count == 2)
    }

    /// UIKit raises "Tried to pop to a view controller that doesn't exist"
    /// (https://developer.apple.com/documentation/uikit/uinavigationcontroller/poptoviewcontroller(_:animated:)).
    @Test("popToViewController with a controller not in the stack is a reported violation")
    func popToStranger() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        stage.take()
        #expect(nav.popToViewController(Probe("Z"), animated: true) == nil)
        #expect(stage.take() == [])
        #expect(same(nav.viewControllers, [a, b]))
        #expect(stage.violations.count == 1)
    }

    /// UIKit: "Only a view controller in the tab bar controller's list of view controllers can
    /// be selected" (https://developer.apple.com/documentation/uikit/uitabbarcontroller/selectedviewcontroller).
    @Test("selecting a controller that is not a tab is a reported violation")
    func selectStranger() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let tabs = TabBarController(viewControllers: [a, b])
        stage.show(tabs)
        tabs.selectedViewController = Probe("Z")
        #expect(stage.take() == [])
        #expect(tabs.selectedViewController === a)
        #expect(stage.violations.count == 1)
    }

    /// UIKit raises `UIApplicationInvalidInterfaceOrientation` ("Supported orientations has no
    /// common orientation with the application")
    /// (https://developer.apple.com/documentation/uikit/uiviewcontroller/supportedinterfaceorientations).
    @Test("presenting a controller with no orientation in common with the application is a reported violation")
    func presentWithoutCommonOrientation() {
        let stage = Stage(supportedOrientations: .portrait)
        let a = Probe("A"), b = Scripted("B")
        b.orientations = .landscape
        stage.show(a)
        var completed = false
        a.present(b, animated: true) { completed = true }
        #expect(!completed)
        #expect(stage.take() == [])
        #expect(a.presentedViewController == nil && b.presentingViewController == nil)
        #expect(stage.violations.count == 1)
    }

    /// "If that index is invalid, it selects the view controller at index 0"
    /// (https://developer.apple.com/documentation/uikit/uitabbarcontroller/viewcontrollers).
    @Test("removing the selected last tab selects index 0")
    func removeSelectedLastTab() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C")
        let tabs = TabBarController(viewControllers: [a, b, c])
        tabs.selectedIndex = 2
        stage.show(tabs)
        tabs.viewControllers = [a, b]
        #expect(tabs.selectedIndex == 0 && tabs.selectedViewController === a)
        #expect(
            stage.take() == ["C: willMove(toParent: nil)"] + load("A")
                + [disappear("C", will: true, false), appear("A", will: true, false)] + layout("A")
                + [disappear("C", will: false, false), appear("A", will: false, false), "C: didMove(toParent: nil)"])
        // The same index, when it is still valid.
        tabs.selectedIndex = 1
        tabs.viewControllers = [a, c, b]
        #expect(tabs.selectedViewController === b && tabs.selectedIndex == 2)
        tabs.viewControllers = [a, c]
        #expect(tabs.selectedIndex == 0)
        #expect(stage.violations.isEmpty)
    }

    // MARK: Layout

    /// `setNeedsLayout()` lays out on the next turn, as UIKit does on the next turn of the run loop
    /// (https://developer.apple.com/documentation/uikit/uiview/setneedslayout()).
    @Test("setNeedsLayout lays out on the main actor's next turn")
    func setNeedsLayoutSchedulesLayout() async {
        let stage = Stage()
        let a = Probe("A")
        stage.show(a)
        a.view.setNeedsLayout()
        #expect(stage.take() == [])
        #expect(a.view.needsLayout)
        await Task { @MainActor in }.value
        #expect(stage.take() == layout("A"))
        #expect(!a.view.needsLayout)
        // Two requests in one turn lay out once.
        a.view.setNeedsLayout()
        a.view.setNeedsLayout()
        await Task { @MainActor in }.value
        #expect(stage.take() == layout("A"))
        // A hidden view waits for its next appearance.
        stage.window.close()
        stage.take()
        a.view.setNeedsLayout()
        await Task { @MainActor in }.value
        #expect(stage.take() == [])
    }

    /// A view that its superview's layout resizes is laid out by that same layout, which lays
    /// out the subviews next; one that the layout resizes and then moves elsewhere is laid out
    /// on the next turn, as any marked view is.
    @Test("a view resized by its superview's layout is laid out by it, or on the next turn if it moves away")
    func viewsResizedDuringTheirSuperviewsLayout() async {
        final class Counting: View {
            var layouts = 0
            override func layoutSubviews() { layouts += 1 }
        }
        final class Arranging: View {
            let kept = Counting(), moved = Counting()
            var width = 10.0
            var elsewhere: View?
            override func layoutSubviews() {
                kept.frame = Rect(x: 0, y: 0, width: width, height: 1)
                moved.frame = Rect(x: 0, y: 0, width: width, height: 1)
                if let elsewhere { elsewhere.addSubview(moved) }
            }
        }
        let stage = Stage()
        let a = Probe("A")
        stage.show(a)
        let arranging = Arranging(), other = View()
        arranging.addSubview(arranging.kept)
        arranging.addSubview(arranging.moved)
        // `other` first: a pass that reaches `arranging` has passed it already.
        a.view.addSubview(other)
        a.view.addSubview(arranging)
        a.view.layoutIfNeeded()
        await Task { @MainActor in }.value
        let (kept, moved) = (arranging.kept.layouts, arranging.moved.layouts)

        arranging.width = 20
        arranging.setNeedsLayout()
        arranging.layoutIfNeeded()
        #expect(arranging.kept.layouts == kept + 1 && !arranging.kept.needsLayout)
        #expect(arranging.moved.layouts == moved + 1 && !arranging.moved.needsLayout)

        arranging.width = 30
        arranging.elsewhere = other
        arranging.setNeedsLayout()
        // The pass that moves it away asks for another, which runs within these turns.
        await Task { @MainActor in }.value
        await Task { @MainActor in }.value
        #expect(arranging.kept.layouts == kept + 2)
        #expect(arranging.moved.superview === other)
        #expect(arranging.moved.layouts == moved + 2 && !arranging.moved.needsLayout)
        stage.take()
    }

    // MARK: Every legal nested sequence

    #if DEBUG
    /// In a debug build the default violation handler stops the app; a counting handler
    /// proves that none of the legal nested sequences above reports anything.
    @Test("every legal nested sequence runs without a violation")
    func legalNestedSequencesReportNothing() {
        let application = Application()
        var count = 0
        application.violationHandler = { _ in count += 1 }
        let window = Window(size: Size(width: 390, height: 844), application: application)
        let a = Probe("A"), x = Probe("X")
        let nav = NavigationController(rootViewController: a)
        let tabs = TabBarController(viewControllers: [nav, x])
        window.rootViewController = tabs
        window.makeKeyAndVisible()

        // Push from the viewWillAppear of a pushed controller.
        let b = Scripted("B"), c = Scripted("C")
        b.onWillAppear = { nav.pushViewController(c, animated: true) }
        nav.pushViewController(b, animated: true)
        // Pop gestures interrupted by a rotation, then by a tab switch.
        let first = nav.beginInteractivePop()
        window.rotate(to: .landscapeLeft)
        first.finish()
        let second = nav.beginInteractivePop()
        tabs.selectedIndex = 1
        second.finish()
        tabs.selectedIndex = 0
        // Dismiss and present from the viewWillAppear of presented controllers.
        let d = Scripted("D"), e = Scripted("E"), f = Probe("F")
        d.onWillAppear = { d.dismiss(animated: true) }
        tabs.present(d, animated: true)
        e.onWillAppear = { e.present(f, animated: true) }
        tabs.present(e, animated: true)
        tabs.dismiss(animated: true)
        // The same over a sheet, and a sheet swiped away by the user.
        let sheet = Scripted("S"), g = Probe("G")
        sheet.modalPresentationStyle = .pageSheet
        sheet.onWillAppear = { sheet.present(g, animated: true) }
        tabs.present(sheet, animated: true)
        g.dismiss(animated: true)
        sheet.presentationController?.dismissInteractively()

        #expect(count == 0)
        #expect(application.lifecycleViolations.isEmpty)
        #expect(same(nav.viewControllers, [a, b]))
        #expect(window.topViewController === tabs && c.lifecycleState == .disappeared)
        #expect(b.lifecycleState == .appeared && f.lifecycleState == .disappeared)
        #expect(
            tabs.presentedViewController == nil && g.lifecycleState == .disappeared
                && sheet.lifecycleState == .disappeared)
    }
    #endif
}
