extension ViewController {
    /// The nearest ancestor that is a navigation controller.
    public var navigationController: NavigationController? {
        var node = parent
        while let current = node {
            if let navigation = current as? NavigationController { return navigation }
            node = current.parent
        }
        return nil
    }

    /// The nearest ancestor that is a tab bar controller.
    public var tabBarController: TabBarController? {
        var node = parent
        while let current = node {
            if let tabBar = current as? TabBarController { return tabBar }
            node = current.parent
        }
        return nil
    }

    /// Adds `child` as a child controller.
    ///
    /// Sends `child.willMove(toParent: self)`; if this controller is on screen, the child's
    /// view is installed in this view (filling its bounds) and the child appears
    /// (`viewWillAppear`, layout, `viewDidAppear`, not animated); then
    /// `child.didMove(toParent: self)`. A child that has another parent is removed from it
    /// first. For a ``NavigationController`` use `pushViewController(_:animated:)`, for a
    /// ``TabBarController`` its `viewControllers`.
    ///
    /// After a relaunch rebuilt this controller's archived children, a child it adds under the
    /// restoration identifier of one of them that has not appeared yet (a child the container's
    /// own code makes in `viewDidLoad`, say) takes that child's place: the rebuilt one is
    /// removed (`willMove`/`didMove(toParent: nil)`), and this one, at the same restoration
    /// path, restores its state as it appears. What the rebuilt one contained moves to it: a
    /// navigation stack's screens above the ones it already shows (when those are the archived
    /// stack's first, by identifier), a plain container's children (each matched the same way).
    public func addChild(_ child: ViewController) {
        guard child !== self, child.parent !== self else { return }
        guard !(self is NavigationController || self is TabBarController) else {
            reportViolation(
                nil, reason: "cannot add \(child.lifecycleName) as a child of a \(type(of: self)): use its own API")
            return
        }
        guard !isDescendant(of: child) else {
            reportViolation(nil, reason: "cannot add \(child.lifecycleName) as a child: it contains this controller")
            return
        }
        guard child.presentingStorage == nil, child.hostingWindow == nil else {
            reportViolation(
                nil, reason: "cannot add \(child.lifecycleName) as a child: it is presented or a window's root")
            return
        }
        if child.parent != nil { child.removeFromParent() }
        settleTransitionsInWindow()
        var position = children.count
        if holdsRebuiltChildren, let index = rebuiltChildIndex(holding: child.restorationIdentifier) {
            let rebuilt = children[index]
            rebuilt.deliverWillMove(toParent: nil)
            rebuilt.loadedView?.removeFromSuperview()
            children.remove(at: index)
            rebuilt.parent = nil
            rebuilt.deliverDidMove(toParent: nil)
            position = index
            Self.move(contentsOf: rebuilt, into: child)
        }
        child.deliverWillMove(toParent: self)
        children.insert(child, at: position)
        child.parent = self
        child.adopt(application)
        if lifecycleState == .appeared, isInVisibleWindow, forwardsAppearance {
            child.isMovingToParent = true
            ViewController.transition(from: nil, to: child, animated: false, removeOutgoingView: false)
            child.isMovingToParent = false
        }
        child.deliverDidMove(toParent: self)
        window?.notifyHierarchyChange()
    }

    /// Moves what `rebuilt`, a child a rebuild made, contains into `replacement`, made by its
    /// container's code under the same identifier: the archived stack's screens above those
    /// the replacement's stack already has (the same identifiers, bottom first; else nothing
    /// moves), or a plain container's children, each matched to one of the replacement's own
    /// by identifier (what it contains moved in turn) or added.
    static func move(contentsOf rebuilt: ViewController, into replacement: ViewController) {
        let archived = rebuilt.children
        guard !archived.isEmpty else { return }
        if let from = rebuilt as? NavigationController, let to = replacement as? NavigationController {
            let own = to.viewControllers
            guard own.count < archived.count,
                own.indices.allSatisfy({ index in
                    own[index].restorationIdentifier != nil
                        && own[index].restorationIdentifier == archived[index].restorationIdentifier
                })
            else { return }
            for (index, screen) in own.enumerated() { move(contentsOf: archived[index], into: screen) }
            from.setViewControllers([], animated: false)
            to.setViewControllers(own + archived[own.count...], animated: false)
            return
        }
        let containers = [rebuilt, replacement].contains { $0 is NavigationController || $0 is TabBarController }
        guard !containers else { return }
        for child in archived {
            if let identifier = child.restorationIdentifier,
                let mine = replacement.children.first(where: { $0.restorationIdentifier == identifier })
            {
                move(contentsOf: child, into: mine)
            } else {
                replacement.addChild(child)
            }
        }
    }

    /// The index of a child a rebuild added that has not appeared yet and whose restoration
    /// identifier is `identifier`; clears ``holdsRebuiltChildren`` once none is left waiting.
    private func rebuiltChildIndex(holding identifier: String?) -> Int? {
        var waiting = false
        for (index, child) in children.enumerated() where child.placedByRebuild && child.lifecycleState == .initialized
        {
            if let identifier, child.restorationIdentifier == identifier { return index }
            waiting = true
        }
        if !waiting { holdsRebuiltChildren = false }
        return nil
    }

    /// Removes this controller from its parent.
    ///
    /// Sends `willMove(toParent: nil)`; if it is on screen it disappears (not animated);
    /// its view leaves the parent's view; then `didMove(toParent: nil)`. A controller in a
    /// navigation stack or a tab bar is removed from it.
    public func removeFromParent() {
        guard let parent else { return }
        if let navigation = parent as? NavigationController {
            navigation.setViewControllers(navigation.viewControllers.filter { $0 !== self }, animated: false)
            return
        }
        if let tabBar = parent as? TabBarController {
            tabBar.viewControllers = tabBar.viewControllers.filter { $0 !== self }
            return
        }
        let window = self.window
        settleTransitionsInWindow()
        deliverWillMove(toParent: nil)
        if lifecycleState.isVisibleOrAppearing, parent.forwardsAppearance {
            isMovingFromParent = true
            ViewController.transition(from: self, to: nil, animated: false, removeOutgoingView: true)
            isMovingFromParent = false
        }
        loadedView?.removeFromSuperview()
        parent.children.removeIdentical(self)
        self.parent = nil
        deliverDidMove(toParent: nil)
        window?.notifyHierarchyChange()
    }

    /// Whether `ancestor` is this controller or contains it.
    func isDescendant(of ancestor: ViewController) -> Bool {
        var node: ViewController? = self
        while let current = node {
            if current === ancestor { return true }
            node = current.parent
        }
        return false
    }

    /// Finishes or cancels any interactive transition in this controller's window (or tree).
    func settleTransitionsInWindow() {
        if let window {
            window.settleTransitions()
        } else {
            for controller in containmentRoot.subtree { controller.settleTransitions() }
        }
    }

    /// This controller, its children recursively and what they present, depth first.
    var subtree: [ViewController] {
        var result = [self]
        for child in children { result += child.subtree }
        if let presented = presentedStorage { result += presented.subtree }
        return result
    }
}

extension ViewController {
    /// Adds `newChildren` as ``addChild(_:)`` does, for a controller that is in no window (a
    /// hierarchy being rebuilt): `willMove`/`didMove(toParent:)` for each, without walking the
    /// whole tree once per child, so adding n children costs O(n). On screen, or for a child
    /// already in a hierarchy, it falls back to ``addChild(_:)``.
    func addChildrenWhileOffscreen(_ newChildren: [ViewController]) {
        guard window == nil, !(self is NavigationController), !(self is TabBarController) else {
            for child in newChildren { addChild(child) }
            return
        }
        _ = newChildren.allUnretained { child in
            guard child !== self, child.parent == nil, child.presentingStorage == nil, child.hostingWindow == nil,
                child.children.isEmpty || !isDescendant(of: child)
            else {
                addChild(child)
                return true
            }
            child.deliverWillMove(toParent: self)
            children.append(child)
            child.parent = self
            child.adopt(application)
            child.deliverDidMove(toParent: self)
            return true
        }
    }
}
