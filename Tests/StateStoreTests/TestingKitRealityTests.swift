import Foundation
import StateStore
import StateStoreTesting
import Testing

/// The app `statestore-worker writebehind-kill` drives (`StepApp` there), as an app's tests
/// would write it: a navigation controller showing a list, which pushes and pops a detail,
/// both carrying the step they were at. Same storyboard identifiers, same state shape, so it
/// rebuilds what the worker archived.
@MainActor
final class KitStepApp: LaunchedApp {
    final class Step: ViewController, StateRestoring {
        struct State: Codable, Sendable, Equatable {
            var step = 0
            var padding = ""
        }
        var restorableState = State()
    }

    let application: Application
    let window: Window

    init(store: StateStore) throws {
        let storyboard = Storyboard()
        storyboard.register("list") { Step() }
        storyboard.register("detail") { Step() }
        storyboard.register("nav") { NavigationController() }
        application = Application(store: store, storyboard: storyboard)
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        if try !application.restoreHierarchy(in: window) {
            let navigation = try #require(
                try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
            navigation.setViewControllers(
                [try storyboard.instantiateViewController(withIdentifier: "list")], animated: false)
            window.rootViewController = navigation
            window.makeKeyAndVisible()
        }
    }

    var navigation: NavigationController { window.rootViewController as! NavigationController }

    /// The worker's session: each step, the list carries it as the detail is pushed, the detail
    /// as it is popped; step 1 ends with a flush point.
    func run(steps: Int, padding: Int) throws {
        let filler = String(repeating: "x", count: padding)
        let list = try #require(navigation.viewControllers.first as? Step)
        for step in 1...steps {
            list.restorableState = .init(step: step, padding: filler)
            let detail = try #require(
                try application.storyboard.instantiateViewController(withIdentifier: "detail") as? Step)
            navigation.pushViewController(detail, animated: false)
            detail.restorableState = .init(step: step, padding: filler)
            _ = navigation.popViewController(animated: false)
            if step == 1 { application.saveVisibleState() }
        }
    }

    /// What the user sees after a relaunch: how many screens, the step on the list (once it
    /// shows), and the detail's stored step.
    func seen() throws -> (screens: Int, list: Int, detail: Int) {
        let screens = navigation.viewControllers.count
        if screens == 2 { _ = navigation.popViewController(animated: false) }
        let list = try #require(navigation.viewControllers.first as? Step)
        let detail = try #require(
            try application.restorationCoordinator?.store.restore(Step.State.self, for: "nav/detail"),
            "the flushed detail state is gone")
        return (screens, list.restorableState.step, detail.step)
    }
}

/// The kit's kill against a real one: the same session, once in `statestore-worker`, which
/// kills itself with SIGKILL right after handing over its last step, and once in process,
/// ended by `relaunch(after: .kill)`. Both leave a WAL and the same class of outcomes, what the
/// window of loss allows: everything up to the flush point, then a prefix of the later
/// structural changes, each whole. The kit's is that class's worst case, on every run.
@MainActor
@Suite("StateStoreTesting: a kill in process leaves what a real kill -9 leaves", .hangGuard(minutes: 10))
struct TestingKitRealityTests {
    static let steps = 12

    func walSize(_ store: TemporaryStore) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: store.walPath))?[.size] as? Int) ?? -1
    }

    /// Whether an outcome is one a kill after step 1's flush point can leave: after push i
    /// (list i, detail i - 1, two screens) or after pop i (list i, detail i, one screen).
    func isAllowed(_ seen: (screens: Int, list: Int, detail: Int)) -> Bool {
        guard seen.list >= 1, seen.list <= Self.steps else { return false }
        return (seen.screens == 2 && seen.detail == seen.list - 1) || (seen.screens == 1 && seen.detail == seen.list)
    }

    @Test func theKitsKillAndARealKillLeaveTheSameClassOfOutcomes() throws {
        var real: [(screens: Int, list: Int, detail: Int)] = []
        for _ in 0..<3 {
            let file = try TemporaryStore("real-kill")
            let worker = try runProgram(
                try builtProduct("statestore-worker"), ["writebehind-kill", file.path, String(Self.steps), "64"])
            #expect(worker.status == SIGKILL, "the worker ended otherwise: \(worker)")
            #expect(worker.output.split(separator: "\n") == ["flushed 1", "handed \(Self.steps)"], "\(worker.output)")
            #expect(walSize(file) > 32, "a killed process leaves its commits in the WAL")
            let relaunched = try file.launch { try KitStepApp(store: $0) }
            let seen = try relaunched.app.seen()
            #expect(isAllowed(seen), "after a real kill: \(seen)")
            real.append(seen)
        }

        let file = try TemporaryStore("kit-kill")
        let launch = try file.launch { try KitStepApp(store: $0) }
        try launch.app.run(steps: Self.steps, padding: 64)
        try launch.end(.kill)
        #expect(walSize(file) > 32, "the kit's kill should leave the commits in the WAL, as a killed process does")
        let relaunched = try launch.relaunch(after: .kill)
        let simulated = try relaunched.app.seen()
        #expect(isAllowed(simulated), "after the kit's kill: \(simulated)")
        // Held until the flush point, nothing after it was committed: the class's worst case.
        #expect(simulated == (1, 1, 1), "\(simulated)")
        print("kill -9 after \(Self.steps) steps, (screens, list, detail) seen: real \(real), kit \(simulated)")
    }
}
