import Foundation
import Testing

@testable import StateStore

/// Real launches of a real process: the example mail app (`Examples/Mail`) in `statestore-worker`.
@Suite("Restoration across real process launches", .hangGuard(minutes: 10))
struct RestorationProcessTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("mail.sqlite") }

    /// Starts `statestore-worker app-session`, waits for "ready", then sends `signal`.
    func session(ending: String, signal: Int32) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments = ["app-session", database, ending]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let line = pipe.fileHandleForReading.availableLine()
        #expect(line == "ready")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process
    }

    /// Relaunches the app and returns what it restored.
    func report(environment: [String: String] = [:]) throws -> (status: Int32, values: [String: String]) {
        try relaunchMailApp(database: database, environment: environment)
    }

    static let fullSession: [String: String] = [
        "restored": "true", "tab": "0", "stack": "inbox,message", "presented": "compose",
        "compose": "grace@example.org|Hello", "message": "m-1047|0.5", "inbox": "m-1047|120.0", "settings": "— Ada",
    ]

    @Test func aSessionKilledWithSIGKILLIsRestoredByTheNextLaunch() throws {
        let process = try session(ending: "kill", signal: SIGKILL)
        #expect(process.terminationReason == .uncaughtSignal)
        let (status, values) = try report()
        #expect(status == 0)
        #expect(values == Self.fullSession)
    }

    @Test func SIGTERMFlushesTheVisibleControllersUnsavedEdits() throws {
        let process = try session(ending: "sigterm", signal: SIGTERM)
        #expect(process.terminationStatus == 128 + SIGTERM)
        var expected = Self.fullSession
        expected["compose"] = "grace@example.org|Hello, world"
        #expect(try report().values == expected)
    }

    @Test func theCrashLoopGuardSkipsRestorationAfterTwoInterruptedLaunches() throws {
        _ = try session(ending: "kill", signal: SIGKILL)
        for _ in 0..<2 {
            let crashed = try report(environment: ["STATESTORE_CRASH_ON_RESTORE": "1"])
            #expect(crashed.status != 0)
            #expect(crashed.values["restored"] == nil)
        }
        let guarded = try report(environment: ["STATESTORE_CRASH_ON_RESTORE": "1"])
        #expect(guarded.status == 0)
        #expect(guarded.values["restored"] == "false")
        #expect(guarded.values["error"]?.contains("last 2 launches died while restoring") == true)
        // The archive was set aside, not deleted; the states are all still there.
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.hierarchyArchive(scene: "main", setAside: true) != nil)
        #expect(
            try store.entries().map(\.path.rawValue) == [
                "tabs/compose", "tabs/mail/inbox", "tabs/mail/message", "tabs/settings",
            ])
        #expect(
            try store.restore(ComposeDraft.self, for: "tabs/compose")
                == ComposeDraft(to: "grace@example.org", body: "Hello"))
    }

    struct ComposeDraft: Codable, Sendable, Equatable {
        var to: String
        var body: String
    }
}

/// Relaunches the mail app on `database` (`statestore-worker app-report`) and returns its exit
/// status and what it restored, by key (a key printed twice has its values joined by newlines).
func relaunchMailApp(
    database: String, environment: [String: String] = [:]
) throws -> (status: Int32, values: [String: String]) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
    process.arguments = ["app-report", database]
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var values: [String: String] = [:]
    for line in text.split(separator: "\n") {
        let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
        if parts.count == 2 { values[parts[0], default: ""] += (values[parts[0]] == nil ? "" : "\n") + parts[1] }
    }
    return (process.terminationStatus, values)
}

extension FileHandle {
    /// Reads one line (without its newline), byte by byte, so nothing after it is consumed.
    func availableLine() -> String? {
        var bytes: [UInt8] = []
        while let byte = try? read(upToCount: 1), let first = byte.first {
            if first == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
