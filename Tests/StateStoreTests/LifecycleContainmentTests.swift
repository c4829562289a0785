import Testing

@testable import StateStore

@MainActor
@Suite("Lifecycle: containment and tabs")
struct LifecycleContainmentTests {
    @Test("tab switch")
    func tabSwitch() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let tabs = TabBarController(viewControllers: [a, b])
        tabs.restorationIdentifier = "Tabs"
        stage.show(tabs)
        #expect(!b.isViewLoaded)
        tabs.selectedIndex = 1
        #expect(
            stage.take() == load("B") + [disappear("A", will: true, false), appear("B", will: true, false)]
                + layout("B") + [disappear("A", will: false, false), appear("B", will: false, false)])
        #expect(tabs.selectedViewController === b)
        #expect(b.tabBarController === tabs)
        tabs.selectedIndex = 0
        #expect(
            stage.take() == [
                disappear("B", will: true, false), appear("A", will: true, false),
                disappear("B", will: false, false), appear("A", will: false, false),
            ])
        tabs.selectedIndex = 7
        tabs.selectedIndex = 0
        #expect(stage.take() == [])
        #expect(stage.violations.isEmpty)
    }

    @Test("first display of a tab bar shows only the selected tab")
    func tabFirstDisplay() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let tabs = TabBarController(viewControllers: [a, b])
        tabs.restorationIdentifier = "Tabs"
        tabs.selectedIndex = 1
        stage.record()
        stage.window.rootViewController = tabs
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("Tabs") + [appear("Tabs", will: true, false)] + load("B")
                + [appear("B", will: true, false)] + layout("Tabs") + layout("B")
                + [appear("Tabs", will: false, false), appear("B", will: false, false)])
    }

    @Test("child added and removed while visible")
    func childWhileVisible() {
        let stage = Stage()
        let parent = Probe("P")
        stage.show(parent)
        weak var weakChild: Probe?
        do {
            let child = Probe("C")
            weakChild = child
            parent.addChild(child)
            #expect(
                stage.take() == ["C: willMove(toParent: P)"] + load("C") + [appear("C", will: true, false)]
                    + layout("C") + [appear("C", will: false, false), "C: didMove(toParent: P)"])
            #expect(same(parent.children, [child]))
            #expect(child.parent === parent)
            #expect(child.view.superview === parent.view)
            #expect(child.view.frame == parent.view.bounds)
            child.removeFromParent()
            #expect(
                stage.take() == [
                    "C: willMove(toParent: nil)", disappear("C", will: true, false),
                    disappear("C", will: false, false), "C: didMove(toParent: nil)",
                ])
            #expect(parent.children.isEmpty)
            #expect(child.viewIfLoaded?.superview == nil)
        }
        #expect(weakChild == nil)
        #expect(stage.violations.isEmpty)
    }

    @Test("child added and removed while hidden")
    func childWhileHidden() {
        let stage = Stage()
        let parent = Probe("P"), child = Probe("C")
        stage.window.rootViewController = parent
        stage.record()
        parent.addChild(child)
        #expect(stage.take() == ["C: willMove(toParent: P)", "C: didMove(toParent: P)"])
        // The child appears with its parent.
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("P") + [appear("P", will: true, false)] + load("C") + [appear("C", will: true, false)]
                + layout("P") + layout("C") + [appear("P", will: false, false), appear("C", will: false, false)])
        // Hidden again, under a presentation: removal sends containment only.
        parent.present(Probe("X"), animated: false)
        #expect(child.lifecycleState == .disappeared)
        stage.take()
        child.removeFromParent()
        #expect(stage.take() == ["C: willMove(toParent: nil)", "C: didMove(toParent: nil)"])
        #expect(stage.violations.isEmpty)
    }

    @Test("a child resized with its parent lays out after it")
    func childLayoutFollowsParent() {
        let stage = Stage()
        let parent = Probe("P"), child = Probe("C")
        stage.show(parent)
        parent.addChild(child)
        stage.take()
        stage.window.resize(to: Size(width: 500, height: 500))
        #expect(stage.take() == layout("P") + layout("C"))
        #expect(child.view.bounds.size == Size(width: 500, height: 500))
    }

    @Test("removing a controller from a navigation stack through removeFromParent")
    func removeFromNavigation() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        stage.take()
        b.removeFromParent()
        #expect(
            stage.take() == [
                "B: willMove(toParent: nil)", disappear("B", will: true, false), appear("A", will: true, false),
                disappear("B", will: false, false), appear("A", will: false, false), "B: didMove(toParent: nil)",
            ])
        #expect(same(nav.viewControllers, [a]))
    }
}
