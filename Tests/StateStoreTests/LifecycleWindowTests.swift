import Testing

@testable import StateStore

@MainActor
@Suite("Lifecycle: windows, resize and rotation")
struct LifecycleWindowTests {
    @Test("resize lays out the visible controllers, and hidden ones when they reappear")
    func resize() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        stage.take()
        stage.window.resize(to: Size(width: 844, height: 390))
        #expect(stage.take() == layout("Nav") + layout("B"))
        #expect(b.view.bounds.size == Size(width: 844, height: 390))
        stage.window.resize(to: Size(width: 844, height: 390))
        #expect(stage.take() == [])
        // A was hidden during the resize: its new geometry is laid out after viewWillAppear.
        nav.popViewController(animated: true)
        #expect(
            stage.take() == [
                "B: willMove(toParent: nil)", disappear("B", will: true, true), appear("A", will: true, true),
            ]
                + layout("A") + [
                    disappear("B", will: false, true), appear("A", will: false, true), "B: didMove(toParent: nil)",
                ])
        #expect(a.view.bounds.size == Size(width: 844, height: 390))
    }

    @Test("rotation allowed")
    func rotationAllowed() {
        let stage = Stage()
        let a = Probe("A")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        #expect(stage.window.rotate(to: .landscapeLeft))
        #expect(
            stage.take() == [
                "Nav: willRotate(to: landscapeLeft, duration: 0.3)", "A: willRotate(to: landscapeLeft, duration: 0.3)",
            ]
                + layout("Nav") + layout("A")
                + ["Nav: didRotate(from: portrait)", "A: didRotate(from: portrait)"])
        #expect(stage.window.orientation == .landscapeLeft)
        #expect(stage.window.size == Size(width: 844, height: 390))
        #expect(a.view.bounds.size == Size(width: 844, height: 390))
        // Half a turn keeps the size but still lays out.
        #expect(stage.window.rotate(to: .landscapeRight))
        #expect(
            stage.take() == [
                "Nav: willRotate(to: landscapeRight, duration: 0.3)",
                "A: willRotate(to: landscapeRight, duration: 0.3)",
            ]
                + layout("Nav") + layout("A")
                + ["Nav: didRotate(from: landscapeLeft)", "A: didRotate(from: landscapeLeft)"])
        #expect(stage.window.size == Size(width: 844, height: 390))
        #expect(stage.window.rotate(to: .landscapeRight))
        #expect(stage.take() == [])
    }

    @Test("rotation refused: the top controller's shouldAutorotate is false")
    func rotationRefusedByShouldAutorotate() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        b.autorotates = false
        stage.take()
        #expect(!stage.window.rotate(to: .landscapeLeft))
        #expect(stage.take() == [])
        #expect(stage.window.orientation == .portrait)
        #expect(stage.window.size == Size(width: 390, height: 844))
        // The question goes to the top of a presentation, too.
        let c = Probe("C")
        c.autorotates = false
        b.present(c, animated: false)
        b.autorotates = true
        stage.take()
        #expect(!stage.window.rotate(to: .landscapeLeft))
        #expect(stage.take() == [])
    }

    @Test("rotation refused: the orientation is not in the top controller's supportedInterfaceOrientations")
    func rotationRefusedBySupportedOrientations() {
        let stage = Stage()
        let a = Probe("A")
        a.orientations = .allButUpsideDown
        stage.show(a)
        #expect(!stage.window.rotate(to: .portraitUpsideDown))
        #expect(stage.take() == [])
        #expect(stage.window.orientation == .portrait)
        a.orientations = .portrait
        #expect(!stage.window.rotate(to: .landscapeRight))
        #expect(stage.take() == [])
    }

    @Test("rotation refused: the application's mask disallows it")
    func rotationRefusedByApplication() {
        let stage = Stage(supportedOrientations: .portrait)
        let a = Probe("A")
        stage.show(a)
        #expect(!stage.window.rotate(to: .landscapeLeft))
        #expect(stage.take() == [])
        #expect(stage.window.orientation == .portrait)
        stage.application.supportedOrientations = .all
        #expect(stage.window.rotate(to: .landscapeLeft))
    }

    @Test("window close")
    func close() {
        let stage = Stage()
        let observer = JournalObserver()
        stage.application.addObserver(observer)
        weak var weakNav: NavigationController?
        weak var weakA: Probe?
        do {
            let a = Probe("A")
            weakA = a
            let nav = named("Nav", NavigationController(rootViewController: a))
            weakNav = nav
            stage.show(nav)
        }
        let changesBefore = observer.hierarchyChanges
        stage.window.close()
        #expect(
            stage.take() == [
                disappear("Nav", will: true, false), disappear("A", will: true, false),
                disappear("Nav", will: false, false), disappear("A", will: false, false),
            ])
        #expect(observer.hierarchyChanges == changesBefore + 1)
        #expect(weakNav == nil)
        #expect(weakA == nil)
        #expect(stage.application.windows.isEmpty)
        #expect(stage.application.keyWindow == nil)
        #expect(!stage.window.isVisible)
        stage.window.makeKeyAndVisible()
        #expect(!stage.window.isVisible)
        #expect(stage.violations.isEmpty)
    }

    @Test("replacing the root of a visible window")
    func replaceRoot() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        stage.show(a)
        stage.window.rootViewController = b
        #expect(
            stage.take() == load("B") + [disappear("A", will: true, false), appear("B", will: true, false)]
                + layout("B") + [disappear("A", will: false, false), appear("B", will: false, false)])
        #expect(a.window == nil)
        #expect(b.window === stage.window)
    }
}
