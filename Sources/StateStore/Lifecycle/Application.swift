import CoreMetrics
import Foundation
import Logging
import Synchronization

/// The process's application object: owns the windows, the orientations the app allows,
/// the lifecycle observers and trace, and delivers memory warnings to every live controller.
///
/// ```swift
/// let application = Application(storyboard: storyboard, supportedOrientations: .allButUpsideDown)
/// let window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
/// window.rootViewController = NavigationController(rootViewController: InboxController())
/// window.makeKeyAndVisible()
/// ```
///
/// The most recently created application is ``current`` until it terminates or is
/// released; new controllers register with it (weakly). A controller that enters a
/// window's hierarchy moves its registration to that window's application, and a
/// storyboard's controllers register with the storyboard's application.
@MainActor
public final class Application {
    /// The most recently created application, until it terminates or is released.
    public internal(set) static weak var current: Application?

    /// The storyboard controllers are instantiated from (for instance when restoring a hierarchy).
    public let storyboard: Storyboard

    /// The orientations the application allows; a window never rotates to another one.
    public var supportedOrientations: InterfaceOrientationMask

    /// The open windows, in creation order. A window leaves this list when closed.
    public internal(set) var windows: [Window] = []

    /// The window made key last by ``Window/makeKeyAndVisible()``, while it is open.
    public internal(set) weak var keyWindow: Window?

    /// An opt-in recorder of every callback sent to this application's controllers.
    // Read at every observed callback; its setter calls nothing out (the runtime's
    // exclusivity check is left out, as for ``observers``).
    @exclusivity(unchecked) public var trace: LifecycleTrace? {
        didSet { if trace != nil { Self.someApplicationTraces = true } }
    }

    /// Where the application logs: every ``LifecycleViolation`` at `info`, with the controller,
    /// its state, the callback and the reason as metadata. Silent unless the app passes its
    /// own (an application made with a store takes the store's ``StateStore/Options/logger``).
    public var logger: Logger

    /// Receives every ``LifecycleViolation`` after it is recorded in ``lifecycleViolations``
    /// and logged to ``logger``. Defaults to ``LifecycleViolation/defaultHandler(_:)``
    /// (`assertionFailure`: a debug build stops at the misuse).
    public var violationHandler: @MainActor (LifecycleViolation) -> Void = LifecycleViolation.defaultHandler

    /// Every violation reported so far, oldest first. A healthy app keeps this empty.
    public internal(set) var lifecycleViolations: [LifecycleViolation] = []

    /// Whether ``terminate()`` was called.
    public private(set) var isTerminated = false

    /// Observers, held strongly until removed (an observer must not hold its application
    /// strongly, or neither is ever released). Read at every callback delivered; changed only
    /// by ``addObserver(_:)`` and ``removeObserver(_:)``, which call nothing out while they do,
    /// so the runtime's exclusivity check is left out.
    @exclusivity(unchecked) public private(set) var observers: [any LifecycleObserver] = []

    /// Live controllers, held weakly. Changed only by registering and pruning, which call
    /// nothing out: the runtime's exclusivity check is left out.
    @exclusivity(unchecked) var registry = ControllerRegistry()

    /// Objects other layers of this module attach to the application (for instance the
    /// restoration layer's store), by key.
    var attachments: [String: AnyObject] = [:]

    /// Chooses the scene each new window shows: the first observer that can (the restoration
    /// layer's coordinator, with a store). One of ``observers``, which hold it.
    private(set) weak var sceneAssigner: (any SceneAssigning)?

    /// The last memory warning handled, with what it released.
    public internal(set) var lastMemoryWarning: MemoryWarningReport?

    /// How many memory warnings were handled.
    public internal(set) var memoryWarningCount = 0

    /// The monitors this application listens to, with their handler tokens and whether it
    /// started them.
    var memoryMonitors: [MonitorLink] = []

    /// What the application records of the memory warnings it handles.
    let metrics: ApplicationMetrics

    /// Creates an application and makes it ``current``.
    ///
    /// - Parameters:
    ///   - storyboard: The storyboard controllers are instantiated from. Controllers it
    ///     instantiates register with this application.
    ///   - supportedOrientations: The orientations the application allows.
    ///   - logger: Where the application logs (see ``logger``); silent by default.
    ///   - metricsFactory: Where it records the memory warnings it handles (see <doc:ServicesAndMetrics>);
    ///     `nil` uses `MetricsSystem.factory` as it is now.
    public init(
        storyboard: Storyboard = Storyboard(), supportedOrientations: InterfaceOrientationMask = .all,
        logger: Logger = Logger(label: "StateStore", factory: { _ in SwiftLogNoOpLogHandler() }),
        metricsFactory: (any MetricsFactory)? = nil
    ) {
        Self.instances.add(1, ordering: .relaxed)
        metrics = ApplicationMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.storyboard = storyboard
        self.supportedOrientations = supportedOrientations
        self.logger = logger
        storyboard.application = self
        Application.current = self
        if let trace = Self.traceForNewApplications {
            // An initializer's own assignment does not run `trace`'s didSet.
            self.trace = trace
            Self.someApplicationTraces = true
        }
    }

    /// A trace every application made from now on starts with, so that the callbacks its
    /// launch sends (the restoration's included) are recorded from the first: for the testing
    /// kit (`StateStoreTesting`), which records a relaunch it runs through an app's own launch
    /// code. Not public: an app sets ``trace`` on the application it makes.
    package static var traceForNewApplications: LifecycleTrace?

    deinit { Self.instances.subtract(1, ordering: .relaxed) }

    /// How many applications were made and not yet released. Counted up before an application
    /// can be reached and down after it no longer can, so it never under-states the applications
    /// a controller may belong to: at 1, a controller's registered application is the only one
    /// its window can belong to (see ``ViewController/application``).
    nonisolated static let instances = Atomic<Int>(0)

    // MARK: Observers

    /// Adds `observer`; it is held strongly until ``removeObserver(_:)``. Adding the same
    /// observer twice has no effect.
    public func addObserver(_ observer: any LifecycleObserver) {
        guard !observers.contains(where: { $0 === observer }) else { return }
        observers.append(observer)
        // The first observer that chooses scenes (a restoration coordinator) chooses them.
        if sceneAssigner == nil, let assigner = observer as? any SceneAssigning { sceneAssigner = assigner }
        updateObservedCallbacks()
    }

    /// Removes `observer`.
    public func removeObserver(_ observer: any LifecycleObserver) {
        observers.removeAll { $0 === observer }
        if sceneAssigner === observer {
            sceneAssigner = observers.lazy.compactMap { $0 as? any SceneAssigning }.first
        }
        updateObservedCallbacks()
    }

    /// The callbacks some observer acts on before they run (`willRun`), and after (`didRun`):
    /// the engine calls no observer for the others.
    @exclusivity(unchecked) private(set) var observedBeforeCallbacks = LifecycleCallback.Mask()
    @exclusivity(unchecked) private(set) var observedAfterCallbacks = LifecycleCallback.Mask()

    private func updateObservedCallbacks() {
        var before = LifecycleCallback.Mask(), after = LifecycleCallback.Mask()
        for observer in observers {
            let selective = observer as? any SelectiveLifecycleObserver
            before.formUnion(selective?.observedBeforeCallbacks ?? .all)
            after.formUnion(selective?.observedAfterCallbacks ?? .all)
        }
        observedBeforeCallbacks = before
        observedAfterCallbacks = after
        Self.callbacksSomeApplicationObserves.formUnion(before)
        Self.callbacksSomeApplicationObserves.formUnion(after)
    }

    // Across every application, and never reset, so they only ever over-state: while a
    // callback is in neither, delivering it skips finding the controller's application
    // (while more than one application is alive, a walk up its parents and presenters to its
    // window).

    /// Whether any application ever had a ``trace``.
    @exclusivity(unchecked) static private(set) var someApplicationTraces = false
    /// Every callback any application's observers ever acted on.
    @exclusivity(unchecked) static private(set) var callbacksSomeApplicationObserves = LifecycleCallback.Mask()

    // MARK: Live controllers

    /// The controllers alive now that registered with this application, oldest first.
    public var liveControllers: [ViewController] { registry.live() }

    /// How many controllers registered with this application are alive.
    public var liveControllerCount: Int { registry.live().count }

    func register(_ controller: ViewController) {
        if let previous = controller.registeredApplication, previous !== self {
            previous.registry.remove(controller)
        }
        if controller.registeredApplication !== self {
            registry.insert(controller)
            controller.registeredApplication = self
        }
    }

    // MARK: Events

    /// Delivers `didReceiveMemoryWarning(level:)` to every live controller, visible or not,
    /// and releases memory, as a real warning does (see ``respondToMemoryPressure(level:availableBytes:raisedAt:)``).
    /// Like "Simulate Memory Warning".
    public func didReceiveMemoryWarning(level: MemoryPressureLevel) {
        respondToMemoryPressure(level: level, availableBytes: nil, raisedAt: Date())
    }

    /// Terminates the application: tells the observers (which flush what they need to),
    /// closes every window (visible controllers disappear), and stops the memory-pressure
    /// monitors it started (their threads joined). Later calls do nothing.
    public func terminate() {
        guard !isTerminated else { return }
        isTerminated = true
        for observer in observers { observer.applicationWillTerminate(self) }
        for window in windows.reversed() { window.close() }
        stopObservingAllMemoryPressure()
        if Application.current === self { Application.current = nil }
    }

    func report(_ violation: LifecycleViolation) {
        lifecycleViolations.append(violation)
        violation.log(to: logger)
        violationHandler(violation)
    }
}
