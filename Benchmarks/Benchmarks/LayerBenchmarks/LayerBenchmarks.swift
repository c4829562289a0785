import Benchmark
import Foundation
import StateStore
import Synchronization

// Scenarios that need the lifecycle, restoration and memory layers. Names are
// "<scenario>/<peer>" so `Benchmarks/compare` pairs them:
//
//   push pop 1KB        a push and a pop on a NavigationController whose controllers carry a
//                       1 KB state that changes every time: store (saved on disappear, restored
//                       on appear, archive written) beside lifecycle (the same app without a store)
//   memory warning 1k   Application.didReceiveMemoryWarning(.warning) with 1,000 and 10,000 live
//   memory warning 10k  controllers: delivery, cache purge, SQLite release, malloc_trim, RSS before
//                       and after, the event recorded (store) / not recorded (lifecycle)
//   monitor sample      one MemoryPressureMonitor.sample(): read and parse meminfo, PSI and the
//                       cgroup, on this machine (host) and on a fixture tree (fixture)
//   cache get, set      RecreatableCache (store) beside a Mutex-protected Dictionary (dictionary,
//                       the floor) and Foundation's NSCache (nscache)

/// A screen with a 1 KB state.
final class PageController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var counter = 0; var text = String(repeating: "p", count: 1000) }
    var restorableState = State()
}

@MainActor
final class NavigationApp {
    let application: Application
    let window: Window
    let navigation: NavigationController
    let root: PageController

    init(store: StateStore?) {
        application = store.map { Application(store: $0) } ?? Application()
        window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        root = PageController()
        root.restorationIdentifier = "root"
        navigation = NavigationController(rootViewController: root)
        navigation.restorationIdentifier = "nav"
        window.rootViewController = navigation
        window.makeKeyAndVisible()
    }

    /// One push and one pop; both controllers' states change, so both are written.
    func cycle(_ index: Int) {
        root.restorableState.counter = index
        let page = PageController()
        page.restorationIdentifier = "page"
        navigation.pushViewController(page, animated: false)
        page.restorableState.counter = index
        _ = navigation.popViewController(animated: false)
    }
}

/// An application with `controllers` live controllers, none of them in a window.
@MainActor
final class WarningApp {
    let application: Application
    let controllers: [ViewController]

    init(store: StateStore?, controllers count: Int) {
        application = store.map { Application(store: $0) } ?? Application()
        controllers = (0..<count).map { _ in ViewController() }
    }
}

func scratchDatabase(_ name: String) -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("statestore-layer-benchmarks")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let path = folder.appendingPathComponent("\(name)-\(getpid()).sqlite").path
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}

/// A copy of the outside /proc corpus as a root tree: proc/meminfo and proc/pressure/memory.
func fixtureRoot() -> String {
    let here = URL(fileURLWithPath: #filePath)
    let shared = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/StateStoreTests/Fixtures/proc/procfs")
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("statestore-layer-root-\(getpid())")
    try? FileManager.default.createDirectory(at: root.appendingPathComponent("proc/pressure"), withIntermediateDirectories: true)
    for file in ["meminfo", "pressure/memory"] {
        let target = root.appendingPathComponent("proc/\(file)")
        try? FileManager.default.removeItem(at: target)
        try? FileManager.default.copyItem(at: shared.appendingPathComponent(file), to: target)
    }
    return root.path
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(3))

    for peer in ["store", "lifecycle"] {
        // Set up on the main actor, then one hop runs every iteration: the hop is amortised.
        Benchmark("push pop 1KB/\(peer)", configuration: configuration) { benchmark async in
            let store = peer == "store" ? try? StateStore(path: scratchDatabase("pushpop")) : nil
            let app = await MainActor.run { NavigationApp(store: store) }
            let iterations = benchmark.scaledIterations
            await app.cycle(-1)
            benchmark.startMeasurement()
            await MainActor.run { for index in iterations { app.cycle(index) } }
            benchmark.stopMeasurement()
            await app.application.terminate()
        }

        for count in [1000, 10_000] {
            Benchmark("memory warning \(count / 1000)k/\(peer)", configuration: .init(
                metrics: [.wallClock], maxDuration: .seconds(3), maxIterations: 200
            )) { benchmark async in
                let store = peer == "store" ? try? StateStore(path: scratchDatabase("warning")) : nil
                let app = await MainActor.run { WarningApp(store: store, controllers: count) }
                let iterations = benchmark.scaledIterations
                benchmark.startMeasurement()
                await MainActor.run {
                    for _ in iterations { app.application.didReceiveMemoryWarning(level: .warning) }
                }
                benchmark.stopMeasurement()
                blackHole(app.controllers.count)
            }
        }
    }

    // Operations of a microsecond or less: 1,000 per sample (`.kilo`), set up once, outside the samples.
    let micro = Benchmark.Configuration(metrics: [.wallClock], scalingFactor: .kilo, maxDuration: .seconds(3))

    let fixture = fixtureRoot()
    for (peer, root) in [("host", "/"), ("fixture", fixture)] {
        let monitor = MemoryPressureMonitor(configuration: .init(root: root))
        Benchmark("monitor sample/\(peer)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try? monitor.sample()) }
        }
    }

    let value = [UInt8](repeating: 7, count: 256)
    let cache = RecreatableCache<Int, [UInt8]>(name: "get", costLimit: 64 << 20, cost: { $0.count })
    let dictionary = LockedDictionary()
    let nscache = FoundationCache()
    for key in 0..<1024 {
        cache[key] = value
        dictionary.set(value, for: key)
        nscache.set(value, for: key)
    }
    Benchmark("cache get/store", configuration: micro) { benchmark in
        for index in benchmark.scaledIterations { blackHole(cache[index & 1023]) }
    }
    Benchmark("cache get/dictionary", configuration: micro) { benchmark in
        for index in benchmark.scaledIterations { blackHole(dictionary.get(index & 1023)) }
    }
    Benchmark("cache get/nscache", configuration: micro) { benchmark in
        for index in benchmark.scaledIterations { blackHole(nscache.get(index & 1023)) }
    }
    // Sets over 4,096 keys into caches limited to 1,024 values: every set past the first
    // thousand evicts (the dictionary floor just overwrites).
    let bounded = RecreatableCache<Int, [UInt8]>(name: "set", costLimit: 256 << 10, cost: { $0.count })
    let boundedNSCache = FoundationCache(costLimit: 256 << 10)
    let unbounded = LockedDictionary()
    Benchmark("cache set/store", configuration: micro) { benchmark in
        for index in benchmark.scaledIterations { bounded[index & 4095] = value }
    }
    Benchmark("cache set/dictionary", configuration: micro) { benchmark in
        for index in benchmark.scaledIterations { unbounded.set(value, for: index & 4095) }
    }
    Benchmark("cache set/nscache", configuration: micro) { benchmark in
        for index in benchmark.scaledIterations { boundedNSCache.set(value, for: index & 4095) }
    }
}

/// The floor for cache get/set: a Dictionary behind a Mutex.
final class LockedDictionary: Sendable {
    private let storage = Mutex<[Int: [UInt8]]>([:])
    func get(_ key: Int) -> [UInt8]? { storage.withLock { $0[key] } }
    func set(_ value: [UInt8], for key: Int) { storage.withLock { $0[key] = value } }
}

/// Foundation's NSCache (thread-safe by its documentation), with a cost per value.
final class FoundationCache: @unchecked Sendable {
    private let cache = NSCache<NSNumber, NSData>()
    init(costLimit: Int = 0) { cache.totalCostLimit = costLimit }
    func get(_ key: Int) -> NSData? { cache.object(forKey: NSNumber(value: key)) }
    func set(_ value: [UInt8], for key: Int) {
        cache.setObject(NSData(bytes: value, length: value.count), forKey: NSNumber(value: key), cost: value.count)
    }
}
