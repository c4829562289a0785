import Foundation
import Testing

@testable import StateStore

/// Real launches of real processes (`statestore-worker`) for controllers built in code, window
/// scenes, renamed identifiers and hostile archives.
@Suite("Relaunch restoration of code-built controllers, scenes and hostile archives", .hangGuard(minutes: 10))
struct RestorationCodeBuiltProcessTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("app.sqlite") }

    /// Runs `statestore-worker arguments`, waits for its first line (starting with "ready"),
    /// then kills it with SIGKILL, as an app killed in the background would be. Returns that line.
    @discardableResult
    func session(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = pipe.fileHandleForReading.availableLine() ?? ""
        #expect(line.hasPrefix("ready"))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return line
    }

    /// Runs `statestore-worker arguments` to the end; its output lines, status and wall time.
    func run(
        _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (status: Int32, lines: [String], seconds: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let started = ContinuousClock.now
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (process.terminationStatus, text.split(separator: "\n").map(String.init), seconds)
    }

    /// `key=value` lines as a dictionary (repeated keys joined by newlines).
    func values(_ lines: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0], default: ""] += (values[parts[0]] == nil ? "" : "\n") + parts[1] }
        }
        return values
    }

    // MARK: Code-built controllers

    @Test func aHierarchyBuiltInCodeComesBackWithItsStates() throws {
        try session(["code-session", database])
        let report = try run(["code-report", database])
        #expect(report.status == 0)
        let values = values(report.lines)
        // Built-in containers (tabs, the navigation stack, the plain split container) are made by
        // the engine; the others by factories registered by restoration identifier or by type.
        #expect(values["restored"] == "true")
        #expect(values["root"] == "TabBarController:tabs")
        // The selected tab was the code-built split container: it is selected again.
        #expect(values["tab"] == "1")
        #expect(values["stack"] == "InboxController:inbox,MessageController:message,AttachmentController:attachment")
        #expect(values["presented"] == "compose")
        #expect(values["compose"] == "grace@example.org|Hello")
        #expect(values["attachment"] == "report.pdf")
        #expect(values["message"] == "m-1047|0.5")
        #expect(values["inbox"] == "m-1047|120.0")
        #expect(values["split"] == "ViewController:settings,notes")
        #expect(values["settings"] == "— Ada")
        #expect(values["notes"] == "call Grace")
        // The controller without a factory was not archived, and the relaunch says so.
        #expect(values["unarchived"] == "tabs/split/orphan")
    }

    @Test func aControllerThatCannotBeArchivedIsListedAndItsStateKept() throws {
        try session(["code-session", database])
        let tree = try CLI.run(["inspect", "--db", database, "--hierarchy"])
        #expect(tree.status == 0, "\(tree)")
        #expect(
            tree.stdout.contains(
                """
                Not archived (a relaunch does not rebuild these; their states are kept):
                  tabs/split/orphan (statestore_worker.OrphanController): built in code as statestore_worker.OrphanController, \
                which the engine cannot make: register a factory with Storyboard.registerRestoration(identifier:_:) or \
                registerRestoration(of:_:), or instantiate it from the storyboard
                """), "\(tree)")
        #expect(tree.stdout.contains("└─ tabs (built in code) [TabBarController] selected: split\n"), "\(tree)")
        let json = try CLI.run(["inspect", "--db", database, "--hierarchy", "--json"])
        #expect(json.stdout.contains(#""path": "tabs/split/orphan","#), "\(json)")
        #expect(json.stdout.contains(#""restorationClass": "StateStore.NavigationController","#), "\(json)")
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.entries().map(\.path.rawValue).contains("tabs/split/orphan"))
    }

    // MARK: Scenes

    @Test func twoWindowsShowingTheSamePathsKeepSeparateStates() throws {
        let ready = try session(["scenes-session", database, "keep"])
        let second = String(ready.dropFirst("ready ".count))
        let report = try run(["scenes-report", database])
        #expect(report.status == 0)
        #expect(
            report.lines == [
                "window=main|true|inbox|inbox m-1041",
                "window=other|true|inbox>message|message m-1062|inbox m-1042",
            ])
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(
            try store.entries().map(\.path.rawValue) == [
                "mail/inbox", "\(second)/mail/inbox", "\(second)/mail/message",
            ])
    }

    @Test func closingTheFirstWindowThenRelaunchingRebuildsOnlyTheSecond() throws {
        let ready = try session(["scenes-session", database, "close-first"])
        let second = String(ready.dropFirst("ready ".count))
        let inspect = try CLI.run(["inspect", "--db", database, "--hierarchy"])
        #expect(
            inspect.stdout == "No hierarchy archive for scene \"main\". Scenes with an archive (--scene): \(second).\n",
            "\(inspect)")
        let report = try run(["scenes-report", database])
        #expect(report.status == 0)
        #expect(report.lines == ["window=other|true|inbox>message|message m-1062|inbox m-1042"])
    }

    // MARK: Renamed identifiers

    @Test func anIdentifierRenamedByANewVersionKeepsItsStateUnderTheNewName() throws {
        try session(["rename-session", database], environment: ["STATESTORE_APP_VERSION": "1"])
        let report = try run(["rename-report", database], environment: ["STATESTORE_APP_VERSION": "2"])
        let values = values(report.lines)
        #expect(values["restored"] == "true")
        #expect(values["draft"] == "mail/draft-v2")
        #expect(values["body"] == "v1 text")
        #expect(values["moved"] == "mail/draft-v1->mail/draft-v2")
        // One state, under the code's name, holding the edit made after the relaunch.
        #expect(values["paths"] == "mail/draft-v2,mail/inbox")
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(
            try store.restore(ComposeDraft.self, for: "mail/draft-v2")
                == ComposeDraft(to: "grace@example.org", body: "v2 text"))
    }

    /// The same rename with the states sealed: the state is opened and sealed again for its new
    /// path (the seal is bound to the path), not quarantined as altered.
    @Test func aSealedStateFollowsItsRenamedIdentifier() throws {
        let keyFile = folder.file("state.key")
        #expect(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data(repeating: 0x42, count: 32), attributes: [.posixPermissions: 0o600]))
        let sealed = ["STATESTORE_KEY_FILE": keyFile]
        try session(["rename-session", database], environment: sealed.merging(["STATESTORE_APP_VERSION": "1"]) { $1 })
        let report = try run(
            ["rename-report", database], environment: sealed.merging(["STATESTORE_APP_VERSION": "2"]) { $1 })
        let values = values(report.lines)
        #expect(values["body"] == "v1 text", "\(report.lines)")
        #expect(values["moved"] == "mail/draft-v1->mail/draft-v2")
        #expect(values["paths"] == "mail/draft-v2,mail/inbox")
        #expect(try CLI.tool("sqlite3", [database, "SELECT count(*) FROM quarantine"]) == "0\n")
        #expect(try CLI.tool("sqlite3", [database, "SELECT count(*) FROM states WHERE key_id IS NULL"]) == "0\n")
    }

    struct ComposeDraft: Codable, Sendable, Equatable {
        var to: String
        var body: String
    }

    // MARK: Hostile archives

    /// Leaves a full mail-app session in the database, replaces its archive with `archive`,
    /// relaunches, and checks the archive was set aside with `reason`, quickly, keeping every state.
    func relaunch(withArchive archive: Data, expecting reason: String, within seconds: Double) throws {
        _ = try session(["app-session", database, "kill"])
        let before: [StateStore.Entry]
        do {
            let store = try StateStore(path: database)
            before = try store.entries()
            try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(archive) }
        }
        let report = try run(["app-report", database])
        #expect(report.status == 0)
        let values = values(report.lines)
        #expect(values["restored"] == "false")
        #expect(values["error"]?.contains(reason) == true, "\(values)")
        #expect(values["error"]?.contains("set aside") == true, "\(values)")
        #expect(report.seconds < seconds, "the launch took \(report.seconds) s")
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.hierarchyArchiveByteCount(scene: "main", setAside: true) == archive.count)
        let after = try store.entries()
        #expect(after.map(\.path) == before.map(\.path))
        #expect(before.count == 4)
    }

    @Test func anArchiveWithTwoPresentationsInOneContainmentTreeIsSetAside() throws {
        let archive = #"""
            {"format":2,"orientation":"portrait","root":{"kind":"tabBar","storyboardIdentifier":"tabs","selectedIndex":0,
            "children":[{"kind":"navigation","storyboardIdentifier":"mail","children":[{"kind":"plain","storyboardIdentifier":"inbox","children":[]}],
            "presented":{"kind":"plain","storyboardIdentifier":"settings","children":[]}}],
            "presented":{"kind":"plain","storyboardIdentifier":"compose","children":[]}}}
            """#
        try relaunch(
            withArchive: Data(archive.utf8), expecting: "two controllers of one containment tree present", within: 10)
    }

    @Test func anArchiveOfAMillionNodesIsSetAsideUnread() throws {
        let child = #"{"children":[],"kind":"plain","storyboardIdentifier":"inbox"},"#
        var json = #"{"format":2,"root":{"kind":"plain","storyboardIdentifier":"settings","children":["#
        json += String(repeating: child, count: 1_000_000)
        json.removeLast()
        json += "]}}"
        try relaunch(withArchive: Data(json.utf8), expecting: "more than the limit of 16777216 bytes", within: 10)
    }

    @Test func anArchive100000LevelsDeepIsSetAside() throws {
        let depth = 100_000
        var json = #"{"format":2,"root":"#
        json += String(repeating: #"{"kind":"plain","storyboardIdentifier":"inbox","children":["#, count: depth)
        json += String(repeating: "]}", count: depth)
        json += "}"
        try relaunch(withArchive: Data(json.utf8), expecting: "nests more than 64 controllers deep", within: 10)
        let tree = try CLI.run(["inspect", "--db", database, "--hierarchy", "--set-aside"])
        #expect(tree.status == 0, "\(tree)")
        #expect(tree.stdout.contains("nests more than 64 controllers deep"), "\(tree)")
        #expect(tree.stdout.contains("\nSet aside because: the archive nests more than 64 controllers deep"), "\(tree)")
        let setAsideJSON = try CLI.run(["inspect", "--db", database, "--hierarchy", "--set-aside", "--json"])
        #expect(
            setAsideJSON.stdout.contains(#""set_aside_reason": "the archive nests more than 64 controllers deep"#),
            "\(setAsideJSON)")
        #expect(!tree.stdout.contains("not valid JSON"), "\(tree)")
    }
}
