/// A pop in progress, driven by the user's gesture; returned by
/// ``NavigationController/beginInteractivePop()``.
///
/// Call ``finish()`` when the gesture completes or ``cancel()`` when it is abandoned.
/// Each works once; later calls do nothing.
@MainActor
public final class InteractiveTransition {
    /// Where the transition is.
    public enum State: Sendable, Hashable {
        /// Begun; waiting for ``InteractiveTransition/finish()`` or ``InteractiveTransition/cancel()``.
        case interactive
        /// Finished: the top controller was popped.
        case finished
        /// Cancelled: the stack is as before.
        case cancelled
        /// Could not begin: the stack had fewer than two controllers.
        case unavailable
    }

    /// Where the transition is.
    public private(set) var state: State

    /// The controller being popped.
    public private(set) weak var from: ViewController?
    /// The controller being uncovered.
    public private(set) weak var to: ViewController?

    /// The coordinator the controllers of this pop see as their
    /// ``ViewController/transitionCoordinator`` while it is pending: register a completion
    /// there and read ``TransitionCoordinator/isCancelled`` to learn how the gesture ended.
    public let coordinator = TransitionCoordinator(isAnimated: true, isInteractive: true, transitionDuration: 0.3)

    weak var navigationController: NavigationController?
    let onScreen: Bool

    init(
        navigationController: NavigationController, from: ViewController?, to: ViewController?, state: State,
        onScreen: Bool
    ) {
        self.navigationController = navigationController
        self.from = from
        self.to = to
        self.state = state
        self.onScreen = onScreen
    }

    /// Completes the pop: top `viewDidDisappear`, uncovered `viewDidAppear`, then the popped
    /// controller's `willMove(toParent: nil)` and `didMove(toParent: nil)`, the navigation
    /// controller's delegate `didShow`, and the ``coordinator``'s completions
    /// (``TransitionCoordinator/isCancelled`` `false`). Called during another transition, it
    /// runs once that one has finished; after a cancel it does nothing.
    public func finish() {
        guard state == .interactive else { return }
        state = .finished
        navigationController?.finishInteractivePop(self)
    }

    /// Abandons the pop: uncovered `viewWillDisappear`, `viewDidDisappear`, then top
    /// `viewWillAppear`, `viewDidAppear`, then the ``coordinator``'s completions
    /// (``TransitionCoordinator/isCancelled`` `true`).
    public func cancel() {
        guard state == .interactive else { return }
        state = .cancelled
        navigationController?.cancelInteractivePop(self)
    }
}
