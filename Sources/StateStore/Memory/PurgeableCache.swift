/// A cache that can give memory back when the system is under pressure.
///
/// ``RecreatableCache`` conforms; conform your own caches to register them with
/// ``RecreatableCaches``.
public protocol PurgeableCache: AnyObject, Sendable {
    /// A name for logs and statistics.
    var name: String { get }
    /// The total cost of what the cache holds (bytes, by convention).
    var totalCost: Int { get }
    /// Releases entries as `level` calls for and returns the cost released.
    @discardableResult
    func purge(for level: MemoryPressureLevel) -> Int
}
