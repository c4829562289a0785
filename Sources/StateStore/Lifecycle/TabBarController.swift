/// A set of controllers of which the selected one is shown, as UIKit's `UITabBarController`.
///
/// The tabs are the controller's ``ViewController/children``. Switching tabs on screen
/// sends (not animated): the new tab's `loadView`/`viewDidLoad` if needed, old tab
/// `viewWillDisappear`, new tab `viewWillAppear`, new tab layout (if its geometry is new
/// or changed), old tab `viewDidDisappear`, new tab `viewDidAppear`. Unselected tabs keep
/// their state and get no appearance callbacks.
///
/// Rotation questions are forwarded to the selected controller.
@MainActor
public final class TabBarController: ViewController {
    private var storedSelectedIndex = 0

    /// Asked and told about the user's tab selections. Weak, as in UIKit.
    public weak var delegate: (any TabBarControllerDelegate)?

    /// Creates a tab bar controller with `viewControllers` as its tabs.
    public init(viewControllers: [ViewController] = []) {
        super.init()
        if !viewControllers.isEmpty { setViewControllers(viewControllers, animated: false) }
    }

    /// The tabs, in order. Setting them sends `willMove`/`didMove` to the removed and added
    /// controllers and, on screen, switches to the controller now selected if it changed.
    /// As UIKit documents, the selection stays on the same controller when it remains, else
    /// on the same index when it is still valid, else on index 0.
    public var viewControllers: [ViewController] {
        get { children }
        set { setViewControllers(newValue, animated: false) }
    }

    /// The index of the selected tab. Setting an index out of range is ignored.
    ///
    /// A switch first cancels a pending interactive pop anywhere in the window (see
    /// ``NavigationController/beginInteractivePop()``). Asked for while another transition is
    /// sending its callbacks, it runs once that transition has finished.
    public var selectedIndex: Int {
        get { storedSelectedIndex }
        set {
            guard children.indices.contains(newValue), newValue != storedSelectedIndex else { return }
            if TransitionQueue.mustWait(for: self) {
                TransitionQueue.enqueue { [self] in selectedIndex = newValue }
                return
            }
            TransitionQueue.run {
                settleTransitionsInWindow()
                guard children.indices.contains(newValue), newValue != storedSelectedIndex else { return }
                let old = selectedViewController
                storedSelectedIndex = newValue
                switchTab(from: old, animated: false)
                window?.notifyHierarchyChange()
            }
        }
    }

    /// The selected tab.
    ///
    /// Setting a controller that is not one of the tabs is a ``LifecycleViolation`` (UIKit
    /// raises an exception) and changes nothing.
    public var selectedViewController: ViewController? {
        get { children.indices.contains(storedSelectedIndex) ? children[storedSelectedIndex] : nil }
        set {
            guard let newValue else { return }
            guard let index = children.firstIndexIdentical(newValue) else {
                reportViolation(nil, reason: "cannot select \(newValue.lifecycleName): it is not one of the tabs")
                return
            }
            selectedIndex = index
        }
    }

    /// Replaces the tabs. See ``viewControllers``.
    public func setViewControllers(_ newTabs: [ViewController], animated: Bool) {
        if TransitionQueue.mustWait(for: self) {
            TransitionQueue.enqueue { [self] in setViewControllers(newTabs, animated: animated) }
            return
        }
        TransitionQueue.run { replaceTabs(with: newTabs, animated: animated) }
    }

    private func replaceTabs(with newTabs: [ViewController], animated: Bool) {
        settleTransitionsInWindow()
        var seen = ControllerIdentities(capacity: newTabs.count)
        for controller in newTabs {
            guard seen.insert(controller) else {
                reportViolation(nil, reason: "\(controller.lifecycleName) appears twice in the new tabs")
                return
            }
            if controller === self || isDescendant(of: controller) || controller.presentingStorage != nil
                || controller.hostingWindow != nil
            {
                reportViolation(nil, reason: "cannot make \(controller.lifecycleName) a tab")
                return
            }
        }
        for controller in newTabs where controller.parent != nil && controller.parent !== self {
            controller.removeFromParent()
        }
        let oldTabs = children
        let (removed, added) = seen.change(from: oldTabs, to: newTabs)
        let oldSelected = selectedViewController

        for controller in removed { controller.deliverWillMove(toParent: nil) }
        for controller in added { controller.deliverWillMove(toParent: self) }

        children = newTabs
        for controller in added {
            controller.parent = self
            controller.adopt(application)
        }
        if let oldSelected, let index = newTabs.firstIndexIdentical(oldSelected) {
            storedSelectedIndex = index
        } else if !newTabs.indices.contains(storedSelectedIndex) {
            storedSelectedIndex = 0
        }
        switchTab(from: oldSelected, animated: animated)

        for controller in removed {
            controller.loadedView?.removeFromSuperview()
            controller.parent = nil
            controller.deliverDidMove(toParent: nil)
        }
        for controller in added { controller.deliverDidMove(toParent: self) }
        if oldTabs.map(ObjectIdentifier.init) != newTabs.map(ObjectIdentifier.init) {
            window?.notifyHierarchyChange()
        }
    }

    private func switchTab(from old: ViewController?, animated: Bool) {
        let new = selectedViewController
        guard old !== new else { return }
        if lifecycleState == .appeared, isInVisibleWindow {
            ViewController.transition(from: old, to: new, animated: animated, removeOutgoingView: true)
        } else {
            old?.loadedView?.removeFromSuperview()
        }
    }

    public override var shouldAutorotate: Bool {
        selectedViewController?.shouldAutorotate ?? true
    }

    public override var supportedInterfaceOrientations: InterfaceOrientationMask {
        selectedViewController?.supportedInterfaceOrientations ?? .all
    }

    override var appearanceChildren: [ViewController] {
        selectedViewController.map { [$0] } ?? []
    }
}
