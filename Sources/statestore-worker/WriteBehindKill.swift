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
enum WriteBehindKill {
    final class StepController: ViewController, StateRestoring {
        struct State: Codable, Sendable { var step = 0; var padding = "" }
        var restorableState = State()
    }

    @MainActor
    static func run(database: String, steps: Int, padding: Int, exitingNormally: Bool = false) -> Never {
        do {
            let store = try StateStore(path: database)
            let storyboard = Storyboard()
            let filler = String(repeating: "x", count: padding)
            storyboard.register("list") { StepController() }
            storyboard.register("detail") { StepController() }
            storyboard.register("nav") { NavigationController() }
            let application = Application(store: store, storyboard: storyboard)
            let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
            guard let navigation = try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController,
                  let list = try storyboard.instantiateViewController(withIdentifier: "list") as? StepController
            else { fail("the storyboard made the wrong controllers") }
            navigation.setViewControllers([list], animated: false)
            window.rootViewController = navigation
            window.makeKeyAndVisible()
            for step in 1...max(steps, 1) {
                list.restorableState = .init(step: step, padding: filler)
                guard let detail = try storyboard.instantiateViewController(withIdentifier: "detail") as? StepController else {
                    fail("the storyboard made the wrong detail controller")
                }
                navigation.pushViewController(detail, animated: false)
                detail.restorableState = .init(step: step, padding: filler)
                _ = navigation.popViewController(animated: false)
                if step == 1 {
                    application.saveVisibleState()
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
}
