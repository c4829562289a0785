import Foundation
import StateStore
import StateStoreTesting
import Testing

/// A photo viewer as an app's tests would see it: the photo's model is saved as state, its
/// decoded thumbnails live in a cache the controller registers, recreatable at will.
@MainActor
final class KitPhotoApp: LaunchedApp {
    final class Photo: ViewController, StateRestoring {
        struct State: Codable, Sendable, Equatable { var caption = "" }
        var restorableState = State()
        let thumbnails = RecreatableCache<Int, [UInt8]>(name: "thumbnails", registry: nil) { $0.count }

        override func viewDidLoad() {
            super.viewDidLoad()
            register(thumbnails)
        }
    }

    let application: Application
    let window: Window

    init(store: StateStore) throws {
        let storyboard = Storyboard()
        storyboard.register("photo") { Photo() }
        application = Application(store: store, storyboard: storyboard)
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        if try !application.restoreHierarchy(in: window) {
            window.rootViewController = try storyboard.instantiateViewController(withIdentifier: "photo")
            window.makeKeyAndVisible()
        }
    }

    var photo: Photo { window.rootViewController as! Photo }
}

/// ``SimulatedMemory``: the warning comes through the live monitor reading the kit's files, and
/// the app responds as in production.
@MainActor
@Suite("StateStoreTesting: memory pressure through the live monitor")
struct TestingKitMemoryTests {
    @Test func aCriticalWarningEmptiesTheCachesAndSavesWhatIsOnScreen() async throws {
        let temporary = try TemporaryStore()
        // No repeated level: the count of warnings below is exact however late they arrive.
        let memory = try SimulatedMemory(in: temporary, configuration: .init(repeatInterval: nil))
        let launch = try temporary.launch { try KitPhotoApp(store: $0) }
        memory.observe(by: launch.application)
        let photo = launch.app.photo
        for index in 0..<8 { photo.thumbnails[index] = [UInt8](repeating: 1, count: 4096) }
        photo.restorableState.caption = "the harbour at dawn"

        let warning = try #require(try await memory.raise(to: .warning, for: launch.application))
        #expect(warning.level == .warning)
        #expect(warning.controllerCount == 1)
        // A warning trims a cache (by default to half its cost); a critical one empties it.
        #expect(photo.thumbnails.totalCost < 8 * 4096)

        let critical = try #require(try await memory.raise(to: .critical, for: launch.application))
        #expect(critical.level == .critical)
        #expect(critical.availableBytes == memory.availableBytes)
        #expect(memory.availableBytes <= memory.totalBytes / 10)
        #expect(photo.thumbnails.count == 0)
        #expect(critical.cacheCostReleased > 0)
        #expect(launch.application.memoryWarningCount == 2)

        // Critical is a flush point (an OOM kill may follow): the caption is on disk, so even a
        // kill right after it keeps it.
        let relaunched = try launch.relaunch(after: .kill)
        #expect(relaunched.app.photo.restorableState.caption == "the harbour at dawn")
        #expect(relaunched.app.photo.thumbnails.count == 0)
    }

    @Test func aCgroupNearItsLimitRaisesTheWarning() async throws {
        let temporary = try TemporaryStore()
        let memory = try SimulatedMemory(in: temporary, cgroupLimit: 512 << 20)
        let launch = try temporary.launch { try KitPhotoApp(store: $0) }
        memory.observe(by: launch.application)
        let report = try #require(try await memory.raise(to: .critical, for: launch.application))
        #expect(report.level == .critical)
        // The cgroup, not the machine (60 % of 8 GiB free), was near its limit.
        #expect(memory.availableBytes >= memory.totalBytes / 10 * 6 - 1024)
        #expect(memory.cgroupUsage == (512 << 20) / 100 * 90)
        #expect(
            try String(contentsOfFile: memory.root + "/sys/fs/cgroup/app/memory.current", encoding: .utf8)
                == "\(memory.cgroupUsage)\n")
        try launch.end(.termination)
    }

    @Test func aPressureStallRaisesTheWarningWithMemoryToSpare() async throws {
        let temporary = try TemporaryStore()
        let memory = try SimulatedMemory(in: temporary)
        let launch = try temporary.launch { try KitPhotoApp(store: $0) }
        memory.observe(by: launch.application)
        let before = launch.application.memoryWarningCount
        try memory.setPressureStall(some: 40, full: 35)
        let report = try await memory.nextWarning(at: .critical, for: launch.application, after: before)
        #expect(report.level == .critical)
        try launch.end(.termination)
    }

    /// The monitor's hold time is the configuration's, as in production: a level does not go
    /// down at once, so no second warning comes from hovering back and forth. (An hour here:
    /// the hold counts from the monitor's reading, and in a whole test run other tests can keep
    /// the main actor, where the warning is delivered, busy for minutes.)
    @Test func theLevelIsHeldAsConfigured() async throws {
        let temporary = try TemporaryStore()
        let memory = try SimulatedMemory(
            in: temporary, configuration: .init(minimumLevelDuration: .seconds(3600), repeatInterval: nil))
        let launch = try temporary.launch { try KitPhotoApp(store: $0) }
        memory.observe(by: launch.application)
        try await memory.raise(to: .critical, for: launch.application)
        try await memory.raise(to: .normal, for: launch.application)
        try await Task.sleep(for: .milliseconds(300))
        #expect(memory.monitor.level == .critical)
        #expect(launch.application.memoryWarningCount == 1)
        try launch.end(.termination)
    }

    /// An application that does not observe the monitor gets nothing, and the failure says what
    /// to check.
    @Test func noWarningIsAnErrorThatSaysWhatToCheck() async throws {
        let temporary = try TemporaryStore()
        let memory = try SimulatedMemory(in: temporary)
        let launch = try temporary.launch { try KitPhotoApp(store: $0) }
        await #expect {
            try await memory.raise(to: .critical, for: launch.application, timeout: .milliseconds(200))
        } throws: { error in
            guard let error = error as? StateStoreTestingError,
                case .noMemoryWarning(.critical, .milliseconds(200), nil) = error
            else { return false }
            return error.description.contains("SimulatedMemory.observe(by:)")
        }
        try launch.end(.termination)
    }
}
