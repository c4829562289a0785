/// A screen area that shows one controller hierarchy: a root controller and whatever it presents.
///
/// A window belongs to its ``Application`` (which keeps it in ``Application/windows`` until
/// ``close()``); the window owns its root controller. Nothing appears before
/// ``makeKeyAndVisible()``.
///
/// The first display of a root sends, in order: `loadView`, `viewDidLoad`,
/// `viewWillAppear(animated: false)`, `viewIsAppearing(animated: false)`,
/// `viewWillLayoutSubviews`, `viewDidLayoutSubviews`, `viewDidAppear(animated: false)`
/// (forwarded to visible children after each of the root's own callbacks; a sheet presented
/// before the window is shown appears with its presenter).
///
/// ```swift
/// let window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
/// window.rootViewController = NavigationController(rootViewController: InboxController())
/// window.makeKeyAndVisible()  // the root appears, then its visible children
/// window.resize(to: Size(width: 844, height: 390))  // viewWillTransition(to:with:) on screen
/// ```
@MainActor
public final class Window {
    /// The application that owns this window. Weak: the application owns its windows.
    @exclusivity(unchecked) public private(set) weak var application: Application?

    /// The window's size in its current orientation.
    public internal(set) var size: Size

    /// The window's current orientation.
    @exclusivity(unchecked) public internal(set) var orientation: InterfaceOrientation

    /// Whether ``makeKeyAndVisible()`` was called and ``close()`` was not.
    @exclusivity(unchecked) public private(set) var isVisible = false

    /// Whether ``close()`` was called.
    @exclusivity(unchecked) public private(set) var isClosed = false

    /// The duration passed to `willRotate(to:duration:)`.
    public var rotationDuration: Double = 0.3

    // Like the controllers' links, these change only by plain assignments in the engine: the
    // runtime's exclusivity check on each read is left out.
    @exclusivity(unchecked) private var root: ViewController?

    /// The identifier of the scene this window shows, stable across launches (UIKit's
    /// `UISceneSession.persistentIdentifier`): the restoration layer keys the window's
    /// hierarchy archive and its controllers' restoration paths by it.
    public let sceneIdentifier: String

    /// The scene identifier of an application's first window, unless it is given another one.
    public static let defaultSceneIdentifier = "main"

    /// What the layer that chose the window's scene keeps on it (the restoration layer's claim
    /// on the scene, let go as the window closes, or when it is released).
    var sceneClaim: AnyObject?

    /// Creates a window of `size` in `orientation` and adds it to `application`'s windows.
    ///
    /// In an application that saves into a store (`Application(store:)`), the window claims its
    /// scene for this process until it closes (or the process ends, however it ends), so that a
    /// second instance of the app on the same database never shows, and saves over, the same
    /// scene. The scene a window gets, and why, is its `sceneAssignment`; a window turned away
    /// from a held scene is also logged and reported to the restoration coordinator's
    /// `errorHandler`.
    ///
    /// - Parameters:
    ///   - size: The window's size in points.
    ///   - orientation: The interface orientation it starts in.
    ///   - sceneIdentifier: The scene the window shows. Pass the identifier of a scene
    ///     a previous launch saved (see `Application.savedSceneIdentifiers()`) to restore it.
    ///     When `nil`, the window gets ``defaultSceneIdentifier`` if no open window of the
    ///     application has it (and, with a store, no other live process holds it); else the
    ///     first saved scene that no window has and no other process holds, in the order
    ///     `Application.savedSceneIdentifiers()` lists them; else the first of `window1`,
    ///     `window2`, … that no window has, no process holds and no saved scene uses.
    ///     So an app that creates the same windows in the same order at every launch finds its
    ///     scenes again without naming them, and a second instance finds the scenes of the
    ///     instances that are gone before it starts a new one.
    ///   - whenHeld: What the window does when the scene it would show is held by another live
    ///     process (only with a store). By default it shows another scene, chosen as for a
    ///     window given no identifier, except that a window given an identifier gets a new
    ///     scene (`window1`, …) rather than another saved one.
    ///   - application: The application whose windows it joins.
    public init(
        size: Size, orientation: InterfaceOrientation = .portrait, sceneIdentifier: String? = nil,
        whenHeld: SceneConflictPolicy = .openAnotherScene, application: Application
    ) {
        self.size = size
        self.orientation = orientation
        self.application = application
        let openHere = application.windows.map(\.sceneIdentifier)
        if let assigner = application.sceneAssigner {
            let assigned = assigner.assignScene(requested: sceneIdentifier, policy: whenHeld, openHere: openHere)
            self.sceneIdentifier = assigned.identifier
            sceneClaim = assigned.claim
        } else if let sceneIdentifier {
            self.sceneIdentifier = sceneIdentifier
        } else {
            self.sceneIdentifier = Self.firstFreeSceneIdentifier(openHere: openHere) { _ in true }
        }
        application.windows.append(self)
    }

    /// ``defaultSceneIdentifier`` when no open window of the application has it, else the first
    /// of `window1`, `window2`, … that none has and `isFree` accepts.
    static func firstFreeSceneIdentifier(openHere: [String], isFree: (String) -> Bool) -> String {
        if !openHere.contains(defaultSceneIdentifier), isFree(defaultSceneIdentifier) { return defaultSceneIdentifier }
        var number = 1
        while openHere.contains("window\(number)") || !isFree("window\(number)") { number += 1 }
        return "window\(number)"
    }

    /// The window's bounds: its size at the origin.
    public var bounds: Rect { Rect(origin: .zero, size: size) }

    /// Whether this is its application's key window.
    public var isKeyWindow: Bool { application?.keyWindow === self }

    /// The controller at the root of the window's hierarchy.
    ///
    /// Replacing it on a visible window is a transition (not animated): the new root's view
    /// loads if needed, then the old top controller `viewWillDisappear`, new root
    /// `viewWillAppear`, its layout, old `viewDidDisappear`, new `viewDidAppear`.
    public var rootViewController: ViewController? {
        get { root }
        set { setRootViewController(newValue) }
    }

    /// The controller on screen: the root, or the top of the chain it presents.
    public var topViewController: ViewController? {
        guard var top = root else { return nil }
        while let next = top.presentedStorage { top = next }
        return top
    }

    /// Every controller in the window: the root and its children (navigation stacks, tabs,
    /// child controllers) depth first, then each presented controller and its children.
    public var allViewControllers: [ViewController] {
        root?.subtree ?? []
    }

    /// Shows the window and makes it the application's key window. The first time, the
    /// root controller (or the top of its presentations) appears.
    public func makeKeyAndVisible() {
        guard !isClosed else { return }
        application?.keyWindow = self
        guard !isVisible else { return }
        isVisible = true
        ViewController.transition(from: [], to: visibleLayers, animated: false, removeOutgoingView: false)
    }

    /// Changes the window's size. Visible controllers get the size transition's callbacks
    /// (see ``rotate(to:)``, without the rotation ones), and those whose geometry changes
    /// `viewWillLayoutSubviews` and `viewDidLayoutSubviews`; hidden ones lay out when they
    /// next appear.
    public func resize(to newSize: Size) {
        guard newSize != size, !isClosed else { return }
        changeSize(to: newSize, orientation: orientation)
    }

    /// Rotates the window to `newOrientation` if allowed; returns whether it rotated (or
    /// already was in that orientation).
    ///
    /// Rotation happens only if the top controller's ``ViewController/shouldAutorotate`` is
    /// `true`, `newOrientation` is in its ``ViewController/supportedInterfaceOrientations``
    /// and in ``Application/supportedOrientations``. Then every controller on screen (parents
    /// before children, every visible presentation layer, both sides of a pending pop
    /// gesture) gets, in turn: `willRotate(to:duration:)` (deprecated), then
    /// `willTransition(to:with:)` when its size classes change, then
    /// `viewWillTransition(to:with:)`; the size swaps between portrait and landscape;
    /// `traitCollectionDidChange(_:)` where the traits changed; each lays out; the
    /// coordinator's alongside animations run; each gets `didRotate(from:)` (deprecated);
    /// the coordinator's completions run. A refused rotation sends nothing.
    @discardableResult
    public func rotate(to newOrientation: InterfaceOrientation) -> Bool {
        guard !isClosed else { return false }
        if newOrientation == orientation { return true }
        let top = topViewController
        if let top {
            guard top.shouldAutorotate, top.supportedInterfaceOrientations.includes(newOrientation) else {
                return false
            }
        }
        if let application, !application.supportedOrientations.includes(newOrientation) { return false }
        let newSize = orientation.isLandscape != newOrientation.isLandscape ? size.transposed : size
        changeSize(to: newSize, orientation: newOrientation)
        return true
    }

    /// Closes the window: the visible controllers disappear (not animated), the window
    /// releases its root (so the hierarchy deallocates unless held elsewhere) and leaves
    /// its application's windows.
    public func close() {
        guard !isClosed else { return }
        settleTransitions()
        if isVisible {
            ViewController.transition(
                from: visibleLayers.reversed(), to: [], animated: false, removeOutgoingView: false)
        }
        isVisible = false
        isClosed = true
        root?.hostingWindow = nil
        // Released after the assignment's access ends: deinits it runs may read the window.
        let closedRoot = root
        root = nil
        withExtendedLifetime(closedRoot) {}
        if let application {
            application.windows.removeIdentical(self)
            if application.keyWindow === self { application.keyWindow = nil }
        }
        notifyHierarchyChange()
    }

    private func setRootViewController(_ newRoot: ViewController?) {
        guard newRoot !== root, !isClosed else { return }
        if let newRoot {
            guard newRoot.parent == nil, newRoot.presentingStorage == nil, newRoot.hostingWindow == nil else {
                newRoot.reportViolation(nil, reason: "cannot become a window's root: it is already in a hierarchy")
                return
            }
        }
        settleTransitions()
        let oldRoot = root
        let oldLayers = visibleLayers
        newRoot?.hostingWindow = self
        root = newRoot
        newRoot?.adopt(application)
        if isVisible {
            // The old hierarchy stays reachable from this window (oldRoot.hostingWindow)
            // until it has disappeared.
            ViewController.transition(
                from: oldLayers.reversed(), to: visibleLayers, animated: false, removeOutgoingView: false)
        }
        oldRoot?.hostingWindow = nil
        notifyHierarchyChange()
    }

    /// Lays out the visible hierarchy: each visible presentation layer's view gets its frame.
    func layoutVisible() {
        guard isVisible else { return }
        for layer in visibleLayers { layer.layoutForAppearance() }
    }

    /// Cancels pending interactive transitions anywhere in the window.
    func settleTransitions() {
        for controller in allViewControllers { controller.settleTransitions() }
    }

    func notifyHierarchyChange() {
        guard let application else { return }
        for observer in application.observers { observer.hierarchyDidChange(in: self) }
    }
}
