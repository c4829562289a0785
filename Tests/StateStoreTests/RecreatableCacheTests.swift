import Foundation
import Testing
@testable import StateStore

@Suite("RecreatableCache")
struct RecreatableCacheTests {
    @Test func getSetAndLRUOrder() {
        let cache = RecreatableCache<String, Int>(name: "lru", countLimit: 3, registry: nil)
        cache["a"] = 1
        cache["b"] = 2
        cache["c"] = 3
        #expect(cache["a"] == 1)       // a is now most recent
        cache["d"] = 4                 // evicts b, the least recent
        #expect(cache["b"] == nil)
        #expect(cache["a"] == 1)
        #expect(cache["c"] == 3)
        #expect(cache["d"] == 4)
        #expect(cache.count == 3)
        let statistics = cache.statistics
        #expect(statistics.hits == 4)
        #expect(statistics.misses == 1)
        #expect(statistics.evictions == 1)
    }

    @Test func costLimitEvictsLeastRecentlyUsed() {
        let cache = RecreatableCache<Int, [UInt8]>(name: "cost", costLimit: 100, registry: nil) { $0.count }
        cache[1] = [UInt8](repeating: 1, count: 40)
        cache[2] = [UInt8](repeating: 2, count: 40)
        _ = cache[1]
        cache[3] = [UInt8](repeating: 3, count: 40)   // 120 > 100: evict 2
        #expect(cache.totalCost == 80)
        #expect(cache[2] == nil)
        #expect(cache[1]?.count == 40)
        cache[1] = [UInt8](repeating: 9, count: 10)   // replacing updates the cost
        #expect(cache.totalCost == 50)
        cache[1] = nil
        #expect(cache.totalCost == 40)
        #expect(cache.count == 1)
        cache.setValue([1], forKey: 7, cost: 500)     // larger than the limit: does not stay
        #expect(cache[7] == nil)
        #expect(cache.totalCost <= 100)
    }

    @Test func valueForKeyOrCreate() throws {
        let cache = RecreatableCache<String, String>(name: "create", registry: nil)
        var created = 0
        let first = cache.value(forKey: "k") { created += 1; return "v" }
        let second = cache.value(forKey: "k") { created += 1; return "w" }
        #expect(first == "v" && second == "v" && created == 1)
        struct Failure: Error {}
        #expect(throws: Failure.self) { try cache.value(forKey: "x") { throw Failure() } }
        #expect(cache["x"] == nil)
    }

    @Test func purgePerLevel() {
        let cache = RecreatableCache<Int, Int>(name: "purge", costLimit: 1000, registry: nil) { $0 }
        for key in 0..<10 { cache[key] = 100 }
        #expect(cache.totalCost == 1000)
        #expect(cache.purge(for: .normal) == 0)
        #expect(cache.purge(for: .warning) == 500)   // trims to half the cost limit
        #expect(cache.totalCost == 500)
        #expect(cache[9] == 100)                      // the most recent survive
        #expect(cache[0] == nil)
        #expect(cache.purge(for: .critical) == 500)
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(cache.statistics.purges == 2)
        #expect(cache.statistics.purgedCost == 1000)
        cache[1] = 1
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.statistics.purges == 2)
    }

    @Test func warningOnUnlimitedCacheHalvesIt() {
        let cache = RecreatableCache<Int, Int>(name: "unlimited", registry: nil)
        for key in 0..<8 { cache[key] = key }
        #expect(cache.purge(for: .warning) == 4)
        #expect(cache.count == 4)
    }

    @Test func slotsAreReusedAfterRemoval() {
        let cache = RecreatableCache<Int, Int>(name: "reuse", countLimit: 4, registry: nil)
        for round in 0..<1000 { cache[round] = round }
        #expect(cache.count == 4)
        for key in 996..<1000 { #expect(cache[key] == key) }
        #expect(cache.statistics.evictions == 996)
    }

    @Test func registryHoldsCachesWeaklyAndPurgesAll() {
        let registry = RecreatableCaches()
        let a = RecreatableCache<Int, Int>(name: "a", registry: registry) { $0 }
        var b: RecreatableCache<Int, Int>? = RecreatableCache<Int, Int>(name: "b", registry: registry) { $0 }
        a[1] = 10
        b?[1] = 20
        #expect(registry.caches.count == 2)
        #expect(registry.totalCost == 30)
        b = nil
        #expect(registry.caches.count == 1)
        #expect(registry.purgeAll(for: .critical) == 10)
        #expect(a.count == 0)
        _ = b
    }

    @Test func concurrentAccessIsSafe() async {
        let cache = RecreatableCache<Int, Int>(name: "concurrent", costLimit: 500, registry: nil)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<2000 {
                        let key = (worker * 31 + step) % 700
                        if cache[key] == nil { cache[key] = step }
                        if step % 500 == 0 { cache.purge(for: .warning) }
                    }
                }
            }
        }
        #expect(cache.count <= 500)
        #expect(cache.totalCost == cache.count)
    }
}

@Suite("Process memory", .serialized)
struct ProcessMemoryTests {
    @Test func residentBytesIsPlausible() throws {
        let rss = try #require(ProcessMemory.residentBytes())
        #expect(rss > 1 << 20)
        #expect(rss < 1 << 40)
    }

    /// Fill a cache with 64 MiB of distinct, touched arrays; a critical purge plus `malloc_trim`
    /// must give at least 80 % of it back to the system. RSS is the whole process's, and the
    /// suite's other tests run beside this one: one that allocates between the two readings
    /// hides part of the release, so the fill and purge get three tries, and one must release
    /// 80 % (a purge or trim that returns nothing fails all three).
    @Test func criticalPurgeAndTrimReturnMemory() throws {
        let megabytes = 64
        let size = megabytes << 20
        var outcomes: [String] = []
        for _ in 0..<3 {
            ProcessMemory.trim()
            let cache = RecreatableCache<Int, [UInt8]>(name: "rss", registry: nil) { $0.count }
            // 256 KiB blocks: above malloc's mmap threshold at first, below it once the threshold
            // adapts, so this exercises both mmapped chunks and the heap that only trim returns.
            let block = 256 << 10
            for index in 0..<(size / block) {
                cache[index] = [UInt8](repeating: UInt8(truncatingIfNeeded: index &+ 1), count: block)
            }
            #expect(cache.totalCost == size)
            let filled = try #require(ProcessMemory.residentBytes())
            #expect(cache.purge(for: .critical) == size)
            ProcessMemory.trim()
            let trimmed = try #require(ProcessMemory.residentBytes())
            let released = filled > trimmed ? filled - trimmed : 0
            if released >= UInt64(size) * 8 / 10 { return }
            outcomes.append("RSS \(filled >> 20) MiB → \(trimmed >> 20) MiB, released \(released >> 20) MiB")
        }
        Issue.record("a critical purge and trim released less than 80 % of \(megabytes) MiB three times: \(outcomes)")
    }
}
