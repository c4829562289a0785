/// A registry of caches to purge together when memory runs short.
///
/// Caches register weakly: a cache that is released simply drops out. ``shared`` is the
/// process-wide registry that ``RecreatableCache`` joins by default; make your own instances to
/// group caches (per controller, per test).
public final class RecreatableCaches: Sendable {
    /// The process-wide registry.
    public static let shared = RecreatableCaches()

    private struct WeakCache {
        weak var cache: (any PurgeableCache)?
        /// How many live controllers hold the cache (``ViewController/register(_:)``): while
        /// any does, ``purgeAll(for:)`` leaves it to them.
        var claims = 0
    }

    private let entries = Lock<[ObjectIdentifier: WeakCache]>([:])

    /// An empty registry, separate from ``shared``.
    public init() {}

    /// Adds a cache (held weakly). Registering twice is harmless.
    public func register(_ cache: any PurgeableCache) {
        entries.withLock { entries in
            let id = ObjectIdentifier(cache)
            if entries[id]?.cache === cache { return }
            entries[id] = WeakCache(cache: cache)
        }
    }

    /// A controller holds the cache `id` names, if registered here: purges leave it to the controller.
    func claim(_ id: ObjectIdentifier) {
        entries.withLock { $0[id]?.claims += 1 }
    }

    /// A controller that held the cache `id` names is gone.
    func releaseClaim(_ id: ObjectIdentifier) {
        entries.withLock { entries in
            if let claims = entries[id]?.claims, claims > 0 { entries[id]?.claims = claims - 1 }
        }
    }

    /// Removes a cache.
    public func unregister(_ cache: any PurgeableCache) {
        unregister(ObjectIdentifier(cache))
    }

    func unregister(_ id: ObjectIdentifier) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }

    /// The caches still alive.
    public var caches: [any PurgeableCache] {
        // Each strong reference taken under the lock goes into the array, which is released
        // outside it: a reference that turned out to be a cache's last would run its deinit,
        // whose unregister takes this lock, under the lock.
        entries.withLock { entries in
            var alive: [any PurgeableCache] = []
            var released: [ObjectIdentifier] = []
            for (id, entry) in entries {
                if let cache = entry.cache { alive.append(cache) } else { released.append(id) }
            }
            for id in released { entries.removeValue(forKey: id) }
            return alive
        }
    }

    /// The total cost held by all registered caches (at most `Int.max`).
    public var totalCost: Int {
        caches.reduce(0) { $0.addingClamped($1.totalCost) }
    }

    /// Purges every registered cache for `level`, but those a live controller holds
    /// (``ViewController/register(_:)``), which its memory warning purges; returns the total
    /// cost released (at most `Int.max`).
    @discardableResult
    public func purgeAll(for level: MemoryPressureLevel) -> Int {
        purgeUnclaimed(for: level).released
    }

    /// ``purgeAll(for:)``, also saying how many caches released anything.
    func purgeUnclaimed(for level: MemoryPressureLevel) -> (released: Int, caches: Int) {
        // The strong references are taken under the lock and released outside it (see ``caches``).
        let unclaimed: [any PurgeableCache] = entries.withLock { entries in
            entries.values.compactMap { $0.claims == 0 ? $0.cache : nil }
        }
        // Purge outside the registry's lock: each cache takes its own.
        var released = 0, purged = 0
        for cache in unclaimed {
            let cost = cache.purge(for: level)
            released = released.addingClamped(cost)
            if cost > 0 { purged += 1 }
        }
        return (released, purged)
    }
}

extension FixedWidthInteger {
    /// `self + other`, held at `max` or `min` where the sum would not fit: sums of cache
    /// costs, which callers choose freely.
    func addingClamped(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
