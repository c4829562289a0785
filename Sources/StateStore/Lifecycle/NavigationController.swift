/// A stack of controllers of which the top one is shown, as UIKit's `UINavigationController`.
///
/// The stack is the controller's ``ViewController/children``. Every change goes through
/// the same steps, in this order:
///
/// 1. `willMove(toParent: nil)` to each removed controller, then `willMove(toParent: self)`
///    to each added one (in stack order);
/// 2. if the navigation controller is on screen and the top changes: the new top's view
///    loads if needed, the ``delegate`` hears `willShow`, then old top `viewWillDisappear`,
///    new top `viewWillAppear`, new top `viewIsAppearing` and layout (if its geometry is new
///    or changed), old top `viewDidDisappear`, new top `viewDidAppear`;
/// 3. `didMove(toParent: nil)` to each removed controller, `didMove(toParent: self)` to each
///    added one; then the ``delegate`` hears `didShow`.
///
/// A change asked for while another transition is sending its callbacks (a push from the
/// `viewWillAppear` of a controller being pushed, say) runs once that transition has
/// finished, with its own complete sequence.
///
/// Push, pop, pop-to-root and `setViewControllers` are all such changes. Controllers under
/// the top keep their state (`disappeared`) and get no callbacks until they are on top again.
///
/// Rotation questions (``ViewController/shouldAutorotate``,
/// ``ViewController/supportedInterfaceOrientations``) are forwarded to the top controller.
///
/// ```swift
/// let navigation = NavigationController(rootViewController: InboxController())
/// window.rootViewController = navigation
/// navigation.pushViewController(MessageController(), animated: true)  // the inbox disappears, the message appears
/// navigation.popViewController(animated: true)  // and back
/// ```
@MainActor
open class NavigationController: ViewController {
    /// The pending interactive pop, if any.
    var interactivePop: InteractiveTransition?

    /// Told when a controller is about to be shown and was shown as the top. Weak, as in UIKit.
    public weak var delegate: (any NavigationControllerDelegate)?

    /// Creates an empty navigation controller.
    public override init() {
        super.init()
    }

    /// Creates a navigation controller whose stack holds `rootViewController`.
    public init(rootViewController: ViewController) {
        super.init()
        setViewControllers([rootViewController], animated: false)
    }

    /// The stack, bottom first. Setting it is ``setViewControllers(_:animated:)`` without animation.
    public var viewControllers: [ViewController] {
        get { children }
        set { setViewControllers(newValue, animated: false) }
    }

    /// The controller on top of the stack.
    public var topViewController: ViewController? { children.last }

    /// The controller on screen: the top controller, or what it presents.
    public var visibleViewController: ViewController? {
        if let presented = presentedViewController {
            var top = presented
            while let next = top.presentedStorage { top = next }
            return top
        }
        return topViewController
    }

    open override var shouldAutorotate: Bool {
        topViewController?.shouldAutorotate ?? true
    }

    open override var supportedInterfaceOrientations: InterfaceOrientationMask {
        topViewController?.supportedInterfaceOrientations ?? .all
    }

    /// Pushes `viewController` on top of the stack.
    ///
    /// Pushing a controller that is already in the stack, a ``NavigationController`` or a
    /// ``TabBarController`` is a ``LifecycleViolation`` and changes nothing (UIKit raises an
    /// exception for each). A push asked for while another transition is sending its
    /// callbacks (from the `viewWillAppear` of a controller being pushed, say) runs once
    /// that transition has finished.
    public func pushViewController(_ viewController: ViewController, animated: Bool) {
        if children.containsIdentical(viewController) {
            reportViolation(nil, reason: "cannot push \(viewController.lifecycleName): it is already in the stack")
            return
        }
        setViewControllers(children + [viewController], animated: animated)
    }

    /// Pushes `viewController` (animated): a navigation controller's way of showing.
    open override func show(_ viewController: ViewController, sender: Any?) {
        pushViewController(viewController, animated: true)
    }

    /// Pops the top controller; returns it, or `nil` when only the root is left.
    ///
    /// Asked for during another transition, the pop runs once that transition has finished
    /// and the controller returned is the one on top when it was asked for.
    @discardableResult
    public func popViewController(animated: Bool) -> ViewController? {
        if TransitionQueue.mustWait(for: self) {
            TransitionQueue.enqueue { [self] in popViewController(animated: animated) }
            return children.count > 1 ? children.last : nil
        }
        settleTransitions()
        guard children.count > 1, let top = children.last else { return nil }
        setViewControllers(Array(children.dropLast()), animated: animated)
        return top
    }

    /// Pops every controller above the root; returns them, or `nil` when there were none.
    @discardableResult
    public func popToRootViewController(animated: Bool) -> [ViewController]? {
        if TransitionQueue.mustWait(for: self) {
            TransitionQueue.enqueue { [self] in popToRootViewController(animated: animated) }
            return children.count > 1 ? Array(children.dropFirst()) : nil
        }
        settleTransitions()
        guard children.count > 1 else { return nil }
        let popped = Array(children.dropFirst())
        setViewControllers([children[0]], animated: animated)
        return popped
    }

    /// Pops the controllers above `viewController`; returns them.
    ///
    /// A `viewController` that is not in the stack is a ``LifecycleViolation`` (UIKit raises
    /// an exception): nothing changes and the result is `nil`.
    @discardableResult
    public func popToViewController(_ viewController: ViewController, animated: Bool) -> [ViewController]? {
        guard let index = children.firstIndexIdentical(viewController) else {
            reportViolation(nil, reason: "cannot pop to \(viewController.lifecycleName): it is not in the stack")
            return nil
        }
        let popped = Array(children[(index + 1)...])
        if TransitionQueue.mustWait(for: self) {
            TransitionQueue.enqueue { [self] in popToViewController(viewController, animated: animated) }
            return popped
        }
        settleTransitions()
        guard let settledIndex = children.firstIndexIdentical(viewController) else { return nil }
        let settledPopped = Array(children[(settledIndex + 1)...])
        setViewControllers(Array(children[...settledIndex]), animated: animated)
        return settledPopped
    }

    /// Replaces the stack. See the type's documentation for the order of callbacks.
    ///
    /// A stack holding a controller twice, this controller or one containing it, a
    /// presented controller, a window's root, a ``NavigationController`` or a
    /// ``TabBarController`` is a ``LifecycleViolation`` and changes nothing.
    public func setViewControllers(_ newStack: [ViewController], animated: Bool) {
        var seen = ControllerIdentities(capacity: newStack.count)
        for controller in newStack {
            guard seen.insert(controller) else {
                reportViolation(nil, reason: "\(controller.lifecycleName) appears twice in the new stack")
                return
            }
            if controller === self || isDescendant(of: controller) {
                reportViolation(nil, reason: "cannot put \(controller.lifecycleName) in its own stack")
                return
            }
            if controller.presentingStorage != nil || controller.hostingWindow != nil {
                reportViolation(
                    nil, reason: "cannot push \(controller.lifecycleName): it is presented or a window's root")
                return
            }
            if controller is NavigationController || controller is TabBarController {
                reportViolation(
                    nil,
                    reason:
                        "cannot push \(controller.lifecycleName): a \(type(of: controller)) cannot be in a navigation stack"
                )
                return
            }
        }
        if TransitionQueue.mustWait(for: self) {
            TransitionQueue.enqueue { [self] in setViewControllers(newStack, animated: animated) }
            return
        }
        TransitionQueue.run { replaceStack(with: newStack, seen: seen, animated: animated) }
    }

    private func replaceStack(with newStack: [ViewController], seen: ControllerIdentities, animated: Bool) {
        settleTransitions()
        // A controller that belongs to another container leaves it first.
        for controller in newStack where controller.parent != nil && controller.parent !== self {
            controller.removeFromParent()
        }
        let oldStack = children
        let (removed, added) = seen.change(from: oldStack, to: newStack)
        let oldTop = oldStack.last
        let newTop = newStack.last

        for controller in removed { controller.deliverWillMove(toParent: nil) }
        for controller in added { controller.deliverWillMove(toParent: self) }

        children = newStack
        for controller in added {
            controller.parent = self
            controller.adopt(application)
        }

        var shown: ViewController?
        if oldTop !== newTop, lifecycleState == .appeared, isInVisibleWindow {
            let pushing = added.containsIdentical(newTop)
            let popping = removed.containsIdentical(oldTop)
            newTop?.isMovingToParent = pushing
            oldTop?.isMovingFromParent = popping
            if let newTop {
                newTop.loadViewIfNeeded()
                delegate?.navigationController(self, willShow: newTop, animated: animated)
                shown = newTop
            }
            ViewController.transition(from: oldTop, to: newTop, animated: animated, removeOutgoingView: true)
            newTop?.isMovingToParent = false
            oldTop?.isMovingFromParent = false
        } else if oldTop !== newTop {
            oldTop?.loadedView?.removeFromSuperview()
        }

        for controller in removed {
            controller.loadedView?.removeFromSuperview()
            controller.parent = nil
            controller.deliverDidMove(toParent: nil)
        }
        for controller in added { controller.deliverDidMove(toParent: self) }
        if let shown { delegate?.navigationController(self, didShow: shown, animated: animated) }

        if !oldStack.hasSameIdentities(as: newStack) {
            window?.notifyHierarchyChange()
        }
    }

    /// Starts an interactive pop (the edge-swipe gesture): the top controller starts to
    /// disappear and the one below starts to appear.
    ///
    /// On screen this tells the ``delegate`` `willShow` for the controller below, then sends
    /// top `viewWillDisappear(animated: true)` and below `viewWillAppear(animated: true)`
    /// (plus its `viewIsAppearing` and its layout if its geometry changed); the
    /// transition's ``InteractiveTransition/coordinator`` is both controllers'
    /// ``ViewController/transitionCoordinator`` until it ends. Then
    /// ``InteractiveTransition/finish()`` completes the pop, and
    /// ``InteractiveTransition/cancel()`` undoes it: below `viewWillDisappear`,
    /// `viewDidDisappear`, top `viewWillAppear`, `viewDidAppear`. Any other structural
    /// change while the transition is pending (a push, a pop, a presentation, a tab switch…)
    /// cancels it first, with the callbacks of ``InteractiveTransition/cancel()``; a later
    /// `finish()` then does nothing. While it is pending, both controllers are on screen:
    /// a resize or a rotation lays both out and sends both the rotation callbacks.
    ///
    /// With fewer than two controllers, or while another transition is sending its
    /// callbacks (the gesture cannot start then), the returned transition is
    /// ``InteractiveTransition/State/unavailable``.
    public func beginInteractivePop() -> InteractiveTransition {
        if TransitionQueue.mustWait(for: self) {
            return InteractiveTransition(
                navigationController: self, from: nil, to: nil, state: .unavailable, onScreen: false)
        }
        return TransitionQueue.run { startInteractivePop() }
    }

    private func startInteractivePop() -> InteractiveTransition {
        settleTransitions()
        guard children.count > 1 else {
            return InteractiveTransition(
                navigationController: self, from: nil, to: nil, state: .unavailable, onScreen: false)
        }
        let from = children[children.count - 1]
        let to = children[children.count - 2]
        let onScreen = lifecycleState == .appeared && isInVisibleWindow
        let transition = InteractiveTransition(
            navigationController: self, from: from, to: to, state: .interactive, onScreen: onScreen)
        interactivePop = transition
        if onScreen {
            to.loadViewIfNeeded()
            delegate?.navigationController(self, willShow: to, animated: true)
            from.isMovingFromParent = true
            from.beginAppearanceTree(appearing: false, animated: true)
            to.beginAppearanceTree(appearing: true, animated: true)
            to.layoutForAppearance()
            transition.coordinator.runAnimations()
        }
        return transition
    }

    /// Completes the pending interactive pop.
    func finishInteractivePop(_ transition: InteractiveTransition) {
        guard interactivePop === transition else { return }
        if TransitionQueue.mustWait(for: self) {
            TransitionQueue.enqueue { [self] in finishInteractivePop(transition) }
            return
        }
        TransitionQueue.run { completeInteractivePop(transition) }
    }

    private func completeInteractivePop(_ transition: InteractiveTransition) {
        interactivePop = nil
        defer { transition.coordinator.complete(cancelled: false) }
        guard let from = transition.from, let to = transition.to, children.last === from else { return }
        guard transition.onScreen, lifecycleState == .appeared, isInVisibleWindow else {
            setViewControllers(Array(children.dropLast()), animated: true)
            return
        }
        from.endAppearanceTree(appearing: false, animated: true)
        from.loadedView?.removeFromSuperview()
        to.endAppearanceTree(appearing: true, animated: true)
        from.isMovingFromParent = false
        from.deliverWillMove(toParent: nil)
        children.removeLast()
        from.parent = nil
        from.deliverDidMove(toParent: nil)
        delegate?.navigationController(self, didShow: to, animated: true)
        window?.notifyHierarchyChange()
    }

    /// Undoes the pending interactive pop.
    func cancelInteractivePop(_ transition: InteractiveTransition) {
        guard interactivePop === transition else { return }
        TransitionQueue.run { undoInteractivePop(transition) }
    }

    private func undoInteractivePop(_ transition: InteractiveTransition) {
        interactivePop = nil
        defer { transition.coordinator.complete(cancelled: true) }
        guard transition.onScreen, let from = transition.from, let to = transition.to else { return }
        to.beginAppearanceTree(appearing: false, animated: true)
        to.endAppearanceTree(appearing: false, animated: true)
        to.loadedView?.removeFromSuperview()
        from.beginAppearanceTree(appearing: true, animated: true)
        from.layoutForAppearance()
        from.endAppearanceTree(appearing: true, animated: true)
        from.isMovingFromParent = false
    }

    override var appearanceChildren: [ViewController] {
        children.last.map { [$0] } ?? []
    }

    override var onScreenChildren: [ViewController] {
        if let pop = interactivePop, pop.onScreen, let from = pop.from, let to = pop.to {
            return [to, from]
        }
        return super.onScreenChildren
    }

    override func settleTransitions() {
        interactivePop?.cancel()
    }
}
