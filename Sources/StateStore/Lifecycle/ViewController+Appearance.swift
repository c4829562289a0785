extension ViewController {
    /// Starts an appearance transition for this controller, as in UIKit: sends
    /// `viewWillAppear` (`isAppearing`) or `viewWillDisappear` and forwards it to the
    /// visible children.
    ///
    /// An appearing controller's view is loaded first and laid out after `viewWillAppear`.
    /// The built-in containers call this themselves; custom containers may too. A call
    /// the state machine does not allow (two "will"s without a "did" or a cancel between)
    /// is reported as a ``LifecycleViolation`` and ignored.
    public func beginAppearanceTransition(_ isAppearing: Bool, animated: Bool) {
        beginAppearanceTree(appearing: isAppearing, animated: animated)
        if isAppearing, lifecycleState == .appearing { layoutForAppearance() }
    }

    /// Finishes the transition begun by ``beginAppearanceTransition(_:animated:)``: sends
    /// `viewDidAppear` or `viewDidDisappear` and forwards it to the children.
    public func endAppearanceTransition() {
        switch lifecycleState {
        case .appearing: endAppearanceTree(appearing: true, animated: pendingAnimated)
        case .disappearing: endAppearanceTree(appearing: false, animated: pendingAnimated)
        default: reportViolation(.viewDidAppear, reason: "endAppearanceTransition() without a transition in progress")
        }
    }

    /// Sends the "will" callback to this controller, then to the children it forwards to.
    /// An appearing controller's view is loaded first and installed in its parent's view.
    func beginAppearanceTree(appearing: Bool, animated: Bool) {
        if appearing {
            loadViewIfNeeded()
            (parent ?? presentingStorage?.contextHost(of: self))?.installChildView(self)
            deliverAppearance(.viewWillAppear, animated: animated)
        } else {
            deliverAppearance(.viewWillDisappear, animated: animated)
        }
        guard forwardsAppearance else { return }
        _ = forwardedChildren.allUnretained { child in
            if child.lifecycleState.isVisibleOrAppearing != appearing {
                child.beginAppearanceTree(appearing: appearing, animated: animated)
            }
            return true
        }
    }

    /// Sends the "did" callback to this controller, then to the children that are in the
    /// same transition.
    func endAppearanceTree(appearing: Bool, animated: Bool) {
        deliverAppearance(appearing ? .viewDidAppear : .viewDidDisappear, animated: animated)
        guard forwardsAppearance else { return }
        let pending: LifecycleState = appearing ? .appearing : .disappearing
        _ = forwardedChildren.allUnretained { child in
            if child.lifecycleState == pending { child.endAppearanceTree(appearing: appearing, animated: animated) }
            return true
        }
    }

    /// Adds `child`'s view to this controller's view if it is not there yet.
    func installChildView(_ child: ViewController) {
        guard let parentView = loadedView else { return }
        let childView = child.view
        if childView.superview !== parentView {
            parentView.addSubview(childView)
        }
    }

    /// The frame this controller's view gets from its container: its parent's choice, or
    /// the window's bounds for a root or presented controller.
    var containerFrame: Rect? {
        if let parent { return parent.frame(forChild: self) }
        if let presenter = presentingStorage, presenter.contextPresentedViewController === self {
            return presenter.loadedView?.bounds
        }
        if presentingStorage != nil, let window { return modalPresentationStyle.frame(in: window.bounds) }
        if let window { return window.bounds }
        return nil
    }

    /// Whether appearance callbacks reach the children by themselves: always for the built-in
    /// containers, else as ``shouldAutomaticallyForwardAppearanceMethods`` says.
    var forwardsAppearance: Bool {
        self is NavigationController || self is TabBarController || shouldAutomaticallyForwardAppearanceMethods
    }

    /// Gives the view its container's frame and lays it out if its geometry is new or changed.
    ///
    /// Each appearing controller of the tree gets its new traits
    /// (`traitCollectionDidChange`) and `viewIsAppearing` once its frame is set and before
    /// its own layout callbacks; one that needs no layout gets them after the pass.
    func layoutForAppearance() {
        guard let view = loadedView else { return }
        if let frame = containerFrame { view.frame = frame }
        view.layoutIfNeeded()
        _ = visibleTree.allUnretained { controller in
            controller.prepareToAppearIfNeeded()
            return true
        }
    }

    /// Sends an appearing controller its trait change and `viewIsAppearing`, once per appearance.
    func prepareToAppearIfNeeded() {
        guard lifecycleState == .appearing, !sentIsAppearing, isInVisibleWindow else { return }
        sentIsAppearing = true
        updateTraitsIfChanged()
        deliver(.viewIsAppearing, animated: pendingAnimated, "viewIsAppearing(animated: \(pendingAnimated))") {
            viewIsAppearing(pendingAnimated)
        }
    }

    /// Gives each visible child's view its frame; called by ``View/layoutIfNeeded()``
    /// between `viewWillLayoutSubviews` and `viewDidLayoutSubviews`.
    func positionChildViews() {
        guard let parentView = loadedView else { return }
        _ = onScreenChildren.allUnretained { child in
            if let childView = child.loadedView, childView.superview === parentView {
                childView.frame = frame(forChild: child)
            }
            return true
        }
    }

    /// This controller and, recursively, the children it forwards appearance to that are on screen.
    var visibleTree: [ViewController] {
        var result: [ViewController] = []
        appendVisibleTree(to: &result)
        return result
    }

    /// Appends ``visibleTree`` to `result`: one array for the whole tree, not one per controller.
    private func appendVisibleTree(to result: inout [ViewController]) {
        result.append(self)
        _ = onScreenChildren.allUnretained { child in
            child.appendVisibleTree(to: &result)
            return true
        }
    }

    /// Replaces `outgoing` by `incoming` on screen, in UIKit's order:
    /// `outgoing.viewWillDisappear`, `incoming.viewWillAppear`, layout of `incoming`,
    /// `outgoing.viewDidDisappear`, `incoming.viewDidAppear`. Either side may be `nil`.
    ///
    /// A structural change asked for by one of these callbacks waits until the transition
    /// has finished (see `TransitionQueue`).
    static func transition(
        from outgoing: ViewController?, to incoming: ViewController?, animated: Bool, removeOutgoingView: Bool
    ) {
        // `if`, not `Optional.map`: a main-actor closure checks its executor when called.
        let from: [ViewController] = if let outgoing { [outgoing] } else { [] }
        let to: [ViewController] = if let incoming { [incoming] } else { [] }
        transition(from: from, to: to, animated: animated, removeOutgoingView: removeOutgoingView)
    }

    /// The same for several controllers on each side (presentation layers): every "will" of
    /// the outgoing ones in order, every "will" of the incoming ones, their layout, every
    /// outgoing "did", every incoming "did".
    static func transition(
        from outgoing: [ViewController], to incoming: [ViewController], animated: Bool, removeOutgoingView: Bool
    ) {
        TransitionQueue.run {
            for controller in incoming { controller.loadViewIfNeeded() }
            for controller in outgoing { controller.beginAppearanceTree(appearing: false, animated: animated) }
            for controller in incoming { controller.beginAppearanceTree(appearing: true, animated: animated) }
            for controller in incoming { controller.layoutForAppearance() }
            for controller in outgoing {
                controller.endAppearanceTree(appearing: false, animated: animated)
                if removeOutgoingView { controller.loadedView?.removeFromSuperview() }
            }
            for controller in incoming { controller.endAppearanceTree(appearing: true, animated: animated) }
        }
    }
}
