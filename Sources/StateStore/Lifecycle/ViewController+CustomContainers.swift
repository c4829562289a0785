extension ViewController {
    /// Replaces the child `fromViewController` by the child `toViewController` on screen, as
    /// UIKit's `transition(from:to:duration:options:animations:completion:)` does for a
    /// custom container.
    ///
    /// Both must already be children of this controller (``addChild(_:)``); otherwise it is
    /// a ``LifecycleViolation`` and nothing changes. `toViewController`'s view is installed in
    /// this controller's view and `fromViewController`'s removed; from then on appearance
    /// callbacks are forwarded to `toViewController` and not to `fromViewController`. On
    /// screen, with ``shouldAutomaticallyForwardAppearanceMethods``, the order is: from
    /// `viewWillDisappear`, to `viewWillAppear`, to's layout, `animations`, from
    /// `viewDidDisappear`, to `viewDidAppear`, then `completion(true)`. Without forwarding
    /// the container sends those itself (``beginAppearanceTransition(_:animated:)``); off
    /// screen only `animations` and `completion(true)` run. `duration` is not waited for:
    /// the engine has no animation clock. Unlike ``addChild(_:)``, this sends no
    /// containment callbacks, as in UIKit.
    public func transition(
        from fromViewController: ViewController,
        to toViewController: ViewController,
        duration: Double,
        animations: (@MainActor () -> Void)?,
        completion: (@MainActor (Bool) -> Void)? = nil
    ) {
        guard fromViewController.parent === self, toViewController.parent === self,
            fromViewController !== toViewController,
            !(self is NavigationController || self is TabBarController)
        else {
            reportViolation(nil, reason: "transition(from:to:) needs two distinct children of this custom container")
            return
        }
        if TransitionQueue.mustWait(for: self) {
            TransitionQueue.enqueue { [self] in
                transition(
                    from: fromViewController, to: toViewController, duration: duration, animations: animations,
                    completion: completion)
            }
            return
        }
        TransitionQueue.run {
            let onScreen =
                lifecycleState == .appeared && isInVisibleWindow && forwardsAppearance
                && fromViewController.lifecycleState.isVisibleOrAppearing
            fromViewController.isHiddenByContainer = true
            toViewController.isHiddenByContainer = false
            if onScreen {
                toViewController.loadViewIfNeeded()
                fromViewController.beginAppearanceTree(appearing: false, animated: duration > 0)
                toViewController.beginAppearanceTree(appearing: true, animated: duration > 0)
                toViewController.layoutForAppearance()
                animations?()
                fromViewController.endAppearanceTree(appearing: false, animated: duration > 0)
                fromViewController.loadedView?.removeFromSuperview()
                toViewController.endAppearanceTree(appearing: true, animated: duration > 0)
            } else {
                if isViewLoaded { installChildView(toViewController) }
                fromViewController.loadedView?.removeFromSuperview()
                animations?()
            }
            completion?(true)
            window?.notifyHierarchyChange()
        }
    }
}
