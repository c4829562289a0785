/// Something told about every callback the lifecycle engine sends, and about structural
/// changes in windows.
///
/// The lifecycle layer knows no database: it reports to its observers, and the
/// restoration layer is the observer that saves state when a controller disappears and
/// restores it when one appears. Register observers with ``Application/addObserver(_:)``.
///
/// Every method has an empty default implementation, so an observer implements only
/// what it needs.
///
/// The engine calls ``controller(_:willRun:animated:)`` immediately before the
/// controller's override of `callback` runs and ``controller(_:didRun:animated:)``
/// immediately after it returns, for every callback it sends (including `loadView`,
/// layout, rotation, containment and memory warnings). `animated` is the flag passed to
/// appearance callbacks and `false` for the others.
@MainActor
public protocol LifecycleObserver: AnyObject {
    /// Before the controller's override of `callback` runs.
    func controller(_ controller: ViewController, willRun callback: LifecycleCallback, animated: Bool)
    /// After the override returned.
    func controller(_ controller: ViewController, didRun callback: LifecycleCallback, animated: Bool)
    /// A structural change (push/pop/present/dismiss/tab switch/child add/remove/root set/window close)
    /// finished in `window`.
    func hierarchyDidChange(in window: Window)
    /// A memory warning was delivered to every live controller and the global caches were
    /// purged; memory has not been returned to the system yet (release what you hold now).
    func applicationDidReceiveMemoryWarning(_ application: Application, level: MemoryPressureLevel)
    /// A memory warning was handled: controllers and caches purged, memory returned to the
    /// system, and `report` measured.
    func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport)
    /// terminate() was called (before windows are torn down).
    func applicationWillTerminate(_ application: Application)
}

extension LifecycleObserver {
    public func controller(_ controller: ViewController, willRun callback: LifecycleCallback, animated: Bool) {}
    public func controller(_ controller: ViewController, didRun callback: LifecycleCallback, animated: Bool) {}
    public func hierarchyDidChange(in window: Window) {}
    public func applicationDidReceiveMemoryWarning(_ application: Application, level: MemoryPressureLevel) {}
    public func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {}
    public func applicationWillTerminate(_ application: Application) {}
}

/// An observer of this module that acts on a few callbacks only: the engine skips calling it
/// (and any observer, when all of an application's observers are like it) for the others.
@MainActor
protocol SelectiveLifecycleObserver: LifecycleObserver {
    /// The callbacks whose `willRun` it acts on; it is not told before the others run.
    var observedBeforeCallbacks: LifecycleCallback.Mask { get }
    /// The callbacks whose `didRun` it acts on; it is not told after the others ran.
    var observedAfterCallbacks: LifecycleCallback.Mask { get }
}

extension LifecycleCallback {
    /// A set of callbacks as bits, tested without hashing on every callback delivered.
    struct Mask: OptionSet, Sendable {
        let rawValue: UInt64
        static let all = Mask(rawValue: .max)
        init(rawValue: UInt64) { self.rawValue = rawValue }
        init(_ callbacks: [LifecycleCallback]) {
            self.init(rawValue: callbacks.reduce(0) { $0 | $1.bit })
        }
    }

    /// This callback's bit in a ``Mask`` (a switch: no hashing of the raw value).
    var bit: UInt64 {
        let position: UInt64 =
            switch self {
            case .loadView: 0
            case .viewDidLoad: 1
            case .viewWillAppear: 2
            case .viewDidAppear: 3
            case .viewWillDisappear: 4
            case .viewDidDisappear: 5
            case .viewWillLayoutSubviews: 6
            case .viewDidLayoutSubviews: 7
            case .didReceiveMemoryWarning: 8
            case .awakeFromNib: 9
            case .willRotate: 10
            case .didRotate: 11
            case .viewIsAppearing: 12
            case .viewWillTransition: 13
            case .willTransitionToTraitCollection: 14
            case .traitCollectionDidChange: 15
            case .willMoveToParent: 16
            case .didMoveToParent: 17
            }
        return 1 << position
    }
}
