// A second instance of an app on the same database: its window gets a scene of its own when
// the default one is held by another live process, and says which.

// snippet.hide
import Foundation
import StateStore

let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-scenes-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let database = folder.appending(path: "state.sqlite").path
let storyboard = Storyboard()
storyboard.register("home") { ViewController() }
let application = Application(store: try StateStore(path: database), storyboard: storyboard)
// snippet.show
let window = Window(size: Size(width: 390, height: 844), application: application)
if let held = window.sceneAssignment?.passedOver {
    // "main" is open in another live process: this window shows another scene.
    print("scene \(window.sceneIdentifier): \(held.scene) is held by \(held)")
}
try application.restoreHierarchy(in: window)
// snippet.hide
print(window.sceneAssignment.map { "\($0)" } ?? "no scene assignment")
application.terminate()
