import Foundation
import StateStore

extension Launch: @MainActor CustomStringConvertible {
    /// ``diagnosis``: so that `#expect(condition, "\(launch)")` or `XCTAssert(condition, "\(launch)")`
    /// shows, when it fails, what the user saw and why.
    public var description: String { diagnosis }

    /// What a failed expectation about this launch needs, in text: the window and its
    /// controllers as the user sees them (each with its restoration path, lifecycle state and
    /// restorable state as JSON), the rows the database holds (committed, as a new process
    /// would read them: nothing is asked of the launch's writer, so looking does not change
    /// what a kill would lose), the quarantine, and the launch's lifecycle trace.
    public var diagnosis: String {
        var lines: [String] = []
        lines.append(
            "Launch on \(temporaryStore.path)" + (ending.map { ", ended by \($0)" } ?? ", running"))
        if let startedAfter { lines.append("Started after the \(startedAfter)") }
        let window = self.window
        lines.append(
            "Window \"\(window.sceneIdentifier)\" \(Int(window.size.width))x\(Int(window.size.height)) \(window.orientation)"
                + (window.isVisible ? ", visible" : ", not visible") + (window.isKeyWindow ? ", key" : ""))
        if let root = window.rootViewController {
            describe(root, depth: 1, into: &lines)
        } else {
            lines.append("  (no root view controller)")
        }
        lines.append(contentsOf: storedRows())
        lines.append("Lifecycle trace (\(trace.lines.count) callbacks):")
        lines.append(contentsOf: trace.lines.suffix(200).map { "  " + $0 })
        if trace.lines.count > 200 {
            lines.insert("  (the first \(trace.lines.count - 200) left out)", at: lines.count - 200)
        }
        return lines.joined(separator: "\n")
    }

    /// `controller` and what it shows, indented by `depth`.
    private func describe(_ controller: ViewController, depth: Int, into lines: inout [String]) {
        let indent = String(repeating: "  ", count: depth)
        var line = "\(indent)\(type(of: controller))"
        if let identifier = controller.restorationIdentifier { line += " \"\(identifier)\"" }
        line += " [\(controller.lifecycleState)]"
        if let path = application.restorationCoordinator?.restorationPath(for: controller) {
            line += " at \(path.rawValue)"
        }
        if let restoring = controller as? any StateRestoring {
            line += " state " + Self.json(of: restoring)
        }
        lines.append(line)
        for child in controller.children { describe(child, depth: depth + 1, into: &lines) }
        if let presented = controller.presentedViewController, presented.presentingViewController === controller {
            lines.append("\(indent)presents:")
            describe(presented, depth: depth + 1, into: &lines)
        }
    }

    /// The controller's restorable state as compact JSON, sorted keys.
    private static func json(of controller: some StateRestoring) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(controller.restorableState) else { return "(not encodable)" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The committed rows and the quarantine, read through a read-only store of their own.
    private func storedRows() -> [String] {
        var options = temporaryStore.options
        options.readOnly = true
        options.backgroundCheck = .off
        do {
            let reader = try StateStore(path: temporaryStore.path, options: options)
            let states = try reader.states()
            var lines = ["Stored states (\(states.count)):"]
            for state in states {
                lines.append(
                    "  \(state.path.rawValue)  \(state.typeName) v\(state.version)  \(state.bytes.count) B  "
                        + Self.preview(state.bytes))
            }
            let quarantined = try reader.quarantinedStates()
            lines.append("Quarantine (\(quarantined.count)):")
            for row in quarantined {
                lines.append("  \(row.path.rawValue)  \(row.typeName) v\(row.version): \(row.reason)")
            }
            return lines
        } catch {
            return ["Stored states: the database could not be read (\(error))"]
        }
    }

    /// The first 200 characters of `bytes` as text, or their length when they are not UTF-8.
    private static func preview(_ bytes: Data) -> String {
        guard let text = String(data: bytes.prefix(200), encoding: .utf8) else { return "(binary)" }
        return bytes.count > 200 ? text + "…" : text
    }
}
