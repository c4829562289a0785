// A notes app's restoration, tested in process with StateStoreTesting: a kill -9 loses what the
// writer had not committed, a termination loses nothing, a power cut loses nothing synced, and
// each relaunch shows what the user would see. In a test, each `precondition` would be an `#expect` (or an `XCTAssert`).

// snippet.hide
import StateStore
import StateStoreTesting

final class NoteController: ViewController, StateRestoring {
    struct Note: Codable, Sendable { var text = "" }
    var restorableState = Note()
}

/// The app's own launch: restore where the user left off, or show the first screen.
final class NotesApp: LaunchedApp {
    let application: Application
    let window: Window

    init(store: StateStore) throws {
        let storyboard = Storyboard()
        storyboard.register("notes") { NavigationController() }
        storyboard.register("note") { NoteController() }
        storyboard.register("settings") { ViewController() }
        application = Application(store: store, storyboard: storyboard)
        window = Window(size: Size(width: 390, height: 844), application: application)
        if try !application.restoreHierarchy(in: window) {
            let notes = try storyboard.instantiateViewController(withIdentifier: "notes") as! NavigationController
            notes.setViewControllers(
                [try storyboard.instantiateViewController(withIdentifier: "note")], animated: false)
            window.rootViewController = notes
            window.makeKeyAndVisible()
        }
    }

    var notes: NavigationController { window.rootViewController as! NavigationController }
    var note: NoteController { notes.viewControllers[0] as! NoteController }

    func openSettings() throws {
        notes.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "settings"), animated: false)
    }
}
// snippet.show
let store = try TemporaryStore()  // a folder of its own, removed afterwards
var launch = try store.launch { store in try NotesApp(store: store) }
launch.app.note.restorableState.text = "Dear Ada,"
launch.application.saveVisibleState()  // a flush point: committed

launch.app.note.restorableState.text = "Dear Ada, thank you"
try launch.app.openSettings()  // the note disappears: its state goes to the writer
launch = try launch.relaunch(after: .kill)
// The writer had not committed it: the user is back at the note, as the flush point left it.
precondition(launch.app.notes.viewControllers.count == 1)
precondition(launch.app.note.restorableState.text == "Dear Ada,")

launch.app.note.restorableState.text = "Dear Ada, thank you"
launch = try launch.relaunch(after: .termination)  // terminate() saves what is visible
precondition(launch.app.note.restorableState.text == "Dear Ada, thank you")

launch.app.note.restorableState.text = "Dear Ada, thank you for the book"
launch.application.saveVisibleState()  // a flush point syncs what it commits
launch = try launch.relaunch(after: .powerCut(seed: 42))  // the disk keeps what seed 42 draws
// Whatever the draw, what was synced is there; the diagnosis (`"\(launch)"`) names the seed.
precondition(launch.app.note.restorableState.text == "Dear Ada, thank you for the book")
// snippet.hide
try launch.end(.termination)
store.remove()
print("restored after kill -9: the flush point's note; after termination and a power cut: the last one")
