// Every state of one store moved into another through an export document.

// snippet.hide
import Foundation
import StateStore

let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-export-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let store = try StateStore(path: folder.appending(path: "a.sqlite").path)
let other = try StateStore(path: folder.appending(path: "b.sqlite").path)
try store.save("Dear Ada,", for: "compose")

// snippet.show
let data = try StateExport(store: store).encoded()
let export = try StateExport(decoding: data, maximumStateSize: other.options.maximumStateSize)
let result = try other.importStates(export, replace: false)
// snippet.hide
print(result)
