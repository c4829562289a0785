import Testing

@testable import StateStore

@MainActor
@Suite("Lifecycle: presentation")
struct LifecyclePresentationTests {
    @Test("present and dismiss")
    func presentAndDismiss() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        stage.show(a)
        var completed = false
        a.present(b, animated: true) {
            completed = true
            stage.trace.append("completion")
        }
        #expect(completed)
        #expect(
            stage.take() == load("B")
                + [disappear("A", will: true, true), appear("B", will: true, true)] + layout("B")
                + [disappear("A", will: false, true), appear("B", will: false, true), "completion"])
        #expect(a.presentedViewController === b)
        #expect(b.presentingViewController === a)
        #expect(stage.window.topViewController === b)
        #expect(b.view.frame == stage.window.bounds)

        b.dismiss(animated: true) { stage.trace.append("completion") }
        #expect(
            stage.take() == [
                disappear("B", will: true, true), appear("A", will: true, true),
                disappear("B", will: false, true), appear("A", will: false, true), "completion",
            ])
        #expect(a.presentedViewController == nil)
        #expect(b.presentingViewController == nil)
        #expect(stage.violations.isEmpty)
    }

    @Test("present and dismiss over a navigation stack")
    func presentOverNavigation() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        stage.take()
        b.present(c, animated: true)
        #expect(
            stage.take() == load("C")
                + [disappear("Nav", will: true, true), disappear("B", will: true, true), appear("C", will: true, true)]
                + layout("C")
                + [
                    disappear("Nav", will: false, true), disappear("B", will: false, true),
                    appear("C", will: false, true),
                ])
        #expect(c.presentingViewController === nav)
        #expect(b.presentedViewController === c)
        #expect(nav.visibleViewController === c)
        #expect(same(stage.window.allViewControllers, [nav, a, b, c]))

        c.dismiss(animated: false)
        #expect(
            stage.take() == [
                disappear("C", will: true, false), appear("Nav", will: true, false),
                appear("B", will: true, false), disappear("C", will: false, false),
                appear("Nav", will: false, false), appear("B", will: false, false),
            ])
        #expect(a.lifecycleState == .disappeared)
        #expect(stage.violations.isEmpty)
    }

    @Test("stacked presentations, dismissed one at a time and all at once")
    func stackedTwice() {
        let stage = Stage()
        let a = Probe("A")
        stage.show(a)
        weak var weakB: Probe?
        weak var weakC: Probe?
        do {
            let b = Probe("B"), c = Probe("C")
            weakB = b
            weakC = c
            a.present(b, animated: true)
            b.present(c, animated: true)
            #expect(
                stage.take() == load("B")
                    + [disappear("A", will: true, true), appear("B", will: true, true)] + layout("B")
                    + [disappear("A", will: false, true), appear("B", will: false, true)]
                    + load("C")
                    + [disappear("B", will: true, true), appear("C", will: true, true)] + layout("C")
                    + [disappear("B", will: false, true), appear("C", will: false, true)])
            #expect(c.presentingViewController === b)
            #expect(same(stage.window.allViewControllers, [a, b, c]))

            // Dismissing the top one uncovers the middle one.
            c.dismiss(animated: true)
            #expect(
                stage.take() == [
                    disappear("C", will: true, true), appear("B", will: true, true),
                    disappear("C", will: false, true), appear("B", will: false, true),
                ])
            b.present(c, animated: false)
            stage.take()
        }
        #expect(weakC != nil)
        // Dismissing from the bottom removes the whole stack; only the top and A get callbacks.
        a.dismiss(animated: false)
        #expect(
            stage.take() == [
                disappear("C", will: true, false), appear("A", will: true, false),
                disappear("C", will: false, false), appear("A", will: false, false),
            ])
        #expect(weakB == nil)
        #expect(weakC == nil)
        #expect(a.presentedViewController == nil)
        #expect(stage.violations.isEmpty)
    }

    @Test("presenting while already presenting is a reported violation")
    func presentTwice() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C")
        stage.show(a)
        a.present(b, animated: false)
        stage.take()
        var completed = false
        a.present(c, animated: false) { completed = true }
        #expect(!completed)
        #expect(stage.take() == [])
        #expect(stage.violations.count == 1)
        #expect(stage.violations.first?.controllerName == "A")
        #expect(a.presentedViewController === b)
    }

    @Test("presenting in a window that is not visible sends nothing until it is shown")
    func presentOffscreen() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        stage.window.rootViewController = a
        stage.record()
        a.present(b, animated: true)
        #expect(stage.take() == [])
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("B") + [appear("B", will: true, false)] + layout("B") + [
                appear("B", will: false, false)
            ])
        #expect(!a.isViewLoaded)
    }
}
