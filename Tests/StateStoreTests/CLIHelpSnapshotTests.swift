import Foundation
import Testing

/// `statectl --help`, each subcommand's `--help` and the completion scripts, compared in full
/// with `Snapshots/` (at the 200 columns `CLI.run` sets).
@Suite(.hangGuard(minutes: 10)) struct CLIHelpSnapshotTests {
    static let subcommands = [
        "migrate", "recover", "check", "inspect", "export", "import", "prune", "rekey", "monitor", "demo", "soak",
    ]
    static let shells = ["bash", "zsh", "fish"]
    static let regenerate =
        "scripts/cli-output (or STATESTORE_UPDATE_SNAPSHOTS=1 swift test --filter CLIHelpSnapshotTests)"

    @Test func rootHelp() throws {
        let result = try CLI.run(["--help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        try Snapshot.check(result.stdout, against: Snapshot.file("help.txt"), regenerate: Self.regenerate)
    }

    /// Every subcommand the root help lists has a snapshot, and `Snapshots/` holds nothing else
    /// but the JSON fields' (``StatectlJSONFieldsTests``).
    @Test func everySubcommandHasASnapshot() throws {
        let help = try CLI.run(["--help"]).stdout
        let section = try #require(help.range(of: "SUBCOMMANDS:\n"))
        let listed = help[section.upperBound...].split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first else {
                return nil
            }
            return name == "See" ? nil : String(name)
        }
        #expect(listed == Self.subcommands)
        let files =
            ["help.txt", "statectl-json-fields.txt"] + Self.subcommands.map { "help-\($0).txt" }
            + Self.shells.map { "completion.\($0)" }
        #expect(try FileManager.default.contentsOfDirectory(atPath: Snapshot.folder.path).sorted() == files.sorted())
    }

    @Test(arguments: subcommands)
    func subcommandHelp(_ command: String) throws {
        let result = try CLI.run([command, "--help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        try Snapshot.check(result.stdout, against: Snapshot.file("help-\(command).txt"), regenerate: Self.regenerate)
    }

    @Test(arguments: shells)
    func completionScript(_ shell: String) throws {
        let result = try CLI.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        try Snapshot.check(result.stdout, against: Snapshot.file("completion.\(shell)"), regenerate: Self.regenerate)
    }
}
