import Foundation
import Testing

/// Checked-in text that a test compares output with in full: the files in `Snapshots/` beside
/// this one, and `docs/cli-output.md`.
///
/// On a mismatch the issue shows a unified diff (`diff -u`, committed against actual) and how
/// to regenerate. With `STATESTORE_UPDATE_SNAPSHOTS=1` the file is rewritten instead, and the
/// test fails once to say so (run it again without the variable to see it pass).
enum Snapshot {
    static let updating = ProcessInfo.processInfo.environment["STATESTORE_UPDATE_SNAPSHOTS"] == "1"

    /// The package's root folder, where `Package.swift` is.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `Tests/StateStoreTests/Snapshots/`.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "Snapshots")

    /// `Tests/StateStoreTests/Snapshots/name`.
    static func file(_ name: String) -> URL { folder.appending(path: name) }

    /// Compares `actual` with the file at `url`, both passed through `normalize` (which masks
    /// what differs from run to run), or rewrites the file when updating and they differ (so
    /// a file that differs only in what is masked is left as it is).
    static func check(
        _ actual: String, against url: URL, regenerate: String,
        normalize: (String) -> String = { $0 },
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let relative = url.path.replacingOccurrences(of: packageRoot.path + "/", with: "")
        let committed = try? String(contentsOf: url, encoding: .utf8)
        if updating {
            guard committed.map(normalize) != normalize(actual) else { return }
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try actual.write(to: url, atomically: true, encoding: .utf8)
            Issue.record(
                "Rewrote \(relative). Run the test again without STATESTORE_UPDATE_SNAPSHOTS to check it.",
                sourceLocation: sourceLocation)
            return
        }
        guard let committed else {
            Issue.record("\(relative) does not exist. Create it with: \(regenerate)", sourceLocation: sourceLocation)
            return
        }
        let expected = normalize(committed), got = normalize(actual)
        guard expected != got else { return }
        Issue.record(
            """
            \(relative) is not what statectl prints now (- committed, + actual):
            \(try diff(expected, got))
            If the new output is right, regenerate: \(regenerate)
            """, sourceLocation: sourceLocation)
    }

    /// `diff -u` of two texts.
    static func diff(_ old: String, _ new: String) throws -> String {
        let folder = TemporaryFolder("snapshot-diff")
        try old.write(toFile: folder.file("committed"), atomically: true, encoding: .utf8)
        try new.write(toFile: folder.file("actual"), atomically: true, encoding: .utf8)
        return try CLI.tool(
            "diff",
            ["-u", "--label", "committed", "--label", "actual", folder.file("committed"), folder.file("actual")])
    }
}
