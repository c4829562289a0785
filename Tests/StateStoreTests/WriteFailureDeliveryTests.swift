import Foundation
import Testing

@testable import StateStore

/// A write-behind write that fails reaches `errorHandler` before the read or flush point that
/// waited for it returns: never only at a later main-actor turn.
@MainActor
@Suite("Write failures delivered where they matter")
struct WriteFailureDeliveryTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    /// A window showing `nav/a`, its coordinator writing behind, its errors collected.
    func launch(_ store: StateStore) throws -> (Application, NavigationController, Errors) {
        let storyboard = Storyboard()
        storyboard.register("nav") { NavigationController() }
        storyboard.register("a") { NoteController() }
        storyboard.register("b") { NoteController() }
        let application = Application(store: store, storyboard: storyboard)
        let coordinator = try #require(application.restorationCoordinator)
        #expect(coordinator.writesBehind)
        let errors = Errors()
        coordinator.errorHandler = { errors.list.append($0) }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = try #require(
            try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
        navigation.setViewControllers([try storyboard.instantiateViewController(withIdentifier: "a")], animated: false)
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        coordinator.flush()
        return (application, navigation, errors)
    }

    final class Errors { var list: [RestorationError] = [] }

    /// Makes every write of a state fail, as another program's trigger on the real file would.
    func refuseStateWrites() throws {
        try rawSQL(
            database,
            """
            CREATE TRIGGER refuse_insert BEFORE INSERT ON states BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;
            CREATE TRIGGER refuse_update BEFORE UPDATE ON states BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;
            """)
    }

    func refusals(_ errors: Errors) -> Int {
        errors.list.filter { $0.description.contains("refused by the test") }.count
    }

    @Test func aReadThatWaitedForAFailedWriteDeliversTheFailureBeforeItReturns() throws {
        let store = try StateStore(path: database)
        let (application, navigation, errors) = try launch(store)
        try refuseStateWrites()
        (try #require(navigation.topViewController as? NoteController)).restorableState.text = "edited"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        #expect(refusals(errors) == 0)
        // No main-actor turn passes: the read waits for the writer and hands over its failure.
        let stored = try store.restore(NoteController.State.self, for: "nav/a")
        #expect(stored?.text != "edited")
        #expect(refusals(errors) >= 1)
        let delivered = errors.list.count
        // Delivered once: a flush point afterwards does not repeat it.
        application.restorationCoordinator?.flush()
        #expect(errors.list.count == delivered)
    }

    @Test func everyFlushPointDeliversTheFailureBeforeItReturns() throws {
        let store = try StateStore(path: database)
        let (application, navigation, errors) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        try refuseStateWrites()
        var expected = 0
        let flushPoints: [(String, () -> Void)] = [
            ("flush", { coordinator.flush() }),
            ("saveVisibleControllers", { coordinator.saveVisibleControllers(of: application) }),
            ("statistics", { _ = coordinator.statistics }),
            ("waitForWriteBehind", { store.waitForWriteBehind() }),
        ]
        for (index, (name, flushPoint)) in flushPoints.enumerated() {
            let top = try #require(navigation.topViewController as? NoteController)
            top.restorableState.text = "edit \(index)"
            top.restorableState.edits = index + 1
            if index % 2 == 0 {
                navigation.pushViewController(
                    try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
            } else {
                _ = navigation.popViewController(animated: false)
            }
            expected += 1
            flushPoint()
            #expect(refusals(errors) >= expected, "\(name) returned before the failure was delivered")
            expected = refusals(errors)
        }
    }
}
