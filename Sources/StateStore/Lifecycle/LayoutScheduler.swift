/// Runs the layout passes that ``View/setNeedsLayout()`` asks for on the main actor's next
/// turn, as UIKit lays out on the next turn of the run loop.
///
/// Requests made during one turn are coalesced: the next turn lays out, once, the
/// hierarchy of each marked view whose controller is in a visible window.
@MainActor
enum LayoutScheduler {
    private static var pending: [ObjectIdentifier: WeakView] = [:]
    private static var isScheduled = false
    /// Dead entries are dropped when the table has doubled since the last sweep: O(1) per
    /// request amortised, and the table stays within twice the live views asking.
    private static var sweepThreshold = 1024

    private struct WeakView {
        weak var view: View?
    }

    static func schedule(_ view: View) {
        // Where the main actor never yields, passes never run: keep only live views.
        if pending.count >= sweepThreshold {
            pending = pending.filter { $0.value.view != nil }
            sweepThreshold = max(1024, pending.count * 2)
        }
        pending[ObjectIdentifier(view)] = WeakView(view: view)
        guard !isScheduled else { return }
        isScheduled = true
        Task { @MainActor in runPass() }
    }

    private static func runPass() {
        isScheduled = false
        let views = pending.values.compactMap(\.view)
        // A small table is kept for the next turn's requests (freed, the first request
        // allocated it again at every turn that laid out: each push, each pop); one a burst
        // grew is freed.
        pending.removeAll(keepingCapacity: pending.capacity <= 64)
        var laidOut = Set<ObjectIdentifier>()
        for view in views {
            var root = view
            while let superview = root.superview { root = superview }
            guard laidOut.insert(ObjectIdentifier(root)).inserted,
                let controller = root.viewController, controller.isInVisibleWindow
            else { continue }
            root.layoutIfNeeded()
        }
    }
}
