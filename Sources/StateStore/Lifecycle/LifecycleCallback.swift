/// A callback the lifecycle engine sends to a ``ViewController``.
///
/// ``LifecycleObserver``s are told about each one before and after the controller's
/// override runs, and a ``LifecycleTrace`` can be limited to a set of them.
public enum LifecycleCallback: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ``ViewController/loadView()``.
    case loadView
    /// ``ViewController/viewDidLoad()``.
    case viewDidLoad
    /// ``ViewController/viewWillAppear(_:)``.
    case viewWillAppear
    /// ``ViewController/viewDidAppear(_:)``.
    case viewDidAppear
    /// ``ViewController/viewWillDisappear(_:)``.
    case viewWillDisappear
    /// ``ViewController/viewDidDisappear(_:)``.
    case viewDidDisappear
    /// ``ViewController/viewWillLayoutSubviews()``.
    case viewWillLayoutSubviews
    /// ``ViewController/viewDidLayoutSubviews()``.
    case viewDidLayoutSubviews
    /// ``ViewController/didReceiveMemoryWarning(level:)``.
    case didReceiveMemoryWarning
    /// ``ViewController/awakeFromNib()``.
    case awakeFromNib
    /// ``ViewController/willRotate(to:duration:)``.
    case willRotate
    /// ``ViewController/didRotate(from:)``.
    case didRotate
    /// ``ViewController/viewIsAppearing(_:)``.
    case viewIsAppearing
    /// ``ViewController/viewWillTransition(to:with:)``.
    case viewWillTransition
    /// ``ViewController/willTransition(to:with:)``.
    case willTransitionToTraitCollection
    /// ``ViewController/traitCollectionDidChange(_:)``.
    case traitCollectionDidChange
    /// ``ViewController/willMove(toParent:)``.
    case willMoveToParent
    /// ``ViewController/didMove(toParent:)``.
    case didMoveToParent

    /// The four appearance callbacks.
    public static let appearance: Set<LifecycleCallback> = [
        .viewWillAppear, .viewDidAppear, .viewWillDisappear, .viewDidDisappear,
    ]

    /// The appearance callbacks and the two containment callbacks.
    public static let transitions: Set<LifecycleCallback> = appearance.union([.willMoveToParent, .didMoveToParent])

    public var description: String { rawValue }
}
