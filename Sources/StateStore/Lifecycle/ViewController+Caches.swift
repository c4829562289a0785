extension ViewController {
    /// Gives this controller `cache` to purge on memory warnings (warning trims, critical
    /// empties). The controller keeps it alive. While the controller lives, the global
    /// ``RecreatableCaches/shared`` registry's purges leave the cache to it (its
    /// ``didReceiveMemoryWarning(level:)``); once the controller is gone, a cache of that
    /// registry is purged with the others again.
    public func register(_ cache: any PurgeableCache) {
        guard !ownedCaches.contains(where: { $0 === cache }) else { return }
        ownedCaches.append(cache)
        cacheClaims.append(CacheClaim(cache))
    }

    /// The caches given to this controller with ``register(_:)``.
    public var caches: [any PurgeableCache] { ownedCaches }

    /// Purges this controller's caches for `level`; returns the cost released. During an
    /// application's memory warning, a cache given to several controllers is purged once (a
    /// second `.warning` trim would halve it again).
    @discardableResult
    public func purgeCaches(for level: MemoryPressureLevel) -> Int {
        var released = 0
        for cache in ownedCaches where CachePurgePass.firstPurge(of: cache) {
            released = released.addingClamped(cache.purge(for: level))
        }
        return released
    }
}

/// A controller's hold on a cache of ``RecreatableCaches/shared``, given back when the
/// controller (which keeps it in ``ViewController/cacheClaims``) goes.
final class CacheClaim: Sendable {
    let id: ObjectIdentifier
    init(_ cache: any PurgeableCache) {
        id = ObjectIdentifier(cache)
        RecreatableCaches.shared.claim(id)
    }
    deinit { RecreatableCaches.shared.releaseClaim(id) }
}

/// The caches purged so far by the memory warning being delivered, so each is purged once.
@MainActor
enum CachePurgePass {
    private static var purged: Set<ObjectIdentifier>?
    /// The controllers' cache cost that warnings raised inside the current delivery released
    /// and reported themselves.
    private static var releasedInside = 0

    /// Runs `body` as one warning's delivery (a warning raised inside it gets a pass of its
    /// own); returns what warnings raised inside it released and reported (``report(_:)``).
    static func run(_ body: () -> Void) -> Int {
        let (outerPurged, outerReleased) = (purged, releasedInside)
        (purged, releasedInside) = ([], 0)
        defer { (purged, releasedInside) = (outerPurged, outerReleased) }
        body()
        return releasedInside
    }

    /// Called by a warning once its delivery is over with the controllers' cache cost it
    /// released: a warning it was raised inside does not report that cost again.
    static func report(_ released: Int) {
        guard purged != nil else { return }
        releasedInside = releasedInside.addingClamped(released)
    }

    /// Whether `cache` is to be purged now: always outside a warning's delivery, once inside.
    static func firstPurge(of cache: any PurgeableCache) -> Bool {
        guard purged != nil else { return true }
        return purged!.insert(ObjectIdentifier(cache)).inserted
    }
}
