import Testing

@testable import StateStore

@MainActor
@Suite("Lifecycle: navigation")
struct LifecycleNavigationTests {
    @Test("first display of a window")
    func firstDisplay() {
        let stage = Stage()
        let a = Probe("A")
        stage.record()
        stage.window.rootViewController = a
        #expect(stage.take() == [])
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("A") + [appear("A", will: true, false)] + layout("A") + [
                appear("A", will: false, false)
            ])
        #expect(a.lifecycleState == .appeared)
        #expect(a.view.frame == Rect(x: 0, y: 0, width: 390, height: 844))
        #expect(stage.window.isKeyWindow)
        #expect(stage.violations.isEmpty)
    }

    @Test("first display of a navigation controller forwards to its top controller")
    func firstDisplayOfNavigation() {
        let stage = Stage()
        let a = Probe("A")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.record()
        stage.window.rootViewController = nav
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("Nav") + [appear("Nav", will: true, false)]
                + load("A") + [appear("A", will: true, false)]
                + layout("Nav") + layout("A")
                + [appear("Nav", will: false, false), appear("A", will: false, false)])
        #expect(a.navigationController === nav)
        #expect(a.view.superview === nav.view)
    }

    @Test("push")
    func push() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: true)
        #expect(
            stage.take() == ["B: willMove(toParent: Nav)"] + load("B")
                + [disappear("A", will: true, true), appear("B", will: true, true)] + layout("B")
                + [disappear("A", will: false, true), appear("B", will: false, true), "B: didMove(toParent: Nav)"])
        #expect(same(nav.viewControllers, [a, b]))
        #expect(nav.topViewController === b)
        #expect(a.lifecycleState == .disappeared && b.lifecycleState == .appeared)
        #expect(a.viewIfLoaded?.superview == nil)
        #expect(stage.violations.isEmpty)
    }

    @Test("pop is the mirror of push")
    func pop() {
        let stage = Stage()
        let a = Probe("A")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        weak var weakB: Probe?
        do {
            let b = Probe("B")
            weakB = b
            nav.pushViewController(b, animated: true)
        }
        stage.take()
        let popped = nav.popViewController(animated: true)
        #expect(popped === weakB)
        #expect(
            stage.take() == [
                "B: willMove(toParent: nil)",
                disappear("B", will: true, true), appear("A", will: true, true),
                disappear("B", will: false, true), appear("A", will: false, true),
                "B: didMove(toParent: nil)",
            ])
        #expect(nav.popViewController(animated: true) == nil)
        #expect(stage.take() == [])
        _ = popped
    }

    @Test("a popped controller is deallocated")
    func poppedControllerDeallocates() {
        let stage = Stage()
        let nav = NavigationController(rootViewController: Probe("A"))
        stage.show(nav)
        weak var weakB: Probe?
        do {
            let b = Probe("B")
            weakB = b
            nav.pushViewController(b, animated: false)
        }
        #expect(weakB != nil)
        nav.popViewController(animated: false)
        #expect(weakB == nil)
    }

    @Test("popToRoot over three")
    func popToRoot() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        nav.pushViewController(c, animated: false)
        stage.take()
        let popped = nav.popToRootViewController(animated: true)
        #expect(same(popped, [b, c]))
        #expect(
            stage.take() == [
                "B: willMove(toParent: nil)", "C: willMove(toParent: nil)",
                disappear("C", will: true, true), appear("A", will: true, true),
                disappear("C", will: false, true), appear("A", will: false, true),
                "B: didMove(toParent: nil)", "C: didMove(toParent: nil)",
            ])
        #expect(b.lifecycleState == .disappeared)
        #expect(b.parent == nil && c.parent == nil)
        #expect(nav.popToRootViewController(animated: true) == nil)
    }

    @Test("setViewControllers")
    func setViewControllers() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C"), d = Probe("D")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        stage.take()
        nav.setViewControllers([a, c, d], animated: false)
        #expect(
            stage.take() == ["B: willMove(toParent: nil)", "C: willMove(toParent: Nav)", "D: willMove(toParent: Nav)"]
                + load("D")
                + [disappear("B", will: true, false), appear("D", will: true, false)] + layout("D")
                + [disappear("B", will: false, false), appear("D", will: false, false)]
                + ["B: didMove(toParent: nil)", "C: didMove(toParent: Nav)", "D: didMove(toParent: Nav)"])
        #expect(!c.isViewLoaded)
        #expect(c.lifecycleState == .initialized)
        // C appears when it becomes the top.
        nav.popViewController(animated: false)
        #expect(
            stage.take() == ["D: willMove(toParent: nil)"] + load("C")
                + [disappear("D", will: true, false), appear("C", will: true, false)] + layout("C")
                + [disappear("D", will: false, false), appear("C", will: false, false), "D: didMove(toParent: nil)"])
    }

    @Test("push on a navigation controller that is not in a window sends containment only")
    func pushOffscreen() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.record()
        nav.pushViewController(b, animated: true)
        #expect(stage.take() == ["B: willMove(toParent: Nav)", "B: didMove(toParent: Nav)"])
        #expect(!b.isViewLoaded)
        stage.window.rootViewController = nav
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("Nav") + [appear("Nav", will: true, false)] + load("B")
                + [appear("B", will: true, false)] + layout("Nav") + layout("B")
                + [appear("Nav", will: false, false), appear("B", will: false, false)])
        #expect(!a.isViewLoaded)
    }

    @Test("finished interactive pop")
    func interactivePopFinished() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: true)
        stage.take()
        let transition = nav.beginInteractivePop()
        #expect(transition.state == .interactive)
        #expect(stage.take() == [disappear("B", will: true, true), appear("A", will: true, true)])
        #expect(b.isMovingFromParent)
        transition.finish()
        #expect(
            stage.take() == [
                disappear("B", will: false, true), appear("A", will: false, true),
                "B: willMove(toParent: nil)", "B: didMove(toParent: nil)",
            ])
        #expect(transition.state == .finished)
        #expect(same(nav.viewControllers, [a]))
        transition.cancel()
        #expect(stage.take() == [])
        #expect(stage.violations.isEmpty)
    }

    @Test("cancelled interactive pop")
    func interactivePopCancelled() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: true)
        stage.take()
        let transition = nav.beginInteractivePop()
        transition.cancel()
        // UIKit's order: B.viewWillDisappear, A.viewWillAppear, then A.viewWillDisappear,
        // A.viewDidDisappear, B.viewWillAppear, B.viewDidAppear.
        #expect(
            stage.take() == [
                disappear("B", will: true, true), appear("A", will: true, true),
                disappear("A", will: true, true), disappear("A", will: false, true),
                appear("B", will: true, true), appear("B", will: false, true),
            ])
        #expect(transition.state == .cancelled)
        #expect(same(nav.viewControllers, [a, b]))
        #expect(a.lifecycleState == .disappeared && b.lifecycleState == .appeared)
        #expect(b.view.superview === nav.view && a.view.superview == nil)
        #expect(stage.violations.isEmpty)
    }

    @Test("a push during an interactive pop cancels it first")
    func pushDuringInteractivePop() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        let transition = nav.beginInteractivePop()
        nav.pushViewController(c, animated: false)
        #expect(transition.state == .cancelled)
        #expect(same(nav.viewControllers, [a, b, c]))
        #expect(stage.violations.isEmpty)
        #expect(nav.beginInteractivePop().state == .interactive)
        #expect(NavigationController().beginInteractivePop().state == .unavailable)
    }

    @Test("pushing a controller twice is a reported violation")
    func pushTwice() {
        let stage = Stage()
        let a = Probe("A")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(a, animated: false)
        #expect(stage.violations.count == 1)
        #expect(stage.violations.first?.controllerName == "Nav")
        #expect(stage.violations.first?.callback == nil)
        #expect(nav.viewControllers.count == 1)
    }
}
