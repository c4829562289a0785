import Testing

@testable import StateStore

/// A controller that names itself and can be told how to answer rotation questions.
@MainActor
final class Probe: ViewController {
    var autorotates = true
    var orientations: InterfaceOrientationMask = .all
    /// When set, overrides append "override <callback>" to it.
    var journal: Journal?

    init(_ name: String) {
        super.init()
        restorationIdentifier = name
    }

    override var shouldAutorotate: Bool { autorotates }
    override var supportedInterfaceOrientations: InterfaceOrientationMask { orientations }

    override func loadView() {
        journal?.append("override loadView")
        super.loadView()
    }
    override func viewDidLoad() { journal?.append("override viewDidLoad") }
    override func viewWillAppear(_ animated: Bool) { journal?.append("override viewWillAppear") }
    override func viewIsAppearing(_ animated: Bool) { journal?.append("override viewIsAppearing") }
    override func viewDidAppear(_ animated: Bool) { journal?.append("override viewDidAppear") }
    override func viewWillLayoutSubviews() { journal?.append("override viewWillLayoutSubviews") }
    override func viewDidLayoutSubviews() { journal?.append("override viewDidLayoutSubviews") }
    override func viewWillDisappear(_ animated: Bool) { journal?.append("override viewWillDisappear") }
    override func viewDidDisappear(_ animated: Bool) { journal?.append("override viewDidDisappear") }
    override func didReceiveMemoryWarning(level: MemoryPressureLevel) {
        journal?.append("override didReceiveMemoryWarning")
    }
}

/// A shared, ordered log.
@MainActor
final class Journal {
    private(set) var entries: [String] = []
    func append(_ entry: String) { entries.append(entry) }
}

/// An observer that writes what it is told into a journal.
@MainActor
final class JournalObserver: LifecycleObserver {
    let journal: Journal
    var hierarchyChanges = 0
    var memoryWarnings: [MemoryPressureLevel] = []
    var windowsOpenAtTermination: Int?

    init(journal: Journal = Journal()) { self.journal = journal }

    func controller(_ controller: ViewController, willRun callback: LifecycleCallback, animated: Bool) {
        journal.append("will \(callback)")
    }
    func controller(_ controller: ViewController, didRun callback: LifecycleCallback, animated: Bool) {
        journal.append("did \(callback)")
    }
    func hierarchyDidChange(in window: Window) { hierarchyChanges += 1 }
    func applicationDidReceiveMemoryWarning(_ application: Application, level: MemoryPressureLevel) {
        memoryWarnings.append(level)
    }
    func applicationWillTerminate(_ application: Application) {
        windowsOpenAtTermination = application.windows.count
    }
}

/// An application with one window and a trace; violations are collected, never fatal.
@MainActor
final class Stage {
    let application: Application
    let window: Window
    /// Records every callback but the modern ones (viewIsAppearing, size and trait
    /// transitions), which the tests of those callbacks turn on with `recordAll()`.
    let trace = LifecycleTrace(recording: Set(LifecycleCallback.allCases).subtracting(Stage.modernCallbacks))
    static let modernCallbacks: Set<LifecycleCallback> = [
        .viewIsAppearing, .viewWillTransition, .willTransitionToTraitCollection, .traitCollectionDidChange,
    ]

    /// Records every callback from now on.
    func recordAll() { trace.callbacks = Set(LifecycleCallback.allCases) }
    private(set) var violations: [LifecycleViolation] = []

    init(
        size: Size = Size(width: 390, height: 844), orientation: InterfaceOrientation = .portrait,
        supportedOrientations: InterfaceOrientationMask = .all
    ) {
        application = Application(supportedOrientations: supportedOrientations)
        window = Window(size: size, orientation: orientation, application: application)
        application.violationHandler = { [unowned self] violation in self.violations.append(violation) }
    }

    /// Shows `root` in the window, then starts recording from a clean trace.
    func show(_ root: ViewController) {
        window.rootViewController = root
        window.makeKeyAndVisible()
        record()
    }

    /// Attaches the trace (if not yet) and forgets what it recorded so far.
    func record() {
        application.trace = trace
        trace.removeAll()
    }

    /// The lines recorded since the last `record()`, then forgets them.
    @discardableResult
    func take() -> [String] {
        defer { trace.removeAll() }
        return trace.lines
    }
}

/// Appearance lines for a controller, as the trace writes them.
func appear(_ name: String, will: Bool, _ animated: Bool) -> String {
    "\(name): view\(will ? "Will" : "Did")Appear(animated: \(animated))"
}
func disappear(_ name: String, will: Bool, _ animated: Bool) -> String {
    "\(name): view\(will ? "Will" : "Did")Disappear(animated: \(animated))"
}
func layout(_ name: String) -> [String] {
    ["\(name): viewWillLayoutSubviews", "\(name): viewDidLayoutSubviews"]
}
func load(_ name: String) -> [String] {
    ["\(name): loadView", "\(name): viewDidLoad"]
}

@MainActor
func named(_ name: String, _ navigation: NavigationController) -> NavigationController {
    navigation.restorationIdentifier = name
    return navigation
}

/// Whether two lists hold the same controllers, in the same order.
func same(_ lhs: [ViewController]?, _ rhs: [ViewController]) -> Bool {
    guard let lhs else { return false }
    return lhs.map(ObjectIdentifier.init) == rhs.map(ObjectIdentifier.init)
}
