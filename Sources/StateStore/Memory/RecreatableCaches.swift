import Synchronization

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
    }

    private let entries = Mutex<[ObjectIdentifier: WeakCache]>([:])

    public init() {}

    /// Adds a cache (held weakly). Registering twice is harmless.
    public func register(_ cache: any PurgeableCache) {
        entries.withLock { $0[ObjectIdentifier(cache)] = WeakCache(cache: cache) }
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
        entries.withLock { entries in
            entries = entries.filter { $0.value.cache != nil }
            return entries.values.compactMap(\.cache)
        }
    }

    /// The total cost held by all registered caches.
    public var totalCost: Int {
        caches.reduce(0) { $0 + $1.totalCost }
    }

    /// Purges every registered cache for `level` and returns the total cost released.
    @discardableResult
    public func purgeAll(for level: MemoryPressureLevel) -> Int {
        // Purge outside the registry's lock: each cache takes its own.
        caches.reduce(0) { $0 + $1.purge(for: level) }
    }
}
