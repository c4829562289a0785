extension ViewController {
    /// Gives this controller `cache` to purge on memory warnings (warning trims, critical
    /// empties). The controller keeps it alive; it leaves the global
    /// ``RecreatableCaches/shared`` registry, so it is purged once, by its owner.
    public func register(_ cache: any PurgeableCache) {
        guard !ownedCaches.contains(where: { $0 === cache }) else { return }
        RecreatableCaches.shared.unregister(cache)
        ownedCaches.append(cache)
    }

    /// The caches given to this controller with ``register(_:)``.
    public var caches: [any PurgeableCache] { ownedCaches }

    /// Purges this controller's caches for `level`; returns the cost released.
    @discardableResult
    public func purgeCaches(for level: MemoryPressureLevel) -> Int {
        ownedCaches.reduce(0) { $0 + $1.purge(for: level) }
    }
}
