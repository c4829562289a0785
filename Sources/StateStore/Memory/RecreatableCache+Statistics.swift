extension RecreatableCache {
    /// Counters since the cache was created.
    public struct Statistics: Sendable, Equatable, CustomStringConvertible {
        /// Lookups that found a value.
        public var hits = 0
        /// Lookups that found nothing.
        public var misses = 0
        /// Entries removed to respect the cost or count limit.
        public var evictions = 0
        /// Calls to ``RecreatableCache/purge(for:)`` above `.normal`.
        public var purges = 0
        /// Cost released by purges (held at `Int.max`).
        public var purgedCost = 0

        /// Statistics with every counter at zero.
        public init() {}

        /// `hits / (hits + misses)`, 0 before the first lookup.
        public var hitRate: Double {
            hits + misses == 0 ? 0 : Double(hits) / Double(hits + misses)
        }

        public var description: String {
            "hits \(hits), misses \(misses), evictions \(evictions), purges \(purges) (\(purgedCost) released)"
        }
    }
}
