import Foundation
import Testing

/// The command tree itself: help, usage errors and the default database path (the full help
/// and completion scripts are compared with snapshots in CLIHelpSnapshotTests).
@Suite(.hangGuard(minutes: 10)) struct CLIUsageTests {
    @Test func helpListsEverySubcommandAndTheExitCodes() throws {
        let help = try CLI.run(["--help"])
        #expect(help.status == 0, "\(help)")
        for text in [
            "migrate", "check", "inspect", "export", "import", "prune", "Exit codes:", "statestore-demo",
            "STATESTORE_DB",
        ] {
            #expect(help.stdout.contains(text), "\(text)")
        }
        for command in ["migrate", "check", "inspect", "export", "import", "prune"] {
            let result = try CLI.run([command, "--help"])
            #expect(result.status == 0, "\(command)")
            #expect(result.stdout.contains("--db <path>"), "\(command)")
            #expect(result.stdout.contains("Example:"), "\(command)")
        }
    }

    @Test func usageErrorsExitWith2() throws {
        for arguments in [["frobnicate"], ["inspect", "--no-such-flag"], ["import"], ["inspect", "--limit", "x"]] {
            let result = try CLI.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            // One line, as every statectl error is.
            #expect(result.stderr.hasPrefix("statectl: "), "\(arguments)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(result)")
            #expect(result.stderr.hasSuffix("--help`.\n"), "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func theDefaultDatabaseIsTheDemoAppsXDGPath() throws {
        let folder = TemporaryFolder()
        let migrated = try CLI.run(["migrate"], home: folder.path)
        #expect(migrated.status == 0, "\(migrated)")
        #expect(FileManager.default.fileExists(atPath: folder.file("statestore-demo/state.sqlite")))

        // $STATESTORE_DB wins over the default, --db over both.
        let environment = folder.file("env.sqlite")
        #expect(try CLI.run(["migrate"], home: folder.path, environment: ["STATESTORE_DB": environment]).status == 0)
        #expect(FileManager.default.fileExists(atPath: environment))
        let explicit = folder.file("explicit.sqlite")
        #expect(try CLI.run(["migrate", "--db", explicit], environment: ["STATESTORE_DB": environment]).status == 0)
        #expect(FileManager.default.fileExists(atPath: explicit))
        #expect(
            try CLI.run(["inspect"], environment: ["STATESTORE_DB": explicit]).stdout == "No states in \(explicit).\n")
    }
}
