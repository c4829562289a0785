// A note screen whose text comes back after the app is relaunched: the controller declares
// its state, the store saves it when the screen disappears and restores it before it appears,
// and the application rebuilds the screens that were showing.

// snippet.hide
import Foundation
// snippet.show
import StateStore

final class NoteController: ViewController, StateRestoring {
    struct Note: Codable, Sendable { var text = "" }
    var restorableState = Note()  // saved after viewWillDisappear, restored before viewWillAppear
}

@MainActor func launch(database: String) throws -> Application {
    let storyboard = Storyboard()
    storyboard.register("notes") { NavigationController() }
    storyboard.register("note") { NoteController() }
    let application = Application(store: try StateStore(path: database), storyboard: storyboard)
    let window = Window(size: Size(width: 390, height: 844), application: application)
    if try !application.restoreHierarchy(in: window) {  // nothing saved yet: the first screens
        let notes = try storyboard.instantiateViewController(withIdentifier: "notes") as! NavigationController
        notes.pushViewController(try storyboard.instantiateViewController(withIdentifier: "note"), animated: false)
        window.rootViewController = notes
        window.makeKeyAndVisible()
    }
    return application
}
// snippet.hide

let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-overview-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let database = folder.appending(path: "notes.sqlite").path

@MainActor func note(in application: Application) -> NoteController {
    let notes = application.windows[0].rootViewController as! NavigationController
    return notes.topViewController as! NoteController
}

do {
    let application = try launch(database: database)
    note(in: application).restorableState.text = "Buy milk"
    application.terminate()
}
let relaunched = try launch(database: database)
precondition(note(in: relaunched).restorableState.text == "Buy milk")
print("after the relaunch: \(note(in: relaunched).restorableState.text)")
relaunched.terminate()
