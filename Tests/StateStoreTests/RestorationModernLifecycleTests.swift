import Foundation
import Testing

@testable import StateStore

/// A note that records the state it saw in `viewIsAppearing`.
final class AppearingNoteController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var text = "" }
    var restorableState = State()
    var stateInIsAppearing: State?

    override func viewIsAppearing(_ animated: Bool) {
        stateInIsAppearing = restorableState
    }
}

/// What the modern lifecycle API does to saving and restoring: each transition that makes a
/// controller disappear saves it, each that makes one appear restores it before
/// `viewIsAppearing`, and size transitions save nothing.
@MainActor
@Suite("Restoration: the modern lifecycle API")
struct RestorationModernLifecycleTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    func application(_ store: StateStore) -> (Application, Window) {
        let application = Application(store: store)
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        return (application, Window(size: Size(width: 390, height: 844), application: application))
    }

    func note(_ name: String) -> AppearingNoteController {
        let note = AppearingNoteController()
        note.restorationIdentifier = name
        return note
    }

    @Test func viewIsAppearingSeesTheRestoredState() throws {
        let store = try StateStore(path: database)
        try store.save(AppearingNoteController.State(text: "from last time"), for: "a")
        let (application, window) = application(store)
        let a = note("a")
        window.rootViewController = a
        window.makeKeyAndVisible()
        #expect(a.stateInIsAppearing == .init(text: "from last time"))
        #expect(application.restorationCoordinator?.statistics.restores == 1)
    }

    @Test func aCustomContainerTransitionSavesTheChildItHidesAndRestoresTheOneItShows() throws {
        let store = try StateStore(path: database)
        try store.save(AppearingNoteController.State(text: "saved b"), for: "pair/b")
        let (application, window) = application(store)
        let pair = ViewController()
        pair.restorationIdentifier = "pair"
        let a = note("a"), b = note("b")
        window.rootViewController = pair
        pair.addChild(a)
        pair.addChild(b)
        pair.transition(from: b, to: a, duration: 0, animations: nil)
        window.makeKeyAndVisible()
        a.restorableState.text = "edited a"
        pair.transition(from: a, to: b, duration: 0.3, animations: nil)
        application.restorationCoordinator?.flush()
        #expect(try store.restore(AppearingNoteController.State.self, for: "pair/a") == .init(text: "edited a"))
        #expect(b.stateInIsAppearing == .init(text: "saved b"))
    }

    @Test func aTabTapAndShowSaveWhatTheyHide() throws {
        let store = try StateStore(path: database)
        let (application, window) = application(store)
        let a = note("a"), b = note("b"), c = note("c")
        let nav = NavigationController(rootViewController: a)
        nav.restorationIdentifier = "nav"
        let tabs = TabBarController(viewControllers: [nav, c])
        tabs.restorationIdentifier = "tabs"
        window.rootViewController = tabs
        window.makeKeyAndVisible()
        a.restorableState.text = "shown over"
        a.show(b, sender: nil)
        b.restorableState.text = "tapped away"
        #expect(tabs.tapTabBarItem(at: 1))
        application.restorationCoordinator?.flush()
        #expect(try store.restore(AppearingNoteController.State.self, for: "tabs/nav/a") == .init(text: "shown over"))
        #expect(try store.restore(AppearingNoteController.State.self, for: "tabs/nav/b") == .init(text: "tapped away"))
    }

    @Test func aRotationSavesNothing() throws {
        let store = try StateStore(path: database)
        let (application, window) = application(store)
        let a = note("a")
        window.rootViewController = a
        window.makeKeyAndVisible()
        let coordinator = try #require(application.restorationCoordinator)
        let before = coordinator.statistics.saveAttempts
        a.restorableState.text = "unsaved"
        #expect(window.rotate(to: .landscapeLeft))
        window.resize(to: Size(width: 800, height: 390))
        coordinator.flush()
        #expect(coordinator.statistics.saveAttempts == before)
        #expect(try store.restore(AppearingNoteController.State.self, for: "a") == nil)
    }
}
