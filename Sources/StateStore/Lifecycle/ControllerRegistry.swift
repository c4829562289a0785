/// The live controllers of an application, held weakly, in registration order.
///
/// Dead entries are pruned when the list has doubled since the last pruning and whenever
/// the live controllers are listed, so registering stays amortised O(1) and nothing is
/// kept alive.
@MainActor
struct ControllerRegistry {
    private struct Entry {
        weak var controller: ViewController?
    }

    private var entries: [Entry] = []
    private var pruneThreshold = 64

    mutating func insert(_ controller: ViewController) {
        entries.append(Entry(controller: controller))
        if entries.count >= pruneThreshold {
            prune()
            pruneThreshold = max(64, entries.count * 2)
        }
    }

    mutating func remove(_ controller: ViewController) {
        entries.removeAll { $0.controller === controller || $0.controller == nil }
    }

    /// The live controllers, oldest registration first.
    mutating func live() -> [ViewController] {
        prune()
        return entries.compactMap(\.controller)
    }

    private mutating func prune() {
        entries.removeAll { $0.controller == nil }
    }
}
