import Foundation
import StateStore
import Testing

/// Runs the built `statectl` binary and captures what it printed.
struct CLIResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }

    var description: String { "exit \(status)\n--- stdout ---\n\(stdout)--- stderr ---\n\(stderr)" }
}

enum CLI {
    /// `statectl` sits beside the test bundle in `.build/<configuration>/`. `STATECTL` overrides.
    static let executable: String = {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["STATECTL"], !path.isEmpty { return path }
        var candidates: [URL] = []
        for path in [Bundle.main.executablePath, CommandLine.arguments.first].compactMap({ $0 }) {
            var url = URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(url.appendingPathComponent("statectl"))
                url.deleteLastPathComponent()
            }
        }
        for bundle in Bundle.allBundles {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("statectl"))
        }
        // Fallback: the package's own build folder.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug/statectl"))
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        return package.appendingPathComponent(".build/debug/statectl").path
    }()

    /// Whether this test process may run `statectl` as `nobody` with util-linux's setpriv: root,
    /// setpriv present, and `nobody` able to reach the binary and the Swift runtime it loads (not
    /// so when either sits under a folder only root may enter, such as `/root`). Probed once.
    static let canRunAsNobody: Bool = {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        let probe = try? run(
            ["--reuid=65534", "--regid=65534", "--clear-groups", executable, "--version"],
            executable: "/usr/bin/setpriv", directory: "/")
        return probe?.status == 0
    }()

    /// Runs `statectl arguments` with a clean environment (no `STATESTORE_DB`, XDG state in `home`),
    /// in `directory` when one is given.
    static func run(
        _ arguments: [String], home: String? = nil, environment extra: [String: String] = [:],
        executable: String = CLI.executable, directory: String? = nil
    ) throws -> CLIResult {
        struct NotBuilt: Error, CustomStringConvertible {
            var description: String {
                "statectl is not built at \(CLI.executable); run `swift build --build-tests` (or set STATECTL)"
            }
        }
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw NotBuilt() }
        let folder = TemporaryFolder("cli-output")
        let outPath = folder.file("stdout"), errPath = folder.file("stderr")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["STATESTORE_DB"] = nil
        environment["XDG_STATE_HOME"] = home ?? folder.path
        environment["COLUMNS"] = "200"
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return CLIResult(
            status: process.terminationStatus,
            stdout: String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self),
            stderr: String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        )
    }

    /// Starts `executable arguments` with stdout on the pipe it returns, stderr dropped, and this
    /// process's environment less `STATESTORE_DB`, plus `extra`.
    static func start(
        _ executable: String, _ arguments: [String], environment extra: [String: String] = [:]
    ) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["STATESTORE_DB"] = nil
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe)
    }

    /// Runs any other tool (`sqlite3`, `stat`) and returns its stdout.
    @discardableResult
    static func tool(_ name: String, _ arguments: [String]) throws -> String {
        let folder = TemporaryFolder("tool-output")
        let outPath = folder.file("stdout")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        return String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
    }

    /// Every row of every table (bytes as hex), for "nothing changed" comparisons.
    static func dump(_ database: String) throws -> String {
        try tool(
            "sqlite3",
            [
                database,
                """
                SELECT path, type_name, version, generation, encoding, checksum, updated_at, hex(bytes) FROM states ORDER BY path;
                SELECT id, path, reason, hex(bytes) FROM quarantine ORDER BY id;
                SELECT * FROM pressure_events ORDER BY id;
                SELECT scene, set_aside, hex(archive) FROM hierarchy ORDER BY scene;
                """,
            ])
    }
}

/// A database with known contents and fixed times, so output can be compared exactly.
enum Fixture {
    static func milliseconds(_ iso: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: iso)!
    }

    static let inboxJSON = #"{"selected":"m-42","unread":2}"#
    static let messageJSON = #"{"body":"Hi \"you\"\n","id":"m-42","tags":["work","ünïcode"]}"#
    static let draftBytes = Data((0..<40).map { UInt8($0 * 7 % 256) })
    static let settingsJSON = #"{"signature":""# + String(repeating: "x", count: 2000) + #""}"#

    /// Four states (one binary, two old), one pressure event, one quarantined row and a hierarchy archive.
    static func populate(_ path: String, quarantine: Bool = true) throws {
        let store = try StateStore(path: path)
        try store.write { (transaction) throws(StateStoreError) in
            try transaction.insert(
                verbatim: StoredState(
                    path: "root/inbox", typeName: "Mail.Inbox", version: 1, generation: 3, encoding: .json,
                    updatedAt: milliseconds("2026-01-02T03:04:05.678Z"), bytes: Data(inboxJSON.utf8)))
            try transaction.insert(
                verbatim: StoredState(
                    path: "root/inbox/message", typeName: "Mail.Message", version: 2, generation: 1, encoding: .json,
                    updatedAt: milliseconds("2026-01-02T03:04:06.000Z"), bytes: Data(messageJSON.utf8)))
            try transaction.insert(
                verbatim: StoredState(
                    path: "root/inbox/compose", typeName: "Mail.Draft", version: 1, generation: 7, encoding: .binary,
                    updatedAt: milliseconds("2020-06-01T00:00:00.000Z"), bytes: draftBytes))
            try transaction.insert(
                verbatim: StoredState(
                    path: "root/settings", typeName: "Mail.Settings", version: 1, generation: 1, encoding: .json,
                    updatedAt: milliseconds("2021-03-04T05:06:07.089Z"), bytes: Data(settingsJSON.utf8)))
            try transaction.setHierarchyArchive(Data(#"{"root":{"identifier":"inbox","children":[]}}"#.utf8))
        }
        try store.recordPressureEvent(
            PressureEvent(
                occurredAt: milliseconds("2026-01-02T03:05:00.000Z"), level: .warning,
                availableBytes: 512 << 20, rssBefore: 200 << 20, rssAfter: 150 << 20, duration: .microseconds(1500)))
        if quarantine {
            try store.save(["stale": true], for: "root/old", version: 3)
            try store.quarantine("root/old", reason: "decoding failed: missing key \"id\"")
        }
        _ = consume store
        if quarantine {
            // Fixed times for the quarantined row, so output can be compared exactly.
            try CLI.tool(
                "sqlite3", [path, "UPDATE quarantine SET updated_at = 1767323100000, quarantined_at = 1767323160000"])
        }
    }
}
