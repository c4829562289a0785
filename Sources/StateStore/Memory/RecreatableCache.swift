/// A thread-safe, cost- and count-limited LRU cache of values that can be recreated, which
/// gives its memory back under pressure — what `NSCache` does on Apple platforms and does not
/// do on Linux.
///
/// ```swift
/// let thumbnails = RecreatableCache<URL, [UInt8]>(name: "thumbnails", costLimit: 64 << 20) { $0.count }
/// let bytes = try thumbnails.value(forKey: url) { try render(url) }
/// ```
///
/// By default the cache registers (weakly) with ``RecreatableCaches/shared``, so
/// ``RecreatableCaches/purgeAll(for:)`` reaches it; ``purge(for:)`` trims it at `.warning` and
/// empties it at `.critical`.
public final class RecreatableCache<Key: Hashable & Sendable, Value: Sendable>: PurgeableCache, Sendable {
    /// A name for logs and statistics.
    public let name: String
    /// The most total cost kept; least recently used entries go first beyond it.
    public let costLimit: Int
    /// The most entries kept.
    public let countLimit: Int
    private let cost: @Sendable (Value) -> Int
    private let registry: RecreatableCaches?
    private let storage = Lock(Storage())

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - name: a name for logs and statistics.
    ///   - costLimit: the most total cost to keep (bytes, by convention); unlimited by default.
    ///   - countLimit: the most entries to keep; unlimited by default.
    ///   - registry: the registry to join (weakly); `nil` joins none.
    ///   - cost: the cost of a value; 1 by default, which makes `costLimit` a second count limit.
    public init(
        name: String, costLimit: Int = .max, countLimit: Int = .max, registry: RecreatableCaches? = .shared,
        cost: @escaping @Sendable (Value) -> Int = { _ in 1 }
    ) {
        self.name = name
        self.costLimit = max(costLimit, 0)
        self.countLimit = max(countLimit, 0)
        self.cost = cost
        self.registry = registry
        registry?.register(self)
    }

    deinit {
        registry?.unregister(ObjectIdentifier(self))
    }

    /// The cached value for `key` (counted as a hit or a miss), or stores one (`nil` removes).
    public subscript(key: Key) -> Value? {
        get { storage.withLock { $0.value(for: key) } }
        set {
            if let newValue { setValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Stores a value with an explicit cost (instead of the `cost` closure's).
    public func setValue(_ value: Value, forKey key: Key, cost explicitCost: Int? = nil) {
        let cost = explicitCost ?? self.cost(value)
        // Released outside the lock: a value's deinit may be slow or reentrant.
        let released: (Value?, [Value]) = storage.withLock { storage in
            let replaced = storage.insert(value, for: key, cost: cost)
            let trimmed = storage.trim(toCost: costLimit, count: countLimit)
            storage.statistics.evictions += trimmed.removed
            return (replaced, trimmed.values)
        }
        _ = released
    }

    /// Removes and returns the value for `key`.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        storage.withLock { $0.remove(key) }
    }

    /// The cached value for `key`, or the one `create` makes, which is then cached.
    ///
    /// `create` runs outside the cache's lock, so it may be slow or use the cache itself; two
    /// threads missing the same key at once may both create, and the later one is kept.
    public func value(forKey key: Key, orCreate create: () throws -> Value) rethrows -> Value {
        if let value = self[key] { return value }
        let value = try create()
        setValue(value, forKey: key)
        return value
    }

    /// Releases memory as `level` calls for: `.warning` trims to half the cost and count limits
    /// (or half of what is held when unlimited), `.critical` empties the cache, `.normal` does
    /// nothing. Returns the cost released.
    @discardableResult
    public func purge(for level: MemoryPressureLevel) -> Int {
        switch level {
        case .normal:
            return 0
        case .warning:
            let released: (Int, [Value]) = storage.withLock { storage in
                let costBound = costLimit == .max ? Int(clamping: storage.totalCost / 2) : costLimit / 2
                let countBound = countLimit == .max ? storage.count / 2 : countLimit / 2
                let trimmed = storage.trim(toCost: costBound, count: countBound)
                storage.statistics.purges += 1
                storage.statistics.purgedCost = storage.statistics.purgedCost.addingClamped(trimmed.cost)
                return (trimmed.cost, trimmed.values)
            }
            return released.0
        case .critical:
            let emptied: (cost: Int, storage: Storage) = storage.withLock { storage in
                let result = storage.removeAll()
                storage.statistics.purges += 1
                storage.statistics.purgedCost = storage.statistics.purgedCost.addingClamped(result.cost)
                return result
            }
            return emptied.cost
        }
    }

    /// Removes everything (not counted as a purge).
    public func removeAll() {
        let emptied = storage.withLock { $0.removeAll() }
        _ = emptied
    }

    /// The total cost of the cached values (at most `Int.max`).
    public var totalCost: Int { storage.withLock { Int(clamping: $0.totalCost) } }

    /// The number of cached values.
    public var count: Int { storage.withLock { $0.count } }

    /// Hits, misses, evictions and purges so far.
    public var statistics: Statistics { storage.withLock { $0.statistics } }
}
