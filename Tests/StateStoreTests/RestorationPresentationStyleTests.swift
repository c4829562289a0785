import Foundation
import StateStoreTesting
import Testing

@testable import StateStore

/// A note shown as a page sheet, as its class decides when it is made.
final class SheetNoteController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var text = "" }
    var restorableState = State()

    override init() {
        super.init()
        modalPresentationStyle = .pageSheet
    }
}

/// A navigation controller that defines a presentation context.
final class ContextNavigationController: NavigationController {
    override init() {
        super.init()
        definesPresentationContext = true
    }
}

/// A note shown over the current context.
final class CoverNoteController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var text = "" }
    var restorableState = State()

    override init() {
        super.init()
        modalPresentationStyle = .overCurrentContext
    }
}

/// What saving and restoring do under each presentation style (see `ModalPresentationStyle`).
@MainActor
@Suite("Restoration: presentation styles")
struct RestorationPresentationStyleTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    func storyboard() -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register("root") { NoteController() }
        storyboard.register("sheet") { SheetNoteController() }
        storyboard.register("full") { NoteController() }
        storyboard.register("tabs") { TabBarController() }
        storyboard.register("context") { ContextNavigationController() }
        storyboard.register("cover") { CoverNoteController() }
        return storyboard
    }

    func launch(_ store: StateStore) throws -> (Application, Window, NoteController) {
        let application = Application(store: store, storyboard: storyboard())
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        let window = Window(size: Size(width: 390, height: 844), application: application)
        let root = try #require(
            try application.storyboard.instantiateViewController(withIdentifier: "root") as? NoteController)
        window.rootViewController = root
        window.makeKeyAndVisible()
        return (application, window, root)
    }

    /// The app's launch code, as the testing kit runs it on each (re)launch: the hierarchy
    /// saved, else the first screens `build` puts in the window.
    func launchRestoring(
        _ store: StateStore, build: (Application, Window) throws -> Void
    ) throws -> LaunchedWindow {
        let application = Application(store: store, storyboard: storyboard())
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        let window = Window(size: Size(width: 390, height: 844), application: application)
        if try !application.restoreHierarchy(in: window) {
            try build(application, window)
            window.makeKeyAndVisible()
        }
        return LaunchedWindow(application: application, window: window)
    }

    @Test func aPageSheetsPresenterIsSavedAtTheFlushPointsNotWhenTheSheetAppears() throws {
        let store = try StateStore(path: database)
        let (application, _, root) = try launch(store)
        let sheet = try #require(
            try application.storyboard.instantiateViewController(withIdentifier: "sheet") as? SheetNoteController)
        root.uncommittedText = "typed under the sheet"
        root.restorableState.edits = 2
        root.present(sheet, animated: true)
        // The presenter stayed on screen: no viewWillDisappear, nothing saved, nothing committed.
        #expect(root.lifecycleState == .appeared)
        #expect(try store.restore(NoteController.State.self, for: "root") == nil)
        #expect(root.uncommittedText == "typed under the sheet")

        // The sheet is saved when the user swipes it away.
        sheet.restorableState.text = "in the sheet"
        #expect(sheet.presentationController?.dismissInteractively() == true)
        #expect(try store.restore(SheetNoteController.State.self, for: "root/sheet") == .init(text: "in the sheet"))

        // The presenter, still on screen, is saved at the flush points: a critical warning
        // saves what it holds; terminating closes the window, so it disappears and commits.
        application.didReceiveMemoryWarning(level: .critical)
        #expect(try store.restore(NoteController.State.self, for: "root") == .init(text: "", edits: 2))
        application.terminate()
        #expect(
            try store.restore(NoteController.State.self, for: "root") == .init(text: "typed under the sheet", edits: 2))
    }

    @Test func aFullScreenPresenterIsSavedWhenItDisappears() throws {
        let store = try StateStore(path: database)
        let (application, _, root) = try launch(store)
        root.uncommittedText = "committed on present"
        root.present(try application.storyboard.instantiateViewController(withIdentifier: "full"), animated: true)
        #expect(root.lifecycleState == .disappeared)
        application.restorationCoordinator?.flush()
        #expect(
            try store.restore(NoteController.State.self, for: "root") == .init(text: "committed on present", edits: 0))
    }

    @Test func aRestoredPageSheetIsASheetOverItsVisiblePresenter() throws {
        let launch = try TemporaryStore().launch { store in
            try launchRestoring(store) { application, window in
                window.rootViewController = try application.storyboard.instantiateViewController(withIdentifier: "root")
            }
        }
        let first = try #require(launch.window.rootViewController as? NoteController)
        let presented = try #require(
            try launch.application.storyboard.instantiateViewController(withIdentifier: "sheet") as? SheetNoteController
        )
        first.restorableState.text = "under"
        first.present(presented, animated: false)
        presented.restorableState.text = "on top"

        let window = try launch.relaunch(after: .termination).window
        let root = try #require(window.rootViewController as? NoteController)
        let sheet = try #require(root.presentedViewController as? SheetNoteController)
        #expect(sheet.modalPresentationStyle == .pageSheet)
        #expect(root.lifecycleState == .appeared && sheet.lifecycleState == .appeared)
        #expect(root.restorableState.text == "under" && root.stateInWillAppear?.text == "under")
        #expect(sheet.restorableState == .init(text: "on top"))
        #expect(sheet.view.frame == Rect(x: 0, y: 10, width: 390, height: 834))
    }

    @Test func aControllerOverItsContextIsSavedUnderItsPresenterAndRestoredThere() throws {
        let launch = try TemporaryStore().launch { store in
            try launchRestoring(store) { application, window in
                let board = application.storyboard
                let tabs = try #require(
                    try board.instantiateViewController(withIdentifier: "tabs") as? TabBarController)
                let context = try #require(
                    try board.instantiateViewController(withIdentifier: "context") as? NavigationController)
                context.setViewControllers(
                    [try board.instantiateViewController(withIdentifier: "root")], animated: false)
                tabs.viewControllers = [context, try board.instantiateViewController(withIdentifier: "full")]
                window.rootViewController = tabs
            }
        }
        let firstTabs = try #require(launch.window.rootViewController as? TabBarController)
        let firstContext = try #require(firstTabs.viewControllers.first as? NavigationController)
        let firstCover = try #require(
            try launch.application.storyboard.instantiateViewController(withIdentifier: "cover") as? CoverNoteController
        )
        firstContext.topViewController?.present(firstCover, animated: false)
        firstCover.restorableState.text = "over the context"
        // A tab switch hides it with its context: it disappears, so it is saved.
        firstTabs.selectedIndex = 1
        launch.application.restorationCoordinator?.flush()
        #expect(
            try launch.store.restore(CoverNoteController.State.self, for: "tabs/context/cover")
                == .init(text: "over the context"))
        firstTabs.selectedIndex = 0

        let window = try launch.relaunch(after: .termination).window
        let tabs = try #require(window.rootViewController as? TabBarController)
        let context = try #require(tabs.viewControllers.first as? NavigationController)
        let cover = try #require(context.presentedViewController as? CoverNoteController)
        #expect(cover.presentingViewController === context && tabs.presentedViewController == nil)
        #expect(cover.lifecycleState == .appeared && context.lifecycleState == .appeared)
        #expect(cover.restorableState == .init(text: "over the context"))
    }
}
