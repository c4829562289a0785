import Foundation
import StateStore
import StateStoreTesting
import Testing

/// A notes app as its own launch code makes it, written against the public API only, as an
/// app's tests would: a navigation controller with the list, from which a note is opened.
@MainActor
final class KitNotesApp: LaunchedApp {
    final class List: ViewController, StateRestoring {
        struct State: Codable, Sendable, Equatable { var selected: String? }
        var restorableState = State()
    }
    final class Note: ViewController, StateRestoring {
        struct State: Codable, Sendable, Equatable { var text = "" }
        var restorableState = State()
    }

    let application: Application
    let window: Window
    /// Whether the launch rebuilt a saved hierarchy.
    let restored: Bool

    init(store: StateStore) throws {
        let storyboard = Storyboard()
        storyboard.register("notes") { NavigationController() }
        storyboard.register("list") { List() }
        storyboard.register("note") { Note() }
        application = Application(store: store, storyboard: storyboard)
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        restored = try application.restoreHierarchy(in: window)
        if !restored {
            let navigation = try #require(
                try storyboard.instantiateViewController(withIdentifier: "notes") as? NavigationController)
            navigation.setViewControllers(
                [try storyboard.instantiateViewController(withIdentifier: "list")], animated: false)
            window.rootViewController = navigation
            window.makeKeyAndVisible()
        }
    }

    var navigation: NavigationController { window.rootViewController as! NavigationController }
    var list: List { navigation.viewControllers[0] as! List }
    var note: Note? { navigation.viewControllers.dropFirst().first as? Note }

    /// Opens a note over the list.
    @discardableResult
    func openNote() throws -> Note {
        let note = try #require(try application.storyboard.instantiateViewController(withIdentifier: "note") as? Note)
        navigation.pushViewController(note, animated: false)
        return note
    }
}

@MainActor
@Suite("StateStoreTesting: a store per test, relaunch after termination and kill -9")
struct TestingKitTests {
    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1
    }

    @Test func eachTemporaryStoreHasAFolderOfItsOwnRemovedAfterwards() throws {
        var folders: [String] = []
        do {
            let one = try TemporaryStore(), other = try TemporaryStore()
            #expect(one.folder != other.folder)
            #expect(one.path == one.folder + "/state.sqlite")
            #expect(one.walPath == one.path + "-wal")
            #expect(one.folder.contains("eachTemporaryStoreHasAFolderOfItsOwn"), "\(one.folder)")
            #expect(permissions(one.folder) == 0o700)
            try one.open().save("one", for: "root")
            #expect(permissions(one.path) == 0o600)
            #expect(try other.open().restore(String.self, for: "root") == nil)
            folders = [one.folder, other.folder]
        }
        for folder in folders { #expect(!FileManager.default.fileExists(atPath: folder), "\(folder) was left") }

        let removed = try TemporaryStore()
        try removed.open().save("x", for: "root")
        removed.remove()
        #expect(!FileManager.default.fileExists(atPath: removed.folder))
    }

    /// Stores made at the same moment on many threads, as parallel tests make them, never share
    /// a file.
    @Test nonisolated func storesMadeAtOnceNeverShareAFile() async throws {
        let results = try await withThrowingTaskGroup(of: (String, String?).self) { group in
            for index in 0..<16 {
                group.addTask {
                    let store = try TemporaryStore("parallel")
                    let opened = try store.open()
                    try opened.save("\(index)", for: "root")
                    return (
                        store.folder,
                        try opened.restore(String.self, for: "root").map { "\($0)" == "\(index)" ? $0 : "" }
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(results.map(\.0)).count == 16)
        #expect(results.allSatisfy { $0.1?.isEmpty == false })
    }

    /// After `terminate()`, everything the user left is back: the note on screen with its text,
    /// and the list's selection once the user goes back to it.
    @Test func aRelaunchAfterTerminationShowsEverythingTheUserLeft() throws {
        let temporary = try TemporaryStore()
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        #expect(!first.app.restored)
        first.app.list.restorableState.selected = "groceries"
        try first.app.openNote().restorableState.text = "milk, eggs"

        let second = try first.relaunch(after: .termination)
        #expect(first.ending == .termination)
        #expect(second.app.restored)
        #expect(second.window === second.app.window && second.application === second.app.application)
        #expect(second.app.navigation.viewControllers.count == 2)
        #expect(second.app.note?.restorableState.text == "milk, eggs")
        _ = second.app.navigation.popViewController(animated: false)
        #expect(second.app.list.restorableState.selected == "groceries")
    }

    /// After a kill, the user is back where the last flush point left them: what was handed to
    /// the writer since is gone, and the WAL is left as a killed process leaves it.
    @Test func aRelaunchAfterAKillShowsTheLastFlushPoint() throws {
        let temporary = try TemporaryStore()
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        first.app.list.restorableState.selected = "groceries"
        first.application.saveVisibleState()
        first.app.list.restorableState.selected = "work"
        try first.app.openNote().restorableState.text = "milk"
        _ = first.app.navigation.popViewController(animated: false)

        try first.end(.kill)
        #expect(first.ending == .kill)
        #expect(size(temporary.walPath) > 32, "the WAL should hold the flush point's commit, not checkpointed")
        let second = try first.relaunch(after: .kill)
        #expect(second.app.restored)
        #expect(second.app.navigation.viewControllers.count == 1)
        #expect(second.app.list.restorableState.selected == "groceries")
        #expect(try second.store.restore(KitNotesApp.Note.State.self, for: "notes/note") == nil)
    }

    /// "At this moment" is the test's to choose: once it has waited for the writer, a kill keeps
    /// everything handed over before.
    @Test func aKillAfterWaitingForTheWriterKeepsWhatItCommitted() throws {
        let temporary = try TemporaryStore()
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        first.app.list.restorableState.selected = "work"
        try first.app.openNote().restorableState.text = "milk"
        _ = first.app.navigation.popViewController(animated: false)
        first.store.waitForWriteBehind()

        let second = try first.relaunch(after: .kill)
        #expect(second.app.navigation.viewControllers.count == 1)
        #expect(second.app.list.restorableState.selected == "work")
        #expect(try second.store.restore(KitNotesApp.Note.State.self, for: "notes/note") == .init(text: "milk"))
    }

    /// An ended launch writes nothing more, however the test drives it; one process at a time
    /// runs on the file; each launch ends one way and relaunches once.
    @Test func anEndedLaunchWritesNothingAndLaunchesFollowOneAnother() throws {
        let temporary = try TemporaryStore()
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        first.app.list.restorableState.selected = "kept"
        first.application.saveVisibleState()
        #expect(throws: StateStoreTestingError.launchStillRunning(path: temporary.path)) {
            _ = try temporary.launch { try KitNotesApp(store: $0) }
        }
        try first.end(.kill)
        try first.end(.kill)
        #expect(throws: StateStoreTestingError.alreadyEnded(.kill, requested: .termination)) {
            try first.end(.termination)
        }

        first.app.list.restorableState.selected = "after death"
        try first.app.openNote().restorableState.text = "after death"
        first.application.saveVisibleState()
        first.application.terminate()
        #expect(throws: StateStoreError.self) { _ = try first.store.entries() }

        let second = try first.relaunch(after: .kill)
        #expect(throws: StateStoreTestingError.alreadyRelaunched(path: temporary.path)) {
            _ = try first.relaunch(after: .kill)
        }
        #expect(second.app.navigation.viewControllers.count == 1)
        #expect(second.app.list.restorableState.selected == "kept")
        #expect(try second.store.entries().map(\.path) == ["notes/list"])
    }

    /// A launch whose code throws is a process that crashed at launch: the error reaches the
    /// test, and the next launch runs.
    @Test func aLaunchThatThrowsLeavesTheFileToTheNext() throws {
        struct CrashedAtLaunch: Error {}
        let temporary = try TemporaryStore()
        #expect(throws: CrashedAtLaunch.self) {
            _ = try temporary.launch { store -> KitNotesApp in
                _ = try KitNotesApp(store: store)
                throw CrashedAtLaunch()
            }
        }
        let next = try temporary.launch { try KitNotesApp(store: $0) }
        #expect(next.app.navigation.viewControllers.count == 1)
    }
}
