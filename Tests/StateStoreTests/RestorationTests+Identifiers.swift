import Foundation
import Testing

@testable import StateStore

/// Which controllers have a path: none without an identifier in their chain, none for siblings
/// that share one, and a screen replaced under its identifier hands its edit to the new one.
extension RestorationTests {
    @Test func aControllerWithoutAnIdentifierInItsChainIsNotSaved() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        let anonymous = NoteController()
        anonymous.restorationIdentifier = nil
        navigation.pushViewController(anonymous, animated: false)
        anonymous.restorableState.text = "nowhere to go"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        application.restorationCoordinator?.flush()
        #expect(try store.entries().map(\.path.rawValue) == ["nav/a"])
    }

    @Test func siblingsSharingAnIdentifierAreReportedAndNotSaved() throws {
        let store = try StateStore(path: database)
        let (application, window, navigation) = try launch(store)
        let parent = navigation.topViewController!
        for _ in 0..<2 {
            let child = NoteController()
            child.restorationIdentifier = "twin"
            child.restorableState.text = "which one?"
            parent.addChild(child)
        }
        window.close()
        application.restorationCoordinator?.flush()
        #expect(try store.entries().map(\.path.rawValue) == ["nav", "nav/a"])
        #expect(
            application.restorationCoordinator?.recentErrors.contains(
                .duplicateRestorationIdentifier(path: "nav/a/twin")) == true)
    }

    /// A path found once is kept for the next controllers met at it (a new page of the kind
    /// just pushed); once two siblings share its identifier, neither gets it: the one that
    /// disappears saves nothing and the one that appears restores nothing.
    @Test func aPathMetBeforeIsNotReusedOnceSiblingsShareIt() throws {
        let store = try StateStore(path: database)
        let (application, _, navigation) = try launch(store)
        func twin(_ text: String) -> NoteController {
            let note = NoteController()
            note.restorationIdentifier = "twin"
            note.restorableState.text = text
            return note
        }
        navigation.pushViewController(twin("first"), animated: false)
        _ = navigation.popViewController(animated: false)
        application.restorationCoordinator?.flush()
        #expect(try store.restore(NoteController.State.self, for: "nav/twin")?.text == "first")

        let shown = twin("")
        navigation.pushViewController(shown, animated: false)
        #expect(shown.stateInWillAppear?.text == "first")
        shown.restorableState.text = "typed while alone"
        let second = twin("second")
        navigation.pushViewController(second, animated: false)
        application.restorationCoordinator?.flush()
        #expect(second.stateInWillAppear?.text == "second")
        #expect(try store.restore(NoteController.State.self, for: "nav/twin")?.text == "first")
        #expect(
            application.restorationCoordinator?.recentErrors.contains(.duplicateRestorationIdentifier(path: "nav/twin"))
                == true)
    }

    /// A screen replaced by a new instance under the same identifier (`setViewControllers` on a
    /// stack or on a tab bar, beside a screen that stays): the leaving instance is no longer its
    /// container's child when it disappears, so it shares its path with nobody. Its last edit
    /// is saved, and the new instance appears with it.
    @Test(arguments: ["navigation", "tab bar"])
    func aScreenReplacedByANewInstanceUnderItsIdentifierHandsItsEditToIt(container: String) throws {
        let store = try StateStore(path: database)
        let storyboard = Storyboard()
        storyboard.registerRestoration(of: NoteController.self) { NoteController() }
        let application = Application(store: store, storyboard: storyboard)
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        func note(_ identifier: String) -> NoteController {
            let note = NoteController()
            note.restorationIdentifier = identifier
            return note
        }
        let other = note("other"), first = note("draft")
        let replace: (NoteController) -> Void
        if container == "navigation" {
            let navigation = NavigationController()
            navigation.setViewControllers([other, first], animated: false)
            navigation.restorationIdentifier = "root"
            window.rootViewController = navigation
            replace = { navigation.setViewControllers([other, $0], animated: false) }
        } else {
            let tabs = TabBarController()
            tabs.restorationIdentifier = "root"
            tabs.viewControllers = [other, first]
            tabs.selectedIndex = 1
            window.rootViewController = tabs
            replace = { tabs.setViewControllers([other, $0], animated: false) }
        }
        window.makeKeyAndVisible()
        first.uncommittedText = "typed before the swap"
        let second = note("draft")
        replace(second)
        #expect(second.stateInWillAppear?.text == "typed before the swap")
        application.restorationCoordinator?.flush()
        #expect(try store.restore(NoteController.State.self, for: "root/draft")?.text == "typed before the swap")
        #expect(application.restorationCoordinator?.recentErrors == [])
    }

    /// A screen pushed twice under one identifier, then popped (or a tab bar's twin tab
    /// removed): the one that leaves shares its path with the one that stays, which has been on
    /// screen. Neither saves, as while both were listed, and the one that stays keeps its own
    /// state; the one leaving does not write its state into it.
    @Test(arguments: ["pop", "setViewControllers"])
    func aTwinThatLeavesDoesNotWriteItsStateIntoTheOneThatStays(how: String) throws {
        let store = try StateStore(path: database)
        try store.save(NoteController.State(text: "stored"), for: "nav/twin")
        let (application, _, navigation) = try launch(store)
        func twin() -> NoteController {
            let note = NoteController()
            note.restorationIdentifier = "twin"
            return note
        }
        let first = twin()
        navigation.pushViewController(first, animated: false)
        #expect(first.stateInWillAppear?.text == "stored")
        first.restorableState.text = "first's own"
        let second = twin()
        navigation.pushViewController(second, animated: false)
        second.restorableState.text = "second's"
        if how == "pop" {
            _ = navigation.popViewController(animated: false)
        } else {
            navigation.setViewControllers(Array(navigation.viewControllers.dropLast()), animated: false)
        }
        #expect(first.stateInWillAppear?.text == "first's own")
        #expect(first.restorableState.text == "first's own")
        application.restorationCoordinator?.flush()
        #expect(try store.restore(NoteController.State.self, for: "nav/twin")?.text != "second's")
        #expect(
            application.restorationCoordinator?.recentErrors.contains(.duplicateRestorationIdentifier(path: "nav/twin"))
                == true)
    }
}
