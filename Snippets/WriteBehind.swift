// One push and pop of a screen whose 1 KB state changed, as the `push pop 1KB` benchmark
// times it: the save is handed to the store's writer thread, so the main thread does not wait
// for SQLite. A flush point waits until it is committed and synced (`push pop durable 1KB`).

// snippet.hide
import Foundation
import StateStore

final class NoteController: ViewController, StateRestoring {
    struct Note: Codable, Sendable { var text = "" }
    var restorableState = Note()
}
let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-writebehind-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let application = Application(store: try StateStore(path: folder.appending(path: "state.sqlite").path))
let window = Window(size: Size(width: 390, height: 844), application: application)
let home = ViewController()
home.restorationIdentifier = "home"
let navigation = NavigationController(rootViewController: home)
navigation.restorationIdentifier = "notes"
window.rootViewController = navigation
window.makeKeyAndVisible()
let editor = NoteController()
editor.restorationIdentifier = "editor"
// snippet.show
let clock = ContinuousClock()
let cycle = clock.measure {
    navigation.pushViewController(editor, animated: false)
    editor.restorableState.text = String(repeating: "x", count: 1024)
    navigation.popViewController(animated: false)  // saved after viewWillDisappear, written behind
}
let durable = clock.measure {
    application.restorationCoordinator?.flush()  // committed, and the WAL synced to storage
}
print("push + pop: \(cycle), flush: \(durable)")
// snippet.hide
let saved = try application.store?.restore(NoteController.Note.self, for: "notes/editor")
precondition(saved?.text.count == 1024, "the editor's state was not saved: \(String(describing: saved))")
application.terminate()
