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
        keep(dropping: controller)
    }

    /// The live controllers, oldest registration first.
    mutating func live() -> [ViewController] {
        prune()
        var controllers: [ViewController] = []
        controllers.reserveCapacity(entries.count)
        for entry in entries {
            if let controller = entry.controller { controllers.append(controller) }
        }
        return controllers
    }

    private mutating func prune() {
        keep(dropping: nil)
    }

    /// Keeps the live entries, in order, but `dropped`'s. A loop over the entries in place, not
    /// `removeAll(where:)`: a main-actor closure checks its executor at each call, once per entry.
    private mutating func keep(dropping dropped: ViewController?) {
        var kept = 0
        for index in entries.indices {
            guard let controller = entries[index].controller, controller !== dropped else { continue }
            if kept != index { entries[kept] = entries[index] }
            kept += 1
        }
        entries.removeSubrange(kept...)
    }
}
