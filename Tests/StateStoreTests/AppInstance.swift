import Foundation
import Testing

/// One instance of the mail app in a process of its own (`statestore-worker scene-session` or
/// `scene-report`): its first line, then it runs until killed or terminated.
final class AppInstance {
    let process = Process()
    private let pipe = Pipe()
    /// The first line it printed ("ready scene=... outcome=... passed=... waited_ms=... restored=...").
    private(set) var firstLine = ""

    private let input = Pipe()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        firstLine = pipe.fileHandleForReading.availableLine() ?? ""
    }

    var pid: Int32 { process.processIdentifier }

    /// Types `text` as the draft (`scene-session`) and waits until it says it is saved.
    func save(_ text: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((text + "\n").utf8))
        let line = nextLine()
        try #require(line == "saved \(text)", "\(String(describing: line))")
    }

    /// The next line it prints, or `nil` at its end.
    func nextLine() -> String? { pipe.fileHandleForReading.availableLine() }

    /// `key=value` words of its first line.
    var fields: [String: String] { Self.fields(firstLine) }

    static func fields(_ line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for word in line.split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    /// Sends `signal` and waits for the process to end; returns its termination status.
    @discardableResult
    func end(with signal: Int32 = SIGKILL) -> Int32 {
        if process.isRunning { kill(pid, signal) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits for the process to end by itself; returns its termination status.
    func exitStatus() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { end() }
}
