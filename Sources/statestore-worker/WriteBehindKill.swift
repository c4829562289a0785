import Foundation
import StateStore

/// `statestore-worker writebehind-kill DB STEPS PADDING`: the window in which write-behind can
/// lose saves, made visible. A list screen pushes and pops a detail screen STEPS times; both
/// carry a step counter (and PADDING bytes, to make encoding and writing slower). Step 1 ends
/// with a flush point (`saveVisibleState()`, "flushed 1"); the later steps only hand their
/// states to the writer. Right after the last disappearance ("handed STEPS") the process
/// kills itself with SIGKILL, while the writer may still hold batches.
///
/// Every step is two structural changes, each one batch: the push writes the list's step
/// with an archive of two screens, the pop the detail's step with an archive of one. So the
/// database may only hold, for some step i from 1 (the flush point) to STEPS, either
/// (list i, detail i-1, two screens) or (list i, detail i, one screen).
///
/// With `exit` as the last argument the process calls `exit(0)` there instead, without
/// `terminate()`: the store drains its writer at exit, so every step must be on disk.
///
/// With `threadless`, the process first puts itself at its thread limit (`RLIMIT_NPROC`, as a
/// user of its own when it runs as root, whom the limit does not bind): the store cannot start its
/// writer's thread, says so ("warning ..." lines), and writes each change before returning, so
/// every step must be on disk when the process is killed. With `one-spare-thread`, the limit
/// leaves one thread to make: the writer's, and none for anything else.
enum WriteBehindKill {
    @MainActor
    static func run(
        database: String, steps: Int, padding: Int, exitingNormally: Bool = false, spareThreads: Int? = nil
    ) -> Never {
        do {
            if let spareThreads { atThreadLimit(spare: spareThreads) }
            let store = try StateStore(path: database)
            for warning in store.warnings { emit("warning \(warning)") }
            let app = try StepApp(store: store)
            let filler = String(repeating: "x", count: padding)
            for step in 1...max(steps, 1) {
                try app.step(step, padding: filler)
                if step == 1 {
                    app.application.saveVisibleState()
                    emit("flushed 1")
                }
            }
            emit("handed \(steps)")
            if exitingNormally { exit(0) }
            kill(getpid(), SIGKILL)
            while true { pause() }
        } catch {
            fail("\(error)")
        }
    }

    /// The user a worker started as root becomes before it limits itself: one no account has,
    /// so that the limit, which counts every thread of the user, counts this process's alone
    /// (`nobody` also runs other tests' processes). One for each mode, as the tests of both
    /// may run at once. The tests give the database's folder to it.
    static func limitedUser(spare: Int) -> UInt32 { 3_900_000_000 + UInt32(spare) }

    /// Puts the process at its thread limit (`RLIMIT_NPROC`), with `spare` threads left to
    /// make. The limit does not bind a process with `CAP_SYS_RESOURCE` (root), so such a
    /// process becomes ``limitedUser(spare:)`` first. The limit counts every thread of the
    /// user: the smallest one under which a trial thread can be made is one above the count.
    static func atThreadLimit(spare: Int) {
        func limit(_ count: Int) {
            var value = rlimit()
            getrlimit(__rlimit_resource_t(__RLIMIT_NPROC.rawValue), &value)
            value.rlim_cur = rlim_t(count)
            guard setrlimit(__rlimit_resource_t(__RLIMIT_NPROC.rawValue), &value) == 0 else {
                fail("setrlimit(RLIMIT_NPROC): errno \(errno)")
            }
        }
        /// Whether a thread can still be made (one that does nothing, and is waited for until
        /// the kernel has released it: a join returns before the thread leaves the count).
        func canMakeThread() -> Bool {
            var thread = pthread_t()
            guard pthread_create(&thread, nil, { _ in nil }, nil) == 0 else { return false }
            pthread_join(thread, nil)
            let deadline = ContinuousClock.now + .seconds(5)
            while ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 1) > 1,
                ContinuousClock.now < deadline
            { usleep(1_000) }
            return true
        }
        limit(0)
        if canMakeThread() {
            let user = limitedUser(spare: spare)
            guard geteuid() == 0, setgroups(0, nil) == 0, setgid(user) == 0, setuid(user) == 0 else {
                fail("RLIMIT_NPROC does not bind this process, and it cannot become user \(user): errno \(errno)")
            }
            limit(0)
            if canMakeThread() { fail("RLIMIT_NPROC 0 does not stop this process from making threads") }
        }
        guard spare > 0 else { return }
        var allowing = 1
        while true {
            limit(allowing)
            if canMakeThread() { break }
            allowing += 1
            if allowing > 100_000 { fail("no RLIMIT_NPROC lets this process make a thread") }
        }
        limit(allowing - 1 + spare)
    }
}

/// The application both write-behind workers drive (`writebehind-kill`, `power-cut`'s writer
/// modes): a navigation controller showing a list, which pushes and pops a detail. Each push
/// and each pop is one structural change: the step's state with the archive of the screens
/// then shown.
@MainActor
struct StepApp {
    final class StepController: ViewController, StateRestoring {
        struct State: Codable, Sendable {
            var step = 0
            var padding = ""
        }
        var restorableState = State()
    }

    struct WrongController: Error, CustomStringConvertible {
        var description: String { "the storyboard made the wrong controllers" }
    }

    let application: Application
    let window: Window
    let storyboard = Storyboard()
    let navigation: NavigationController
    let list: StepController

    /// The window shown with the list in it (a structural change of its own: an archive of
    /// one screen, no state yet).
    init(store: StateStore) throws {
        storyboard.register("list") { StepController() }
        storyboard.register("detail") { StepController() }
        storyboard.register("nav") { NavigationController() }
        application = Application(store: store, storyboard: storyboard)
        window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        guard let navigation = try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController,
            let list = try storyboard.instantiateViewController(withIdentifier: "list") as? StepController
        else { throw WrongController() }
        self.navigation = navigation
        self.list = list
        navigation.setViewControllers([list], animated: false)
        window.rootViewController = navigation
        window.makeKeyAndVisible()
    }

    /// Step `step`: the list carries it as the detail is pushed (the list's state with two
    /// screens), the detail carries it as it is popped (the detail's state with one).
    func step(_ step: Int, padding: String) throws {
        list.restorableState = .init(step: step, padding: padding)
        guard let detail = try storyboard.instantiateViewController(withIdentifier: "detail") as? StepController else {
            throw WrongController()
        }
        navigation.pushViewController(detail, animated: false)
        detail.restorableState = .init(step: step, padding: padding)
        _ = navigation.popViewController(animated: false)
    }
}
