import Foundation

/// A fresh folder under the system's temporary directory, removed when the value is released.
final class TemporaryFolder: Sendable {
    let path: String

    init(_ name: String = #function) {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/statestore-\(safe.prefix(40))-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
