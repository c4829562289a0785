import Testing

@testable import StateStore

/// A controller whose modern callbacks run closures given by the test.
@MainActor
final class Hooked: ViewController {
    var onWillAppear: ((Hooked) -> Void)?
    var onWillTransition: ((Hooked, TransitionCoordinator) -> Void)?
    var forwards = true

    init(_ name: String, style: ModalPresentationStyle = .fullScreen) {
        super.init()
        restorationIdentifier = name
        modalPresentationStyle = style
    }

    override var shouldAutomaticallyForwardAppearanceMethods: Bool { forwards }

    override func viewWillAppear(_ animated: Bool) { onWillAppear?(self) }
    override func viewWillTransition(to size: Size, with coordinator: TransitionCoordinator) {
        onWillTransition?(self, coordinator)
    }
}

/// A presentation delegate that writes what it is told into a trace.
@MainActor
final class SheetDelegate: AdaptivePresentationControllerDelegate {
    let trace: LifecycleTrace
    var allow = true
    init(_ trace: LifecycleTrace) { self.trace = trace }
    func presentationControllerShouldDismiss(_ presentationController: PresentationController) -> Bool {
        trace.append("delegate: shouldDismiss")
        return allow
    }
    func presentationControllerDidAttemptToDismiss(_ presentationController: PresentationController) {
        trace.append("delegate: didAttemptToDismiss")
    }
    func presentationControllerWillDismiss(_ presentationController: PresentationController) {
        trace.append("delegate: willDismiss")
    }
    func presentationControllerDidDismiss(_ presentationController: PresentationController) {
        trace.append("delegate: didDismiss")
    }
}

/// Navigation and tab bar delegates that write into a trace.
@MainActor
final class ContainerDelegate: NavigationControllerDelegate, TabBarControllerDelegate {
    let trace: LifecycleTrace
    var refused: Set<String> = []
    init(_ trace: LifecycleTrace) { self.trace = trace }
    func navigationController(
        _ navigationController: NavigationController, willShow viewController: ViewController, animated: Bool
    ) {
        trace.append("delegate: willShow \(viewController.lifecycleName)")
    }
    func navigationController(
        _ navigationController: NavigationController, didShow viewController: ViewController, animated: Bool
    ) {
        trace.append("delegate: didShow \(viewController.lifecycleName)")
    }
    func tabBarController(_ tabBarController: TabBarController, shouldSelect viewController: ViewController) -> Bool {
        trace.append("delegate: shouldSelect \(viewController.lifecycleName)")
        return !refused.contains(viewController.lifecycleName)
    }
    func tabBarController(_ tabBarController: TabBarController, didSelect viewController: ViewController) {
        trace.append("delegate: didSelect \(viewController.lifecycleName)")
    }
}

func isAppearing(_ name: String, _ animated: Bool) -> String { "\(name): viewIsAppearing(animated: \(animated))" }

@MainActor
@Suite("Lifecycle: modern UIKit API")
struct LifecycleModernTests {
    // MARK: viewIsAppearing

    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/viewisappearing(_:):
    /// after `viewWillAppear`, once the view is in the hierarchy with its geometry and traits,
    /// before the controller's own layout and `viewDidAppear`; on every appearance.
    @Test("viewIsAppearing comes after viewWillAppear and the frame, before the controller's layout and viewDidAppear")
    func viewIsAppearingOrder() {
        let stage = Stage()
        stage.recordAll()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.record()
        stage.window.rootViewController = nav
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("Nav") + [appear("Nav", will: true, false)] + load("A") + [
                appear("A", will: true, false)
            ]
                + [isAppearing("Nav", false)] + layout("Nav") + [isAppearing("A", false)] + layout("A")
                + [appear("Nav", will: false, false), appear("A", will: false, false)])
        nav.pushViewController(b, animated: true)
        #expect(
            stage.take() == ["B: willMove(toParent: Nav)"] + load("B")
                + [disappear("A", will: true, true), appear("B", will: true, true), isAppearing("B", true)]
                + layout("B")
                + [disappear("A", will: false, true), appear("B", will: false, true), "B: didMove(toParent: Nav)"])
        // Coming back with the same geometry: no layout, viewIsAppearing all the same.
        nav.popViewController(animated: true)
        #expect(
            stage.take() == [
                "B: willMove(toParent: nil)", disappear("B", will: true, true), appear("A", will: true, true),
                isAppearing("A", true), disappear("B", will: false, true), appear("A", will: false, true),
                "B: didMove(toParent: nil)",
            ])
        #expect(stage.violations.isEmpty)
    }

    // MARK: Presentation styles

    /// A page sheet leaves its presenter on screen: no callbacks for it on present or dismiss
    /// (https://developer.apple.com/documentation/uikit/uimodalpresentationstyle/pagesheet).
    @Test("a page sheet leaves its presenter on screen, without callbacks")
    func pageSheet() {
        let stage = Stage()
        let a = Probe("A"), sheet = Hooked("S", style: .pageSheet)
        stage.show(a)
        a.present(sheet, animated: true) { stage.trace.append("completion") }
        #expect(
            stage.take() == load("S") + [appear("S", will: true, true)] + layout("S")
                + [appear("S", will: false, true), "completion"])
        #expect(a.lifecycleState == .appeared && sheet.presentingViewController === a)
        #expect(sheet.view.frame == Rect(x: 0, y: 10, width: 390, height: 834))
        #expect(stage.window.topViewController === sheet)
        sheet.dismiss(animated: true)
        #expect(stage.take() == [disappear("S", will: true, true), disappear("S", will: false, true)])
        #expect(a.lifecycleState == .appeared && a.presentedViewController == nil)
        #expect(stage.violations.isEmpty)
    }

    /// https://developer.apple.com/documentation/uikit/uimodalpresentationstyle/formsheet and
    /// https://developer.apple.com/documentation/uikit/uimodalpresentationstyle/overfullscreen
    @Test("form sheet geometry in a regular-width window, and over full screen")
    func formSheetAndOverFullScreen() {
        let stage = Stage(size: Size(width: 1024, height: 1366))
        let a = Probe("A"), form = Hooked("F", style: .formSheet), over = Hooked("O", style: .overFullScreen)
        stage.show(a)
        a.present(form, animated: false)
        #expect(form.view.frame == Rect(x: 242, y: 373, width: 540, height: 620))
        form.present(over, animated: false)
        #expect(over.view.frame == stage.window.bounds)
        #expect(
            stage.take() == load("F") + [appear("F", will: true, false)] + layout("F") + [
                appear("F", will: false, false)
            ]
                + load("O") + [appear("O", will: true, false)] + layout("O") + [appear("O", will: false, false)])
        #expect(a.lifecycleState == .appeared && form.lifecycleState == .appeared)
        // Everything visible rotates and lays out: the window's root, the sheet, the cover.
        stage.window.resize(to: Size(width: 1366, height: 1024))
        // The form sheet keeps its size: it only moves, and does not lay out.
        #expect(stage.take() == layout("A") + layout("O"))
        #expect(form.view.frame == Rect(x: 413, y: 202, width: 540, height: 620))
        a.dismiss(animated: false)
        #expect(
            stage.take() == [
                disappear("O", will: true, false), disappear("F", will: true, false),
                disappear("O", will: false, false), disappear("F", will: false, false),
            ])
        #expect(stage.violations.isEmpty)
    }

    /// A full-screen presentation over a sheet hides everything under it; dismissing it
    /// brings back the sheet and its presenter
    /// (https://developer.apple.com/documentation/uikit/uimodalpresentationstyle/fullscreen).
    @Test("a full-screen presentation over a sheet hides the sheet and its presenter")
    func fullScreenOverSheet() {
        let stage = Stage()
        let a = Probe("A"), sheet = Hooked("S", style: .pageSheet), full = Probe("F")
        stage.show(a)
        a.present(sheet, animated: false)
        stage.take()
        sheet.present(full, animated: true)
        #expect(
            stage.take() == load("F")
                + [disappear("S", will: true, true), disappear("A", will: true, true), appear("F", will: true, true)]
                + layout("F")
                + [
                    disappear("S", will: false, true), disappear("A", will: false, true),
                    appear("F", will: false, true),
                ])
        full.dismiss(animated: true)
        #expect(
            stage.take() == [
                disappear("F", will: true, true), appear("A", will: true, true), appear("S", will: true, true),
                disappear("F", will: false, true), appear("A", will: false, true), appear("S", will: false, true),
            ])
        #expect(stage.violations.isEmpty)
    }

    /// https://developer.apple.com/documentation/uikit/uimodalpresentationstyle/overcurrentcontext
    /// and https://developer.apple.com/documentation/uikit/uiviewcontroller/definespresentationcontext:
    /// the controller that defines the context presents, over its own view, and the
    /// presentation comes and goes with it.
    @Test("over current context: the context controller presents over its view, and hides it with its tab")
    func overCurrentContext() {
        let stage = Stage()
        let a = Probe("A"), x = Probe("X"), cover = Hooked("P", style: .overCurrentContext)
        let nav = named("Nav", NavigationController(rootViewController: a))
        nav.definesPresentationContext = true
        let tabs = TabBarController(viewControllers: [nav, x])
        tabs.restorationIdentifier = "Tabs"
        stage.show(tabs)
        a.present(cover, animated: true)
        #expect(
            stage.take() == load("P") + [appear("P", will: true, true)] + layout("P") + [appear("P", will: false, true)]
        )
        #expect(cover.presentingViewController === nav && nav.presentedViewController === cover)
        #expect(a.presentedViewController === cover && tabs.presentedViewController == nil)
        #expect(cover.view.superview === nav.view && cover.view.frame == nav.view.bounds)
        #expect(a.lifecycleState == .appeared && nav.lifecycleState == .appeared)
        #expect(same(stage.window.allViewControllers, [tabs, nav, a, cover, x]))

        tabs.selectedIndex = 1
        #expect(
            stage.take() == load("X")
                + [
                    disappear("Nav", will: true, false), disappear("A", will: true, false),
                    disappear("P", will: true, false),
                    appear("X", will: true, false),
                ] + layout("X")
                + [
                    disappear("Nav", will: false, false), disappear("A", will: false, false),
                    disappear("P", will: false, false),
                    appear("X", will: false, false),
                ])
        tabs.selectedIndex = 0
        #expect(
            stage.take() == [
                disappear("X", will: true, false), appear("Nav", will: true, false), appear("A", will: true, false),
                appear("P", will: true, false), disappear("X", will: false, false), appear("Nav", will: false, false),
                appear("A", will: false, false), appear("P", will: false, false),
            ])

        // It rotates with what is on screen.
        stage.window.rotate(to: .landscapeLeft)
        #expect(cover.view.frame.size == Size(width: 844, height: 390))
        #expect(stage.take().contains("P: didRotate(from: portrait)"))

        // It presents nothing itself; dismissing it sends its presenter nothing.
        cover.present(Probe("Q"), animated: false)
        #expect(stage.violations.count == 1)
        nav.dismiss(animated: true)
        #expect(stage.take() == [disappear("P", will: true, true), disappear("P", will: false, true)])
        #expect(nav.presentedViewController == nil && cover.viewIfLoaded?.superview == nil)

        // Without a context, the window's root presents it, over everything.
        nav.definesPresentationContext = false
        a.present(cover, animated: false)
        #expect(cover.presentingViewController === tabs && stage.window.topViewController === cover)
        #expect(cover.view.frame == stage.window.bounds)
        #expect(stage.violations.count == 1)
    }

    @Test("a window shown with a sheet already presented shows the presenter and the sheet")
    func sheetShownWithWindow() {
        let stage = Stage()
        let a = Probe("A"), sheet = Hooked("S", style: .pageSheet)
        stage.window.rootViewController = a
        a.present(sheet, animated: false)
        stage.record()
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("A") + load("S") + [appear("A", will: true, false), appear("S", will: true, false)]
                + layout("A") + layout("S") + [appear("A", will: false, false), appear("S", will: false, false)])
        stage.window.close()
        #expect(
            stage.take() == [
                disappear("S", will: true, false), disappear("A", will: true, false),
                disappear("S", will: false, false), disappear("A", will: false, false),
            ])
    }

    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/ismodalinpresentation and
    /// https://developer.apple.com/documentation/uikit/uiadaptivepresentationcontrollerdelegate/presentationcontrollerdiddismiss(_:)
    /// (sent for the user's dismissal only).
    @Test("isModalInPresentation and the presentation delegate govern the user's swipe on a sheet")
    func interactiveSheetDismissal() {
        let stage = Stage()
        let a = Probe("A"), sheet = Hooked("S", style: .pageSheet)
        let delegate = SheetDelegate(stage.trace)
        sheet.presentationController?.delegate = delegate
        stage.show(a)
        a.present(sheet, animated: true)
        stage.take()

        sheet.isModalInPresentation = true
        #expect(sheet.presentationController?.dismissInteractively() == false)
        #expect(stage.take() == ["delegate: didAttemptToDismiss"])
        sheet.isModalInPresentation = false
        delegate.allow = false
        #expect(sheet.presentationController?.dismissInteractively() == false)
        #expect(stage.take() == ["delegate: shouldDismiss", "delegate: didAttemptToDismiss"])
        #expect(a.presentedViewController === sheet)

        delegate.allow = true
        #expect(sheet.presentationController?.dismissInteractively() == true)
        #expect(
            stage.take() == [
                "delegate: shouldDismiss", "delegate: willDismiss",
                disappear("S", will: true, true), disappear("S", will: false, true), "delegate: didDismiss",
            ])
        #expect(a.presentedViewController == nil)

        // Programmatic dismissal does not reach the delegate; a full-screen controller cannot be swiped.
        a.present(sheet, animated: false)
        a.dismiss(animated: false)
        #expect(!stage.take().contains { $0.hasPrefix("delegate") })
        let full = Probe("F")
        a.present(full, animated: false)
        #expect(full.presentationController?.dismissInteractively() == false)
        #expect(stage.violations.isEmpty)
    }

    // MARK: Size and trait transitions

    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/viewwilltransition(to:with:),
    /// https://developer.apple.com/documentation/uikit/uicontentcontainer/willtransition(to:with:) and
    /// https://developer.apple.com/documentation/uikit/uitraitenvironment/traitcollectiondidchange(_:);
    /// the deprecated rotation callbacks still bracket them.
    @Test("rotation: traits, viewWillTransition, layout, alongside animations, didRotate, completions")
    func rotationWithCoordinator() {
        let stage = Stage()
        let a = Hooked("A")
        let nav = named("Nav", NavigationController(rootViewController: a))
        a.onWillTransition = { controller, coordinator in
            stage.trace.append("A: sees coordinator \(controller.transitionCoordinator === coordinator)")
            coordinator.animate(
                alongsideTransition: { _ in stage.trace.append("A: alongside, view \(a.view.frame.size)") },
                completion: { context in stage.trace.append("A: completion, cancelled \(context.isCancelled)") })
        }
        stage.show(nav)
        stage.recordAll()
        #expect(a.traitCollection == TraitCollection(horizontalSizeClass: .compact, verticalSizeClass: .regular))
        #expect(stage.window.rotate(to: .landscapeLeft))
        let landscape = TraitCollection(horizontalSizeClass: .compact, verticalSizeClass: .compact)
        #expect(
            stage.take() == [
                "Nav: willRotate(to: landscapeLeft, duration: 0.3)", "A: willRotate(to: landscapeLeft, duration: 0.3)",
                "Nav: willTransition(to: compact×compact)", "A: willTransition(to: compact×compact)",
                "Nav: viewWillTransition(to: 844.0x390.0)", "A: viewWillTransition(to: 844.0x390.0)",
                "A: sees coordinator true",
                "Nav: traitCollectionDidChange(from: compact×regular)",
                "A: traitCollectionDidChange(from: compact×regular)",
            ] + layout("Nav") + layout("A") + [
                "A: alongside, view 844.0x390.0",
                "Nav: didRotate(from: portrait)", "A: didRotate(from: portrait)",
                "A: completion, cancelled false",
            ])
        #expect(a.traitCollection == landscape)
        #expect(a.transitionCoordinator == nil)
        // A resize that keeps the size classes: no rotation callbacks, no trait change.
        a.onWillTransition = nil
        stage.window.resize(to: Size(width: 800, height: 390))
        #expect(
            stage.take() == ["Nav: viewWillTransition(to: 800.0x390.0)", "A: viewWillTransition(to: 800.0x390.0)"]
                + layout("Nav") + layout("A"))
        #expect(stage.violations.isEmpty)
    }

    @Test("a hidden controller learns of its new traits when it next appears")
    func hiddenControllerTraits() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        stage.window.rotate(to: .landscapeLeft)
        stage.recordAll()
        stage.take()
        nav.popViewController(animated: false)
        #expect(
            stage.take() == [
                "B: willMove(toParent: nil)", disappear("B", will: true, false), appear("A", will: true, false),
                "A: traitCollectionDidChange(from: compact×regular)", isAppearing("A", false),
            ] + layout("A")
                + [disappear("B", will: false, false), appear("A", will: false, false), "B: didMove(toParent: nil)"])
    }

    /// https://developer.apple.com/documentation/uikit/uitraitchangeobservable-67e94/registerfortraitchanges(_:handler:)
    @Test("registered trait handlers run after traitCollectionDidChange, for the traits they named")
    func registeredTraitHandlers() {
        let stage = Stage()
        let a = Probe("A")
        stage.show(a)
        stage.recordAll()
        a.registerForTraitChanges([.verticalSizeClass]) { controller, previous in
            stage.trace.append("\(controller.lifecycleName): vertical handler, was \(previous)")
        }
        let horizontal = a.registerForTraitChanges([.horizontalSizeClass]) { controller, _ in
            stage.trace.append("\(controller.lifecycleName): horizontal handler")
        }
        stage.window.rotate(to: .landscapeLeft)
        #expect(
            stage.take().filter { $0.contains("raitCollection") || $0.contains("handler") }
                == ["A: traitCollectionDidChange(from: compact×regular)", "A: vertical handler, was compact×regular"])
        stage.window.resize(to: Size(width: 1024, height: 1366))
        #expect(
            stage.take().filter { $0.contains("handler") } == [
                "A: vertical handler, was compact×compact", "A: horizontal handler",
            ])
        a.unregisterForTraitChanges(horizontal)
        stage.window.resize(to: Size(width: 390, height: 400))
        #expect(stage.take().filter { $0.contains("handler") } == ["A: vertical handler, was regular×regular"])
    }

    @Test("size classes follow the window's size")
    func sizeClasses() {
        #expect(TraitCollection(windowSize: Size(width: 390, height: 844)).description == "compact×regular")
        #expect(TraitCollection(windowSize: Size(width: 844, height: 390)).description == "compact×compact")
        #expect(TraitCollection(windowSize: Size(width: 820, height: 1180)).description == "regular×regular")
        #expect(TraitCollection(windowSize: Size(width: 1180, height: 820)).description == "regular×regular")
        #expect(Probe("Z").traitCollection == .unspecified)
    }

    /// An interactive pop's coordinator reports whether the user abandoned the gesture
    /// (https://developer.apple.com/documentation/uikit/uiviewcontrollertransitioncoordinatorcontext/iscancelled).
    @Test("the transition coordinator of an interactive pop says whether it was cancelled")
    func interactivePopCoordinator() {
        let stage = Stage()
        let a = Hooked("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        nav.pushViewController(b, animated: false)
        a.onWillAppear = { controller in
            guard let coordinator = controller.transitionCoordinator else { return }
            stage.trace.append("A: interactive \(coordinator.isInteractive)")
            coordinator.animate(alongsideTransition: nil) { context in
                stage.trace.append("A: completion, cancelled \(context.isCancelled)")
            }
        }
        stage.take()
        let first = nav.beginInteractivePop()
        #expect(b.transitionCoordinator === first.coordinator && nav.transitionCoordinator === first.coordinator)
        first.cancel()
        #expect(
            stage.take() == [
                disappear("B", will: true, true), appear("A", will: true, true), "A: interactive true",
                disappear("A", will: true, true), disappear("A", will: false, true), appear("B", will: true, true),
                appear("B", will: false, true), "A: completion, cancelled true",
            ])
        nav.beginInteractivePop().finish()
        #expect(
            stage.take() == [
                disappear("B", will: true, true), appear("A", will: true, true), "A: interactive true",
                disappear("B", will: false, true), appear("A", will: false, true),
                "B: willMove(toParent: nil)", "B: didMove(toParent: nil)", "A: completion, cancelled false",
            ])
        #expect(stage.violations.isEmpty)
    }

    // MARK: Delegates

    /// https://developer.apple.com/documentation/uikit/uinavigationcontrollerdelegate
    @Test("the navigation controller's delegate hears willShow and didShow")
    func navigationDelegate() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B")
        let nav = named("Nav", NavigationController(rootViewController: a))
        let delegate = ContainerDelegate(stage.trace)
        nav.delegate = delegate
        stage.show(nav)
        nav.pushViewController(b, animated: true)
        #expect(
            stage.take() == ["B: willMove(toParent: Nav)"] + load("B") + ["delegate: willShow B"]
                + [disappear("A", will: true, true), appear("B", will: true, true)] + layout("B")
                + [
                    disappear("A", will: false, true), appear("B", will: false, true), "B: didMove(toParent: Nav)",
                    "delegate: didShow B",
                ])
        let pop = nav.beginInteractivePop()
        #expect(
            stage.take() == ["delegate: willShow A", disappear("B", will: true, true), appear("A", will: true, true)])
        pop.cancel()
        #expect(!stage.take().contains { $0.hasPrefix("delegate") })
        nav.beginInteractivePop().finish()
        #expect(stage.take().last == "delegate: didShow A")
        #expect(stage.violations.isEmpty)
    }

    /// https://developer.apple.com/documentation/uikit/uitabbarcontrollerdelegate: only the
    /// user's selections reach the delegate.
    @Test("the tab bar controller's delegate is asked about the user's taps only")
    func tabBarDelegate() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C")
        let nav = named("Nav", NavigationController(rootViewController: a))
        nav.pushViewController(b, animated: false)
        let tabs = TabBarController(viewControllers: [nav, c])
        let delegate = ContainerDelegate(stage.trace)
        tabs.delegate = delegate
        stage.show(tabs)
        delegate.refused = ["C"]
        #expect(!tabs.tapTabBarItem(at: 1))
        #expect(stage.take() == ["delegate: shouldSelect C"])
        delegate.refused = []
        #expect(tabs.tapTabBarItem(at: 1))
        #expect(
            stage.take() == ["delegate: shouldSelect C"] + load("C")
                + [
                    disappear("Nav", will: true, false), disappear("B", will: true, false),
                    appear("C", will: true, false),
                ] + layout("C")
                + [
                    disappear("Nav", will: false, false), disappear("B", will: false, false),
                    appear("C", will: false, false),
                    "delegate: didSelect C",
                ])
        tabs.selectedIndex = 0
        #expect(!stage.take().contains { $0.hasPrefix("delegate") })
        // Tapping the selected navigation tab pops it to its root.
        #expect(tabs.tapTabBarItem(at: 0))
        #expect(same(nav.viewControllers, [a]))
        #expect(stage.take().last == "delegate: didSelect Nav")
        #expect(!tabs.tapTabBarItem(at: 5))
        #expect(stage.violations.isEmpty)
    }

    // MARK: Custom containers

    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/shouldautomaticallyforwardappearancemethods
    @Test("a container that does not forward appearance calls its children's transitions itself")
    func manualForwarding() {
        let stage = Stage()
        let container = Hooked("P"), child = Probe("C")
        container.forwards = false
        stage.window.rootViewController = container
        container.addChild(child)
        stage.record()
        stage.window.makeKeyAndVisible()
        #expect(
            stage.take() == load("P") + [appear("P", will: true, false)] + layout("P") + [
                appear("P", will: false, false)
            ])
        #expect(child.lifecycleState == .initialized)
        child.beginAppearanceTransition(true, animated: false)
        child.endAppearanceTransition()
        #expect(
            stage.take() == load("C") + [appear("C", will: true, false)] + layout("C") + [
                appear("C", will: false, false)
            ])
        #expect(child.view.superview === container.view)
        let other = Probe("D")
        container.addChild(other)
        #expect(stage.take() == ["D: willMove(toParent: P)", "D: didMove(toParent: P)"])
        #expect(stage.violations.isEmpty)
    }

    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/transition(from:to:duration:options:animations:completion:)
    @Test("transition(from:to:) swaps two children with their appearance callbacks")
    func customTransition() {
        let stage = Stage()
        let container = Probe("P"), first = Probe("A"), second = Probe("B")
        stage.window.rootViewController = container
        container.addChild(first)
        container.addChild(second)
        container.transition(from: second, to: first, duration: 0, animations: nil)
        stage.record()
        stage.window.makeKeyAndVisible()
        #expect(first.lifecycleState == .appeared && second.lifecycleState == .initialized)
        stage.take()
        container.transition(
            from: first, to: second, duration: 0.25, animations: { stage.trace.append("animations") },
            completion: { finished in stage.trace.append("completion \(finished)") })
        #expect(
            stage.take() == load("B") + [disappear("A", will: true, true), appear("B", will: true, true)] + layout("B")
                + ["animations", disappear("A", will: false, true), appear("B", will: false, true), "completion true"])
        #expect(first.viewIfLoaded?.superview == nil && second.view.superview === container.view)
        // The hidden child gets no forwarded callbacks any more.
        stage.window.close()
        #expect(
            stage.take() == [
                disappear("P", will: true, false), disappear("B", will: true, false),
                disappear("P", will: false, false), disappear("B", will: false, false),
            ])
        container.transition(from: first, to: Probe("Z"), duration: 0, animations: nil)
        #expect(stage.violations.count == 1)
    }

    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/show(_:sender:) and
    /// https://developer.apple.com/documentation/uikit/uiviewcontroller/showdetailviewcontroller(_:sender:)
    @Test("show pushes inside a navigation controller and presents elsewhere; showDetailViewController presents")
    func showAndShowDetail() {
        let stage = Stage()
        let a = Probe("A"), b = Probe("B"), c = Probe("C"), d = Probe("D")
        let nav = named("Nav", NavigationController(rootViewController: a))
        stage.show(nav)
        a.show(b, sender: nil)
        #expect(same(nav.viewControllers, [a, b]))
        b.showDetailViewController(c, sender: nil)
        #expect(nav.presentedViewController === c && c.presentingViewController === nav)
        c.show(d, sender: nil)
        #expect(c.presentedViewController === d)
        #expect(stage.violations.isEmpty)
    }
}
