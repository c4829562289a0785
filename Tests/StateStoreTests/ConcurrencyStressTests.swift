import Foundation
import Glibc
import Testing

@testable import StateStore

/// Every thread the library runs, at once, on one file: threads saving and restoring through
/// one store and through a second store on the same file, a thread exporting and importing,
/// the write-behind writer of an application that pushes, pops and relaunches on the main
/// actor, the background integrity check, and the memory-pressure monitor raising warnings
/// from a fixture tree whose `MemAvailable` another thread keeps moving. Each thread owns its
/// paths and remembers what it wrote last; at the end a third store, opened afresh, must read
/// exactly that for every path, and `check()` must pass.
///
/// It runs for `STATESTORE_STRESS_SECONDS` (default 2). Its purpose is the run under
/// ThreadSanitizer (`scripts/sanitize thread`), which reports any access two threads make
/// without an order between them; under a plain build it checks the final states.
@Suite("Concurrency stress: every thread on one file")
@MainActor
struct ConcurrencyStressTests {
    let folder = TemporaryFolder()

    static var seconds: Double {
        Double(ProcessInfo.processInfo.environment["STATESTORE_STRESS_SECONDS"] ?? "") ?? 2
    }

    struct Value: Codable, Sendable, Equatable {
        var owner: String
        var round: Int
        var payload: String
    }

    @Test(.hangGuard(minutes: 10))
    func everyThreadAtOnceLeavesEveryStateAsItsOwnerLastWroteIt() async throws {
        let database = folder.file("stress.sqlite")
        let options = StateStore.Options(backgroundCheck: .quick(after: .milliseconds(50)))
        let first = try StateStore(path: database, options: options)
        let second = try StateStore(path: database, options: options)

        // The monitor, on a fixture tree whose available memory a thread moves between roomy,
        // warning and critical.
        let root = folder.file("root")
        try MemoryFixtures.write(
            MemoryFixtures.meminfo(totalKB: 8_000_000, availableKB: 6_000_000), to: "/proc/meminfo", in: root)
        let monitor = try MemoryPressureMonitor(
            configuration: .init(
                root: root, minimumLevelDuration: .zero, repeatInterval: .milliseconds(20),
                minimumPollingInterval: .milliseconds(2), maximumPollingInterval: .milliseconds(10)))
        let cache = RecreatableCache<Int, [UInt8]>(name: "stress")
        let warnings = Lock(0)
        let handler = monitor.onEvent { event in
            if event.level != .normal {
                _ = cache.purge(for: event.level)
                warnings.withLock { $0 += 1 }
            }
        }
        defer { monitor.removeHandler(handler) }

        // The threads run until the main actor's loop ends: after the time given, and once it
        // has made 50 rounds (two relaunches) and a warning has come, however slowly a loaded
        // machine schedules it; never past ten minutes' guard.
        let deadline = Date().addingTimeInterval(Self.seconds)
        let stopping = Lock(false)
        let lastWritten = Lock<[String: Value]>([:])
        let failures = Lock<[String]>([])
        let fail: @Sendable (String) -> Void = { message in failures.withLock { $0.append(message) } }

        var threads: [pthread_t] = []
        // Savers on each store: each owns a few paths, saves, reads back and remembers.
        for (index, store) in [(0, first), (1, first), (2, second)] {
            threads.append(
                try spawn {
                    var round = 0
                    while !stopping.withLock({ $0 }) {
                        round += 1
                        let path = RestorationPath(stringLiteral: "stress/saver\(index)/\(round % 7)")
                        let value = Value(
                            owner: "saver\(index)", round: round, payload: String(repeating: "x", count: round % 300))
                        do {
                            try store.save(value, for: path)
                            lastWritten.withLock { $0[path.rawValue] = value }
                            let read = try store.restore(Value.self, for: path)
                            if read != value {
                                fail("\(path): read \(String(describing: read)) after saving round \(round)")
                            }
                            cache.setValue(
                                Array(repeating: UInt8(truncatingIfNeeded: round), count: 512),
                                forKey: index * 1000 + round % 50)
                        } catch { fail("saver\(index): \(error)") }
                    }
                })
        }
        // Export and import: each round exports what the store holds and imports it again,
        // under its own prefix, through the other store.
        threads.append(
            try spawn {
                var round = 0
                while !stopping.withLock({ $0 }) {
                    round += 1
                    do {
                        let export = try StateExport(store: first)
                        let document = try export.encoded()
                        let decoded = try StateExport(decoding: document)
                        let path = RestorationPath(stringLiteral: "stress/importer/\(round % 5)")
                        let value = Value(owner: "importer", round: round, payload: "\(decoded.states.count)")
                        let bytes = try JSONEncoder().encode(value)
                        let state = StoredState(
                            path: path, typeName: String(reflecting: Value.self), version: 1, generation: 1,
                            encoding: .json, updatedAt: Date(), bytes: bytes)
                        _ = try second.importStates(StateExport(states: [state]), replace: false)
                        lastWritten.withLock { $0[path.rawValue] = value }
                    } catch { fail("importer: \(error)") }
                }
            })
        // Memory moves between roomy, warning and critical.
        threads.append(
            try spawn {
                var step = 0
                while !stopping.withLock({ $0 }) {
                    step += 1
                    let available: UInt64 = [6_000_000, 1_600_000, 400_000][step % 3]
                    try? MemoryFixtures.write(
                        MemoryFixtures.meminfo(totalKB: 8_000_000, availableKB: available), to: "/proc/meminfo",
                        in: root)
                    usleep(15_000)
                }
            })

        // The main actor: an application with the write-behind writer, pushing and popping,
        // relaunched every few rounds, observing the monitor.
        let storyboard = Storyboard()
        storyboard.register("nav") { NavigationController() }
        for identifier in ["root", "n0", "n1", "n2", "n3"] { storyboard.register(identifier) { NoteController() } }
        func note(_ identifier: String, in application: Application) throws -> NoteController {
            try #require(
                try application.storyboard.instantiateViewController(withIdentifier: identifier) as? NoteController)
        }
        var application = Application(store: first, storyboard: storyboard)
        application.observeMemoryPressure(monitor)
        var window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        var navigation = try #require(
            try application.storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
        navigation.setViewControllers([try note("root", in: application)], animated: false)
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        var round = 0
        var relaunches = 0
        defer {
            application.terminate()
            stopping.withLock { $0 = true }
            for thread in threads { pthread_join(thread, nil) }
        }
        while Date() < deadline || round < 50 || warnings.withLock({ $0 }) == 0 {
            round += 1
            if navigation.viewControllers.count > 3 { _ = navigation.popToRootViewController(animated: false) }
            let pushed = try note("n\(round % 4)", in: application)
            navigation.pushViewController(pushed, animated: false)
            pushed.restorableState = .init(text: "round \(round)", edits: round)
            if round % 3 == 0 { _ = navigation.popViewController(animated: false) }
            if round % 25 == 0 {
                let stack = navigation.viewControllers.compactMap { ($0 as? NoteController)?.restorableState }
                application.terminate()
                relaunches += 1
                application = Application(store: first, storyboard: storyboard)
                application.observeMemoryPressure(monitor)
                window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
                #expect(try application.restoreHierarchy(in: window))
                navigation = try #require(window.rootViewController as? NavigationController)
                // Each screen restores as it appears: the top now, the others as they are uncovered.
                var restored: [NoteController.State] = []
                while let top = navigation.topViewController as? NoteController {
                    restored.insert(top.restorableState, at: 0)
                    guard navigation.viewControllers.count > 1 else { break }
                    _ = navigation.popViewController(animated: false)
                }
                #expect(restored == stack, "after relaunch \(relaunches)")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        application.terminate()
        stopping.withLock { $0 = true }
        for thread in threads { pthread_join(thread, nil) }
        threads = []

        #expect(failures.withLock { $0 } == [])
        #expect(relaunches > 0)
        #expect(first.waitForBackgroundCheck(timeout: .seconds(120)) != .running)

        // A third store, opened afresh, reads what each owner wrote last.
        let written = lastWritten.withLock { $0 }
        #expect(written.count >= 4)
        let reader = try StateStore(path: database)
        for (path, value) in written {
            #expect(try reader.restore(Value.self, for: RestorationPath(validating: path)) == value, "\(path)")
        }
        #expect(try reader.check().isHealthy)
        #expect(warnings.withLock { $0 } > 0)
        print("stress: \(round) rounds, \(relaunches) relaunches, \(warnings.withLock { $0 }) warnings")
    }
}

/// Starts `body` on a new pthread (which ThreadSanitizer orders with `pthread_join`).
func spawn(_ body: @escaping @Sendable () -> Void) throws -> pthread_t {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let result = pthread_create(
        &thread, nil,
        { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        throw RawSQLFailure(message: "pthread_create failed: \(result)")
    }
    return thread
}
