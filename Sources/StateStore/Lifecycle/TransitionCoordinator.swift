/// What a transition in progress tells the controllers it involves, and lets them run
/// alongside it, as UIKit's `UIViewControllerTransitionCoordinator`.
///
/// A coordinator is handed to ``ViewController/viewWillTransition(to:with:)`` and
/// ``ViewController/willTransition(to:with:)`` for a rotation or a resize, and is the
/// ``ViewController/transitionCoordinator`` of the controllers of an interactive pop while
/// it is pending. It is also the context its closures receive (UIKit passes a separate
/// context object).
@MainActor
public final class TransitionCoordinator {
    /// Whether the transition is animated.
    public let isAnimated: Bool
    /// Whether the user drives it (an interactive pop).
    public let isInteractive: Bool
    /// Its duration in seconds.
    public let transitionDuration: Double
    /// Whether it was cancelled: an interactive pop the user abandoned.
    public internal(set) var isCancelled = false
    /// Whether it finished, completed or cancelled.
    public internal(set) var isCompleted = false

    private var animations: [@MainActor (TransitionCoordinator) -> Void] = []
    private var animationsRan = false
    private var completions: [@MainActor (TransitionCoordinator) -> Void] = []

    init(isAnimated: Bool, isInteractive: Bool, transitionDuration: Double) {
        self.isAnimated = isAnimated
        self.isInteractive = isInteractive
        self.transitionDuration = transitionDuration
    }

    /// Registers `animation`, run with the transition once its final layout is known (at
    /// once if that time has passed), and `completion`, run once it finished (check
    /// ``isCancelled`` there). Returns `true`; registering after the transition finished
    /// runs nothing and returns `false`.
    @discardableResult
    public func animate(
        alongsideTransition animation: (@MainActor (TransitionCoordinator) -> Void)?,
        completion: (@MainActor (TransitionCoordinator) -> Void)? = nil
    ) -> Bool {
        guard !isCompleted else { return false }
        if let animation {
            if animationsRan { animation(self) } else { animations.append(animation) }
        }
        if let completion { completions.append(completion) }
        return true
    }

    /// Runs the registered animations, in order; an animation registered by one of them runs too.
    func runAnimations() {
        animationsRan = true
        var index = 0
        while index < animations.count {
            animations[index](self)
            index += 1
        }
        animations.removeAll()
    }

    /// Marks the transition finished and runs the registered completions, in order.
    func complete(cancelled: Bool) {
        guard !isCompleted else { return }
        isCancelled = cancelled
        isCompleted = true
        let pending = completions
        completions.removeAll()
        for completion in pending { completion(self) }
    }
}

extension ViewController {
    /// The coordinator of the transition this controller is part of now: a rotation or a
    /// resize of its window while the controllers are being told, or a pending interactive
    /// pop of its navigation controller (whose ``TransitionCoordinator/isCancelled`` says,
    /// in a completion, whether the user abandoned it). `nil` otherwise.
    public var transitionCoordinator: TransitionCoordinator? {
        if let coordinator = TransitionCoordinator.sizeTransition { return coordinator }
        var node: ViewController? = self
        while let current = node {
            if let navigation = current as? NavigationController, let pop = navigation.interactivePop,
                pop.state == .interactive, pop.onScreen
            {
                return pop.coordinator
            }
            node = current.parent
        }
        return nil
    }
}

extension TransitionCoordinator {
    /// The coordinator of the window size transition being told to controllers, if any.
    static var sizeTransition: TransitionCoordinator? {
        get { SizeTransitionSlot.current }
        set { SizeTransitionSlot.current = newValue }
    }
}

@MainActor
private enum SizeTransitionSlot {
    static var current: TransitionCoordinator?
}
