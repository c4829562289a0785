// What statectl inspect and statectl check print, read by an app through the same public API:
// the stored states, newest first, and the health of the file.

// snippet.hide
import Foundation
// snippet.show
import StateStore

func describe(database: String) throws {
    let store = try StateStore(path: database, options: .init(readOnly: true))  // writes nothing
    for entry in try store.entries().sorted(by: { $0.updatedAt > $1.updatedAt }) {
        print(entry.path, entry.typeName, "v\(entry.version)", "\(entry.byteCount) bytes")  // statectl inspect
    }
    let health = try store.check()  // statectl check: integrity_check and every row's checksum
    print(health.isHealthy ? "healthy" : "problems: \(health)")
}
// snippet.hide

let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-statectl-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let database = folder.appending(path: "state.sqlite").path
do {
    let store = try StateStore(path: database)
    try store.save("Dear Ada,", for: "main/compose")
}
try describe(database: database)
