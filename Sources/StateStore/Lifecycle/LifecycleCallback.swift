/// A callback the lifecycle engine sends to a ``ViewController``.
///
/// ``LifecycleObserver``s are told about each one before and after the controller's
/// override runs, and a ``LifecycleTrace`` can be limited to a set of them.
public enum LifecycleCallback: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case loadView, viewDidLoad
    case viewWillAppear, viewDidAppear, viewWillDisappear, viewDidDisappear
    case viewWillLayoutSubviews, viewDidLayoutSubviews
    case didReceiveMemoryWarning
    case awakeFromNib
    case willRotate, didRotate
    case willMoveToParent, didMoveToParent

    /// The four appearance callbacks.
    public static let appearance: Set<LifecycleCallback> = [
        .viewWillAppear, .viewDidAppear, .viewWillDisappear, .viewDidDisappear,
    ]

    /// The appearance callbacks and the two containment callbacks.
    public static let transitions: Set<LifecycleCallback> = appearance.union([.willMoveToParent, .didMoveToParent])

    public var description: String { rawValue }
}
