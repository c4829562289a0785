/// The unit of an app's interface, with UIKit's lifecycle.
///
/// Subclass it and override the callbacks; the lifecycle engine (windows, navigation and
/// tab bar controllers, presentation, child containment) calls them in the order UIKit
/// does:
///
/// - ``view`` is created lazily: the first access sends ``loadView()`` then ``viewDidLoad()``.
/// - Appearance: ``viewWillAppear(_:)`` → ``viewIsAppearing(_:)`` → ``viewDidAppear(_:)``,
///   ``viewWillDisappear(_:)`` → ``viewDidDisappear(_:)``; the state machine is
///   ``LifecycleState``. Illegal moves and misuse are reported as ``LifecycleViolation``s
///   and change nothing.
/// - Layout: ``viewWillLayoutSubviews()`` → ``viewDidLayoutSubviews()`` whenever the view's
///   geometry is first known or changes (first appearance, resize, rotation), after
///   `viewWillAppear`.
/// - Size and traits: ``willTransition(to:with:)``, ``viewWillTransition(to:with:)`` and
///   ``traitCollectionDidChange(_:)`` when the window rotates or resizes.
/// - ``didReceiveMemoryWarning(level:)`` reaches every live controller, visible or not.
///
/// ## Differences from UIKit
///
/// - The engine sends `willMove(toParent:)` and `didMove(toParent:)` itself for
///   ``addChild(_:)`` and ``removeFromParent()`` too.
/// - Appearance, size and trait callbacks are sent to every controller concerned by the
///   engine; overrides need not call `super` to reach the children.
/// - ``supportedInterfaceOrientations`` defaults to `.all`, ``modalPresentationStyle`` to
///   ``ModalPresentationStyle/fullScreen``; ``ModalPresentationStyle`` lists the styles
///   that exist, how sheets differ, and that a controller presented over a current
///   context presents nothing itself.
/// - A push, pop, tab switch, presentation or dismissal asked for while another transition
///   is sending its callbacks runs once that transition has finished (UIKit refuses a
///   presentation while one is in progress); a pop gesture cannot begin then.
/// - Misuse is a reported ``LifecycleViolation`` where UIKit raises an exception.
/// - Presenting a controller that does not support the window's orientation does not
///   rotate the window (there is no `preferredInterfaceOrientationForPresentation`).
/// - The user's gestures are methods: ``PresentationController/dismissInteractively()``,
///   ``TabBarController/tapTabBarItem(at:)``, ``NavigationController/beginInteractivePop()``.
/// - A ``TransitionCoordinator`` has no animation clock: its animations and completions run
///   at once, in order; it is its own context. Likewise
///   ``transition(from:to:duration:animations:completion:)`` does not wait for `duration`
///   and completes after the "did" callbacks.
/// - ``TraitCollection`` holds the two size classes, from the window's size alone; first
///   traits are not a change.
/// - ``viewIsAppearing(_:)`` comes before the controller's own layout callbacks, or after
///   the layout pass when none is needed.
/// - ``NavigationControllerDelegate``: `willShow` before the appearance callbacks,
///   `didShow` after `didMove(toParent:)`, none for an abandoned pop gesture.
/// - There is no split view controller: ``showDetailViewController(_:sender:)`` presents.
/// - ``View/setNeedsLayout()`` lays out on the main actor's next turn, only in a visible window.
///
/// Every callback is reported to the application's ``LifecycleObserver``s before and after
/// the override runs. Overrides need not call `super` (the base implementations do
/// nothing, except ``loadView()`` which creates an empty ``View``).
///
/// A controller registers (weakly) with ``Application/current`` when created, and with a
/// window's application when it enters that window's hierarchy; that application
/// delivers its memory warnings and records its callbacks in its ``LifecycleTrace``.
///
/// Ownership: a parent owns its ``children``, a presenter owns its
/// ``presentedViewController``, a window owns its root. ``parent`` and
/// ``presentingViewController`` are weak, so a controller that leaves the hierarchy is
/// deallocated once nothing else holds it.
///
/// ```swift
/// final class InboxViewController: ViewController {
///     let list = View()
///
///     override func viewDidLoad() {
///         super.viewDidLoad()
///         view.addSubview(list)  // once, when the view is first needed
///     }
///     override func viewWillAppear(_ animated: Bool) {
///         super.viewWillAppear(animated)
///         // each time the screen is about to show: refresh what changed while it was away
///     }
///     override func didReceiveMemoryWarning(level: MemoryPressureLevel) {
///         super.didReceiveMemoryWarning(level: level)  // purges the caches given to register(_:)
///     }
/// }
/// ```
@MainActor
open class ViewController {
    // MARK: Identity

    // The identifiers skip the runtime's dynamic exclusivity check: plain values, main-actor
    // isolated, never accessed in place across a call, and read for every restoration path.

    /// The identifier this controller was instantiated with by a ``Storyboard``, if any.
    @exclusivity(unchecked) public internal(set) var storyboardIdentifier: String?

    /// The storyboard that instantiated this controller, if any.
    public internal(set) weak var storyboard: Storyboard?

    @exclusivity(unchecked) private var explicitRestorationIdentifier: String?

    /// The name under which this controller's state is saved and restored, and under which
    /// it appears in a ``LifecycleTrace``.
    ///
    /// Defaults to ``storyboardIdentifier``; setting `nil` restores that default.
    open var restorationIdentifier: String? {
        get { explicitRestorationIdentifier ?? storyboardIdentifier }
        set { explicitRestorationIdentifier = newValue }
    }

    // MARK: State

    // The state marked `@exclusivity(unchecked)` here and below, like the hierarchy links,
    // only the engine changes, each by an assignment during which nothing runs (no observer,
    // no `deinit`): no access to it overlaps another, and the runtime's exclusivity check on
    // each of the many reads is left out.

    /// Where the controller is in its appearance cycle.
    @exclusivity(unchecked) public internal(set) var lifecycleState: LifecycleState = .initialized

    /// `true` between `viewWillAppear` and `viewDidAppear` of a push onto a navigation
    /// stack or an addition as a child.
    public internal(set) var isMovingToParent = false
    /// `true` between `viewWillDisappear` and `viewDidDisappear` of a pop or a removal from a parent.
    public internal(set) var isMovingFromParent = false
    /// `true` while the controller is being presented.
    public internal(set) var isBeingPresented = false
    /// `true` while the controller is being dismissed.
    public internal(set) var isBeingDismissed = false

    // MARK: View

    @exclusivity(unchecked) var loadedView: View?
    @exclusivity(unchecked) var isLoadingView = false
    @exclusivity(unchecked) var pendingAnimated = false

    // MARK: Hierarchy links

    // The links are main-actor state that only the engine changes, each by a plain assignment
    // (or an append or removal that calls nothing out): no access to them overlaps another,
    // and the runtime's exclusivity check on each of the many reads is left out.

    /// The containing controller, if any.
    @exclusivity(unchecked) public internal(set) weak var parent: ViewController?

    /// The contained controllers. For a ``NavigationController`` this is the stack, for a
    /// ``TabBarController`` the tabs.
    @exclusivity(unchecked) public internal(set) var children: [ViewController] = []

    /// Strong: a presenter owns what it presents. Only set on the root of a containment
    /// tree, or on a controller that defines the context of an over-current-context presentation.
    @exclusivity(unchecked) var presentedStorage: ViewController?
    /// Caches this controller owns and purges on memory warnings.
    var ownedCaches: [any PurgeableCache] = []
    /// This controller's holds on those of ``ownedCaches`` in the shared registry.
    var cacheClaims: [CacheClaim] = []
    /// A slot the layer that observes the lifecycle owns (the restoration layer keeps its
    /// record of this instance here), kept on the controller so that finding it costs no lookup
    /// and dies with the controller. The lifecycle never reads it.
    @exclusivity(unchecked) var observerSlot: AnyObject?
    /// Weak: only set on the root of a presented containment tree.
    @exclusivity(unchecked) weak var presentingStorage: ViewController?
    /// Set on a window's root controller only.
    @exclusivity(unchecked) weak var hostingWindow: Window?
    /// The application whose registry holds this controller (a plain assignment as it
    /// registers or is adopted: no exclusivity check).
    @exclusivity(unchecked) weak var registeredApplication: Application?
    /// Made on first access of ``presentationController``.
    var storedPresentationController: PresentationController?
    /// Set on a child a hierarchy rebuild added to a plain container: until it first appears, a
    /// child the container adds itself under the same restoration identifier takes its place
    /// (``addChild(_:)``).
    @exclusivity(unchecked) var placedByRebuild = false
    /// Whether some of ``children`` may be ``placedByRebuild`` and not yet shown.
    @exclusivity(unchecked) var holdsRebuiltChildren = false
    /// Set on a child that ``transition(from:to:duration:animations:completion:)`` took off
    /// screen: its container does not forward appearance callbacks to it.
    @exclusivity(unchecked) var isHiddenByContainer = false
    /// Whether `viewIsAppearing` was sent since the last `viewWillAppear`.
    @exclusivity(unchecked) var sentIsAppearing = false
    /// The traits the controller last had while on screen; `nil` before its first appearance.
    @exclusivity(unchecked) var lastTraitCollection: TraitCollection?
    /// The handlers given to ``registerForTraitChanges(_:handler:)``, in registration order.
    var traitChangeRegistrations: [TraitChangeRegistration] = []

    // MARK: Presentation

    /// How the controller is shown when it is presented; read when ``present(_:animated:completion:)``
    /// is called. Defaults to ``ModalPresentationStyle/fullScreen``.
    ///
    /// UIKit's default since iOS 13 is a sheet (`.automatic`); StateStore keeps full screen,
    /// under which the presenter disappears and so saves its state. See
    /// ``ModalPresentationStyle`` for what each style sends and when the presenter's state
    /// is saved.
    open var modalPresentationStyle: ModalPresentationStyle = .fullScreen

    /// Whether the user may not dismiss this sheet by swiping it down
    /// (``PresentationController/dismissInteractively()``). Defaults to `false`.
    ///
    /// Consulted on the presented controller and the controllers visible in it (the top of a
    /// presented navigation controller, say). Programmatic dismissal is never prevented.
    open var isModalInPresentation = false

    /// Whether a controller presented ``ModalPresentationStyle/overCurrentContext`` from this
    /// controller or one it contains covers this controller's view only. Defaults to `false`.
    ///
    /// The nearest such controller (this one, else its ancestors) becomes the presenter; with
    /// none, the root of the window's hierarchy does.
    open var definesPresentationContext = false

    // MARK: Creation

    /// Creates a controller and registers it, weakly, with ``Application/current``.
    public init() {
        Application.current?.register(self)
    }

    // MARK: Callbacks

    /// Sent when a ``Storyboard`` instantiates the controller, before its view is loaded.
    open func awakeFromNib() {}

    /// Creates the controller's view. The default creates an empty ``View``; overrides
    /// assign ``view`` and need not call `super`.
    open func loadView() {
        view = View()
    }

    /// Sent once the view is loaded.
    open func viewDidLoad() {}

    /// The view is about to be shown.
    open func viewWillAppear(_ animated: Bool) {}
    /// The view is shown.
    open func viewDidAppear(_ animated: Bool) {}
    /// The view is about to be hidden. This is where a controller commits its edits to its state.
    open func viewWillDisappear(_ animated: Bool) {}
    /// The view is hidden.
    open func viewDidDisappear(_ animated: Bool) {}

    /// The view's geometry was first known or changed, and it is about to lay out.
    open func viewWillLayoutSubviews() {}
    /// The view laid out.
    open func viewDidLayoutSubviews() {}

    /// Memory is short: release what can be recreated. Reaches every live controller,
    /// visible or not.
    ///
    /// The default purges the caches given to this controller with ``register(_:)``; an
    /// override that keeps that behaviour calls `super`.
    open func didReceiveMemoryWarning(level: MemoryPressureLevel) {
        purgeCaches(for: level)
    }

    /// Whether the window may rotate while this controller is on top. Defaults to `true`.
    open var shouldAutorotate: Bool { true }

    /// The orientations this controller supports while on top. Defaults to ``InterfaceOrientationMask/all``.
    open var supportedInterfaceOrientations: InterfaceOrientationMask { .all }

    /// The window is about to rotate to `toInterfaceOrientation`; sent before
    /// ``viewWillTransition(to:with:)``.
    @available(*, deprecated, message: "Use viewWillTransition(to:with:)")
    open func willRotate(to toInterfaceOrientation: InterfaceOrientation, duration: Double) {}
    /// The window rotated from `fromInterfaceOrientation`; layout already happened.
    @available(*, deprecated, message: "Use viewWillTransition(to:with:) and the coordinator's completion")
    open func didRotate(from fromInterfaceOrientation: InterfaceOrientation) {}

    /// The view is about to appear, is in its window with its final geometry and traits,
    /// and has not laid out its subviews yet (UIKit's `viewIsAppearing(_:)`).
    ///
    /// Sent on every appearance, after ``viewWillAppear(_:)`` and once the container has
    /// given the view its frame, before ``viewWillLayoutSubviews()`` (when a layout is
    /// needed) and ``viewDidAppear(_:)``. A cancelled appearance (an abandoned pop gesture)
    /// may have received it.
    open func viewIsAppearing(_ animated: Bool) {}

    /// The window is about to change size (a rotation or a resize) to `size`.
    ///
    /// Sent to every controller on screen, parents before children, before the size
    /// changes; register work with `coordinator`'s
    /// ``TransitionCoordinator/animate(alongsideTransition:completion:)``: the animations run
    /// once the new size is laid out, the completions after every controller was told. The
    /// engine sends it to each controller itself: an override need not call `super`.
    open func viewWillTransition(to size: Size, with coordinator: TransitionCoordinator) {}

    /// The controller's ``traitCollection`` is about to change to `newCollection` (its size
    /// classes change with the window's size). Sent before ``viewWillTransition(to:with:)``.
    open func willTransition(to newCollection: TraitCollection, with coordinator: TransitionCoordinator) {}

    /// The controller's ``traitCollection`` changed from `previousTraitCollection`; sent
    /// before the layout that follows.
    ///
    /// A hidden controller is told when it next appears, after `viewWillAppear`. The first
    /// traits a controller gets, on its first appearance, are not a change: it is not sent then.
    open func traitCollectionDidChange(_ previousTraitCollection: TraitCollection?) {}

    /// Whether this controller forwards its appearance callbacks to its children. Defaults
    /// to `true`.
    ///
    /// A custom container that returns `false` calls
    /// ``beginAppearanceTransition(_:animated:)`` and ``endAppearanceTransition()`` on its
    /// children itself, and ``addChild(_:)``/``removeFromParent()`` send the child no
    /// appearance callbacks. The built-in containers always forward.
    open var shouldAutomaticallyForwardAppearanceMethods: Bool { true }

    /// Sent before the controller is added to (`parent` non-nil) or removed from (`nil`)
    /// a container.
    ///
    /// The engine sends both `willMove(toParent:)` and
    /// ``didMove(toParent:)`` itself for ``addChild(_:)``, ``removeFromParent()`` and the
    /// built-in containers, so observers see every containment change; do not call them
    /// yourself.
    open func willMove(toParent parent: ViewController?) {}

    /// Sent after the controller was added to (`parent` non-nil) or removed from (`nil`)
    /// a container, once any appearance transition finished.
    open func didMove(toParent parent: ViewController?) {}

    // MARK: Showing

    /// Shows `viewController` the way the nearest container that knows how does, as UIKit's
    /// `show(_:sender:)`: the default asks the parent; a ``NavigationController`` pushes it
    /// (animated); a controller without a parent presents it (animated, in its
    /// ``modalPresentationStyle``). A custom container overrides it to show its own way.
    open func show(_ viewController: ViewController, sender: Any?) {
        if let parent {
            parent.show(viewController, sender: sender)
        } else {
            present(viewController, animated: true)
        }
    }

    /// Shows `viewController` as the detail of a master–detail interface, as UIKit's
    /// `showDetailViewController(_:sender:)`: the default asks the parent, and a controller
    /// without a parent presents it (animated), which is what UIKit does outside a split view
    /// controller. StateStore has no split view controller; a custom container overrides it.
    open func showDetailViewController(_ viewController: ViewController, sender: Any?) {
        if let parent {
            parent.showDetailViewController(viewController, sender: sender)
        } else {
            present(viewController, animated: true)
        }
    }

    // MARK: Engine hooks (overridden by the built-in containers)

    /// The children that receive forwarded appearance callbacks: all of them for a plain
    /// container, the top one for a navigation controller, the selected one for a tab bar.
    var appearanceChildren: [ViewController] {
        // Usually none is hidden: the children themselves, without a copy that retains each.
        children.contains(where: \.isHiddenByContainer) ? children.filter { !$0.isHiddenByContainer } : children
    }

    /// The controllers this one forwards appearance callbacks to: its appearance children,
    /// then what it presents over its current context
    /// (``ModalPresentationStyle/overCurrentContext``), which appears and disappears with it.
    final var forwardedChildren: [ViewController] {
        guard let embedded = contextPresentedViewController else { return appearanceChildren }
        return appearanceChildren + [embedded]
    }

    /// What this controller presents over its current context, when it is not a
    /// containment root (a root's presentations are layers of its window).
    final var contextPresentedViewController: ViewController? {
        // The strong field first: most controllers present nothing, and reading the weak
        // `parent` costs more.
        guard let presented = presentedStorage, parent != nil else { return nil }
        return presented
    }

    /// The children whose views are on screen now: the appearance children that are
    /// appearing or appeared, and both sides of a pending interactive pop.
    var onScreenChildren: [ViewController] {
        let forwarded = forwardedChildren
        // Usually all are: the same array, without a copy that retains each.
        return forwarded.allSatisfy(\.lifecycleState.isVisibleOrAppearing)
            ? forwarded : forwarded.filter { $0.lifecycleState.isVisibleOrAppearing }
    }

    /// The frame a visible child's view gets inside this controller's view.
    func frame(forChild child: ViewController) -> Rect {
        loadedView?.bounds ?? .zero
    }

    /// Called before a structural change: finishes or cancels pending interactive transitions.
    func settleTransitions() {}
}
