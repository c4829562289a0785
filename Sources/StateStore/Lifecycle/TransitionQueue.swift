/// Serialises structural transitions: a push, pop, tab switch, presentation or dismissal
/// asked for while another transition is sending its callbacks (from a `viewWillAppear`,
/// say) waits until that transition has finished, then runs with its own complete
/// sequence of callbacks.
///
/// Every call is synchronous on the main actor, so a nested request can only come from a
/// callback of the transition in progress; queued requests run in the order they were
/// made, as soon as the outermost transition returns.
@MainActor
enum TransitionQueue {
    /// How many transitions are sending callbacks now (nested scopes count each).
    private static var depth = 0
    private static var pending: [@MainActor () -> Void] = []
    private static var isDraining = false

    /// Whether a transition is sending callbacks now.
    static var isBusy: Bool { depth > 0 }

    /// Told once when the outermost scope under way ends (``notifyAtEnd(_:)``), before what
    /// was queued runs. Unchecked exclusivity: main-actor state, no access spans a call out.
    @exclusivity(unchecked) private static var endObservers: [any TransitionEndObserver] = []

    /// Runs `body` as a transition scope; when the outermost scope ends, tells the observers
    /// waiting for that and runs what was queued.
    static func run<Result>(_ body: () -> Result) -> Result {
        depth += 1
        let result = body()
        depth -= 1
        if depth == 0 {
            if !endObservers.isEmpty { notifyEndObservers() }
            drain()
        }
        return result
    }

    /// Has `observer` told when the outermost transition under way ends; only while one is
    /// (``isBusy``). An observer asks at most once per transition.
    static func notifyAtEnd(_ observer: any TransitionEndObserver) {
        endObservers.append(observer)
    }

    /// No observer asks again while told: no transition is under way then. Newest first (each
    /// observer only looks at its own work); taken off one by one, which keeps the array's
    /// room without the generic range removal `removeAll(keepingCapacity:)` runs.
    private static func notifyEndObservers() {
        while let observer = endObservers.popLast() { observer.transitionsDidEnd() }
    }

    /// Queues `body` to run once the transition in progress has finished.
    static func enqueue(_ body: @escaping @MainActor () -> Void) {
        pending.append(body)
    }

    /// Whether a structural change of `container` must wait: a transition is under way and
    /// the container is on screen or on its way on or off it.
    static func mustWait(for container: ViewController) -> Bool {
        guard isBusy else { return false }
        switch container.lifecycleState {
        case .initialized, .disappeared: return false
        case .appearing, .appeared, .disappearing: return container.isInVisibleWindow
        }
    }

    private static func drain() {
        guard !isDraining else { return }
        isDraining = true
        while !pending.isEmpty {
            let next = pending.removeFirst()
            next()
        }
        isDraining = false
    }
}

/// Something told when the outermost transition under way ends (see ``TransitionQueue/notifyAtEnd(_:)``).
@MainActor
protocol TransitionEndObserver: AnyObject {
    func transitionsDidEnd()
}
