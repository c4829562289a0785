extension ViewController {
    /// The controller presented by this one or by its nearest ancestor that presents one.
    public var presentedViewController: ViewController? {
        var node: ViewController? = self
        while let current = node {
            if let presented = current.presentedStorage { return presented }
            node = current.parent
        }
        return nil
    }

    /// `self` when `presented` is presented over this controller's context.
    func contextHost(of presented: ViewController) -> ViewController? {
        contextPresentedViewController === presented ? self : nil
    }

    /// The controller that presents `presented` for this one: for
    /// ``ModalPresentationStyle/overCurrentContext``, the nearest controller (this one or an
    /// ancestor) whose ``definesPresentationContext`` is `true`; otherwise, or when there is
    /// none, the root of this controller's containment tree.
    func presenter(for presented: ViewController) -> ViewController {
        if presented.modalPresentationStyle == .overCurrentContext {
            var node: ViewController? = self
            while let current = node {
                if current.definesPresentationContext { return current }
                node = current.parent
            }
        }
        return containmentRoot
    }

    /// The controller that presented this one (or the root of its containment tree).
    public var presentingViewController: ViewController? {
        containmentRoot.presentingStorage
    }

    /// Presents `viewControllerToPresent` over this controller's window content, in its
    /// ``modalPresentationStyle``.
    ///
    /// The presenter is the root of this controller's containment tree (a navigation
    /// controller presents for its children), or, for
    /// ``ModalPresentationStyle/overCurrentContext``, the nearest controller that
    /// ``definesPresentationContext``. Presentations stack: a presented controller may
    /// present another. On screen the order is `viewControllerToPresent`'s
    /// `loadView`/`viewDidLoad` if needed, then presenter `viewWillDisappear`, presented
    /// `viewWillAppear`, its layout, presenter `viewDidDisappear`, presented
    /// `viewDidAppear`; `completion` runs after. A presenter that stays visible (under a
    /// sheet, an over-full-screen or an over-current-context presentation) gets no
    /// callbacks; a full-screen presentation over a sheet makes everything visible under it
    /// disappear.
    ///
    /// Presenting while already presenting, presenting a controller that is already in a
    /// hierarchy, one whose ``supportedInterfaceOrientations`` have no orientation in common
    /// with the application's, or presenting from a controller presented over a current
    /// context, is a ``LifecycleViolation`` (nothing happens, `completion` is not called).
    ///
    /// A presentation asked for while another transition is sending its callbacks (from the
    /// `viewWillAppear` of a controller being presented, say) runs once that transition has
    /// finished, with its complete sequence; until then ``presentedViewController`` is
    /// unchanged. UIKit refuses such a presentation ("while a presentation is in progress").
    public func present(
        _ viewControllerToPresent: ViewController, animated: Bool, completion: (@MainActor () -> Void)? = nil
    ) {
        if TransitionQueue.isBusy {
            TransitionQueue.enqueue { [self] in
                present(viewControllerToPresent, animated: animated, completion: completion)
            }
            return
        }
        TransitionQueue.run { presentNow(viewControllerToPresent, animated: animated, completion: completion) }
    }

    private func presentNow(
        _ viewControllerToPresent: ViewController, animated: Bool, completion: (@MainActor () -> Void)?
    ) {
        let presented = viewControllerToPresent
        let presenter = presenter(for: presented)
        if let host = containmentRoot.presentingStorage, host.contextPresentedViewController === containmentRoot {
            reportViolation(
                nil,
                reason:
                    "cannot present \(presented.lifecycleName): a controller presented over a current context presents nothing"
            )
            return
        }
        if let current = presenter.presentedStorage {
            reportViolation(
                nil, reason: "cannot present \(presented.lifecycleName): already presenting \(current.lifecycleName)")
            return
        }
        guard presented.parent == nil, presented.presentingStorage == nil, presented.hostingWindow == nil,
            presented !== presenter, !presenter.isPresented(by: presented)
        else {
            reportViolation(nil, reason: "cannot present \(presented.lifecycleName): it is already in a hierarchy")
            return
        }
        if let application,
            presented.supportedInterfaceOrientations.intersection(application.supportedOrientations).isEmpty
        {
            reportViolation(
                nil,
                reason:
                    "cannot present \(presented.lifecycleName): its supported orientations have no orientation in common with the application's"
            )
            return
        }
        let window = self.window
        settleTransitionsInWindow()
        let onScreen = presenter.lifecycleState == .appeared && presenter.isInVisibleWindow
        let before = ViewController.visibleLayers(from: presenter)
        presenter.presentedStorage = presented
        presented.presentingStorage = presenter
        presented.adopt(application)
        if presenter.contextPresentedViewController === presented, presenter.isViewLoaded {
            presenter.installChildView(presented)
        }
        if onScreen {
            let after = ViewController.visibleLayers(from: presented)
            presented.isBeingPresented = true
            ViewController.transition(
                from: before.notIn(after),
                to: after.reversed().notIn(before),
                animated: animated, removeOutgoingView: false)
            presented.isBeingPresented = false
        }
        completion?()
        window?.notifyHierarchyChange()
    }

    /// Dismisses the controller presented by this one, with everything it presented; or,
    /// if this one presents nothing, dismisses this one (its containment root) from its presenter.
    ///
    /// Only the controllers that leave the screen and those uncovered get callbacks: top
    /// `viewWillDisappear`, uncovered `viewWillAppear`, layout if its geometry changed,
    /// top `viewDidDisappear`, uncovered `viewDidAppear`; then `completion`. Dismissing a
    /// sheet or an over-full-screen presentation sends its presenter, which stayed visible,
    /// nothing.
    ///
    /// A dismissal asked for while another transition is sending its callbacks (from the
    /// `viewWillAppear` of the controller being presented, say) runs once that transition has
    /// finished: the presentation completes first, as in UIKit.
    public func dismiss(animated: Bool, completion: (@MainActor () -> Void)? = nil) {
        if TransitionQueue.isBusy {
            TransitionQueue.enqueue { [self] in dismiss(animated: animated, completion: completion) }
            return
        }
        TransitionQueue.run { dismissNow(animated: animated, completion: completion) }
    }

    private func dismissNow(animated: Bool, completion: (@MainActor () -> Void)?) {
        let root = containmentRoot
        var holder: ViewController? = self
        while let current = holder, current.presentedStorage == nil { holder = current.parent }
        let presenter: ViewController
        if let holder {
            presenter = holder
        } else if let presenting = root.presentingStorage {
            presenter = presenting
        } else {
            return
        }
        guard let first = presenter.presentedStorage else { return }
        let window = self.window
        settleTransitionsInWindow()
        var top = first
        while let next = top.presentedStorage { top = next }
        if top.lifecycleState.isVisibleOrAppearing, top.isInVisibleWindow {
            let before = ViewController.visibleLayers(from: top)
            let after = ViewController.visibleLayers(from: presenter)
            let leaving = before.notIn(after)
            for controller in leaving { controller.isBeingDismissed = true }
            ViewController.transition(
                from: leaving, to: after.reversed().notIn(before),
                animated: animated, removeOutgoingView: false)
            for controller in leaving { controller.isBeingDismissed = false }
        }
        var chain: [ViewController] = []
        var node: ViewController? = first
        while let current = node {
            chain.append(current)
            node = current.presentedStorage
        }
        presenter.presentedStorage = nil
        for controller in chain {
            controller.presentedStorage = nil
            controller.presentingStorage = nil
            controller.loadedView?.removeFromSuperview()
        }
        completion?()
        window?.notifyHierarchyChange()
    }

    /// The presentation layers visible when `top` is the top of its window's chain, top
    /// first: `top`'s containment root, then, while a layer's style keeps its presenter
    /// visible, that presenter.
    static func visibleLayers(from top: ViewController) -> [ViewController] {
        var node = top.containmentRoot
        var result = [node]
        while node.modalPresentationStyle.keepsPresenterVisible, let presenter = node.presentingStorage {
            node = presenter.containmentRoot
            result.append(node)
        }
        return result
    }

    /// Whether `other` is below this controller in a presentation chain.
    func isPresented(by other: ViewController) -> Bool {
        var node = containmentRoot.presentingStorage
        while let current = node {
            if current === other.containmentRoot { return true }
            node = current.presentingStorage
        }
        return false
    }
}

// Identity searches over controller arrays, nonisolated on purpose: a closure written in
// main-actor code is isolated to it, and Swift checks the executor each time a generic
// algorithm (`contains(where:)`, `filter`, `Optional.map`) calls such a closure; these
// closures are not isolated, so the engine's hot paths pay no check per element.
extension Array where Element == ViewController {
    /// Whether the array holds `controller` itself (not an equal one: controllers are identities).
    func containsIdentical(_ controller: ViewController?) -> Bool {
        guard let controller else { return false }
        return contains { $0 === controller }
    }

    /// The index of `controller` itself, or `nil`.
    func firstIndexIdentical(_ controller: ViewController) -> Int? {
        firstIndex { $0 === controller }
    }

    /// Whether both arrays hold the same controllers in the same order.
    func hasSameIdentities(as other: [ViewController]) -> Bool {
        count == other.count && elementsEqual(other) { $0 === $1 }
    }
}

extension Sequence where Element == ViewController {
    /// The elements, in order, that `other` does not hold.
    func notIn(_ other: [ViewController]) -> [ViewController] {
        filter { !other.containsIdentical($0) }
    }
}

/// Controllers by identity, for the checks of a structural change: a scan of a short array
/// when made for few (a navigation stack, a tab bar's tabs), a hash set when made for many (a
/// rebuilt stack of thousands), so the usual change hashes and allocates a table for none.
/// The choice is made once, from the capacity asked for: callers ask for what they insert.
struct ControllerIdentities {
    private var few: [ObjectIdentifier] = []
    private var many: Set<ObjectIdentifier>?

    init(capacity: Int) {
        if capacity > 16 { many = Set(minimumCapacity: capacity) } else { few.reserveCapacity(capacity) }
    }

    /// Adds `controller`; `false` when it was already there.
    mutating func insert(_ controller: ViewController) -> Bool {
        let identity = ObjectIdentifier(controller)
        if many != nil { return many!.insert(identity).inserted }
        if few.contains(identity) { return false }
        few.append(identity)
        return true
    }

    func contains(_ controller: ViewController) -> Bool {
        let identity = ObjectIdentifier(controller)
        return many?.contains(identity) ?? few.contains(identity)
    }
}

extension ControllerIdentities {
    /// What replacing `old` by `new` (whose identities `self` holds) takes out and puts in:
    /// the controllers of `old` not in `new`, and those of `new` not in `old`, each in order.
    /// Loops, not `filter`: a main-actor closure checks its executor at every call.
    func change(
        from old: [ViewController], to new: [ViewController]
    ) -> (removed: [ViewController], added: [ViewController]) {
        var removed: [ViewController] = []
        for controller in old where !contains(controller) { removed.append(controller) }
        var oldIdentities = ControllerIdentities(capacity: old.count)
        for controller in old { _ = oldIdentities.insert(controller) }
        var added: [ViewController] = []
        for controller in new where !oldIdentities.contains(controller) { added.append(controller) }
        return (removed, added)
    }
}
