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
            parent?.installChildView(self)
            deliverAppearance(.viewWillAppear, animated: animated)
        } else {
            deliverAppearance(.viewWillDisappear, animated: animated)
        }
        for child in appearanceChildren where child.lifecycleState.isVisibleOrAppearing != appearing {
            child.beginAppearanceTree(appearing: appearing, animated: animated)
        }
    }

    /// Sends the "did" callback to this controller, then to the children that are in the
    /// same transition.
    func endAppearanceTree(appearing: Bool, animated: Bool) {
        deliverAppearance(appearing ? .viewDidAppear : .viewDidDisappear, animated: animated)
        let pending: LifecycleState = appearing ? .appearing : .disappearing
        for child in appearanceChildren where child.lifecycleState == pending {
            child.endAppearanceTree(appearing: appearing, animated: animated)
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
        if let window { return window.bounds }
        return nil
    }

    /// Gives the view its container's frame and lays it out if its geometry is new or changed.
    func layoutForAppearance() {
        guard let view = loadedView else { return }
        if let frame = containerFrame { view.frame = frame }
        view.layoutIfNeeded()
    }

    /// Gives each visible child's view its frame; called by ``View/layoutIfNeeded()``
    /// between `viewWillLayoutSubviews` and `viewDidLayoutSubviews`.
    func positionChildViews() {
        guard let parentView = loadedView else { return }
        for child in onScreenChildren {
            if let childView = child.loadedView, childView.superview === parentView {
                childView.frame = frame(forChild: child)
            }
        }
    }

    /// This controller and, recursively, the children it forwards appearance to that are on screen.
    var visibleTree: [ViewController] {
        var result = [self]
        for child in onScreenChildren {
            result += child.visibleTree
        }
        return result
    }

    /// Replaces `outgoing` by `incoming` on screen, in UIKit's order:
    /// `outgoing.viewWillDisappear`, `incoming.viewWillAppear`, layout of `incoming`,
    /// `outgoing.viewDidDisappear`, `incoming.viewDidAppear`. Either side may be `nil`.
    ///
    /// A structural change asked for by one of these callbacks waits until the transition
    /// has finished (see `TransitionQueue`).
    static func transition(from outgoing: ViewController?, to incoming: ViewController?, animated: Bool, removeOutgoingView: Bool) {
        TransitionQueue.run {
            incoming?.loadViewIfNeeded()
            outgoing?.beginAppearanceTree(appearing: false, animated: animated)
            incoming?.beginAppearanceTree(appearing: true, animated: animated)
            incoming?.layoutForAppearance()
            outgoing?.endAppearanceTree(appearing: false, animated: animated)
            if removeOutgoingView { outgoing?.loadedView?.removeFromSuperview() }
            incoming?.endAppearanceTree(appearing: true, animated: animated)
        }
    }
}
