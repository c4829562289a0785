/// Told when a navigation controller changes the controller it shows, as UIKit's
/// `UINavigationControllerDelegate`.
///
/// Sent only for changes on screen: a push, a pop, `setViewControllers` that changes the
/// top, and an interactive pop. Both methods have empty defaults.
@MainActor
public protocol NavigationControllerDelegate: AnyObject {
    /// `viewController` is about to become the top: after its view loaded, before the
    /// appearance callbacks (for an interactive pop, when the gesture begins).
    func navigationController(
        _ navigationController: NavigationController, willShow viewController: ViewController, animated: Bool)
    /// `viewController` is the top: after its `viewDidAppear` and the containment callbacks.
    /// Not sent for an interactive pop the user abandoned.
    func navigationController(
        _ navigationController: NavigationController, didShow viewController: ViewController, animated: Bool)
}

extension NavigationControllerDelegate {
    public func navigationController(
        _ navigationController: NavigationController, willShow viewController: ViewController, animated: Bool
    ) {}
    public func navigationController(
        _ navigationController: NavigationController, didShow viewController: ViewController, animated: Bool
    ) {}
}
