/// Asked and told about the user's tab selections, as UIKit's `UITabBarControllerDelegate`.
///
/// As in UIKit, only the user's taps (``TabBarController/tapTabBarItem(at:)``) reach the
/// delegate; setting ``TabBarController/selectedIndex`` or
/// ``TabBarController/selectedViewController`` in code does not. Both methods have defaults
/// (allow; do nothing).
@MainActor
public protocol TabBarControllerDelegate: AnyObject {
    /// Whether the user's tap may select `viewController`.
    func tabBarController(_ tabBarController: TabBarController, shouldSelect viewController: ViewController) -> Bool
    /// The user's tap selected `viewController` (also when it was selected already): after
    /// the switch's appearance callbacks.
    func tabBarController(_ tabBarController: TabBarController, didSelect viewController: ViewController)
}

extension TabBarControllerDelegate {
    public func tabBarController(
        _ tabBarController: TabBarController, shouldSelect viewController: ViewController
    ) -> Bool { true }
    public func tabBarController(_ tabBarController: TabBarController, didSelect viewController: ViewController) {}
}

extension TabBarController {
    /// The user tapped the tab bar item at `index`; returns whether a tab was selected.
    ///
    /// Asks the ``delegate`` whether it may select the tab; if so, selects it (the switch of
    /// ``selectedIndex``; tapping the selected tab again pops a navigation controller in it
    /// to its root, as UIKit does) and tells the delegate. An index out of range, or a
    /// refusal, changes nothing.
    @discardableResult
    public func tapTabBarItem(at index: Int) -> Bool {
        guard viewControllers.indices.contains(index) else { return false }
        let tab = viewControllers[index]
        if let delegate, !delegate.tabBarController(self, shouldSelect: tab) { return false }
        if index == selectedIndex {
            (tab as? NavigationController)?.popToRootViewController(animated: true)
        } else {
            selectedIndex = index
        }
        delegate?.tabBarController(self, didSelect: tab)
        return true
    }
}
