// A store whose states are sealed with a key from a systemd credential: encryption at rest,
// from the StateStoreCrypto product.

// snippet.hide
import Foundation
// snippet.show
import StateStore
import StateStoreCrypto

// snippet.hide
// The credential as systemd's LoadCredential= provides it: a 0600 file in $CREDENTIALS_DIRECTORY.
let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-sealed-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let keyPath = folder.appending(path: "app-state-key").path
precondition(
    FileManager.default.createFile(
        atPath: keyPath, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }),
        attributes: [.posixPermissions: 0o600]))
setenv("CREDENTIALS_DIRECTORY", folder.path, 1)
setenv("XDG_STATE_HOME", folder.path, 1)
// snippet.show
let key = try StateKey.credential("app-state-key")  // $CREDENTIALS_DIRECTORY/app-state-key
let store = try StateStore(
    path: StateStore.defaultPath(appName: "mail"),
    options: .init(sealer: StateKeyring(key)))
// snippet.hide
try store.save("Dear Ada,", for: "compose")
let restored = try store.restore(String.self, for: "compose")
precondition(restored == "Dear Ada,")
print("sealed with \(key): \(try store.statesByKey())")
