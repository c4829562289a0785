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

    /// Creates a tab bar controller with `viewControllers` as its tabs.
    public init(viewControllers: [ViewController] = []) {
        super.init()
        if !viewControllers.isEmpty { setViewControllers(viewControllers, animated: false) }
    }

    /// The tabs, in order. Setting them sends `willMove`/`didMove` to the removed and added
    /// controllers and, on screen, switches to the controller now selected if it changed.
    /// The selection stays on the same controller when it remains, else on the same index
    /// (clamped).
    public var viewControllers: [ViewController] {
        get { children }
        set { setViewControllers(newValue, animated: false) }
    }

    /// The index of the selected tab. Setting an index out of range is ignored.
    public var selectedIndex: Int {
        get { storedSelectedIndex }
        set {
            guard children.indices.contains(newValue), newValue != storedSelectedIndex else { return }
            let old = selectedViewController
            storedSelectedIndex = newValue
            switchTab(from: old, animated: false)
            window?.notifyHierarchyChange()
        }
    }

    /// The selected tab.
    public var selectedViewController: ViewController? {
        get { children.indices.contains(storedSelectedIndex) ? children[storedSelectedIndex] : nil }
        set {
            if let newValue, let index = children.firstIndex(where: { $0 === newValue }) { selectedIndex = index }
        }
    }

    /// Replaces the tabs. See ``viewControllers``.
    public func setViewControllers(_ newTabs: [ViewController], animated: Bool) {
        settleTransitionsInWindow()
        var seen = Set<ObjectIdentifier>()
        for controller in newTabs {
            guard seen.insert(ObjectIdentifier(controller)).inserted else {
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
        let oldIDs = Set(oldTabs.map(ObjectIdentifier.init))
        let removed = oldTabs.filter { !seen.contains(ObjectIdentifier($0)) }
        let added = newTabs.filter { !oldIDs.contains(ObjectIdentifier($0)) }
        let oldSelected = selectedViewController

        for controller in removed { controller.deliverWillMove(toParent: nil) }
        for controller in added { controller.deliverWillMove(toParent: self) }

        children = newTabs
        for controller in added {
            controller.parent = self
            controller.adopt(application)
        }
        if let oldSelected, let index = newTabs.firstIndex(where: { $0 === oldSelected }) {
            storedSelectedIndex = index
        } else {
            storedSelectedIndex = min(storedSelectedIndex, max(newTabs.count - 1, 0))
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
