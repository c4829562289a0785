import ArgumentParser
import Foundation
import StateStore

/// `statectl`: inspect and operate a StateStore database.
///
/// One `ParsableCommand` per subcommand, each in `Commands/`. Every subcommand takes
/// ``DatabaseOptions`` (`--db`) and, when it reads, ``OutputOptions`` (`--json`). Errors
/// are turned into one line on stderr and an exit code in one place, ``ExitStatus``.
///
/// New subcommands (`soak`, ...) are added to `configuration.subcommands`;
/// they may be `ParsableCommand` or `AsyncParsableCommand`, both are run by ``main()``.
@main
struct Statectl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statectl",
        abstract: "Inspect and operate a StateStore state database.",
        discussion: """
            The database is --db PATH, else $STATESTORE_DB, else the default path of the \
            "statestore-demo" application: $XDG_STATE_HOME/statestore-demo/state.sqlite, or \
            ~/.local/state/statestore-demo/state.sqlite when XDG_STATE_HOME is not set.

            Read commands (inspect, check, export) open the database read-only: they never \
            create, migrate or write it, and they work while an application is writing to it.

            recover moves a damaged database aside and starts a fresh one holding every state \
            that can still be read; it refuses while another process has the database open.

            demo runs a small mail app on the database (creating it when needed) and shows what \
            it saved and restored; monitor watches memory pressure and opens no database.

            Every read command takes --json for a stable, machine-readable document: snake_case \
            keys, times as ISO 8601 in UTC with milliseconds, and a top-level "schema": 1 that \
            changes only when the document changes incompatibly.

            Exit codes:
              0  success (check: the database is healthy)
              1  a problem was found, or the operation was refused and changed nothing
                 (check: damage, checksum mismatches, quarantined rows, old schema;
                 import: an invalid document)
              2  usage error (unknown option, invalid argument)
              3  the database cannot be opened: missing file, not a database,
                 damaged at open, schema newer than this build (or not migrated
                 yet, for inspect and export), a lost -wal, another database's
                 -journal beside it; import: a document from a newer schema;
                 monitor: /proc/meminfo cannot be read or parsed
              4  the change was made (import, prune, rekey, recover), but
                 syncing it to storage failed: it is in the database, and may not
                 survive a power cut; do not run the command again

            Errors are one line on stderr: "statectl: <what went wrong and what to do>".

            Example:
              statectl demo --db ./state.sqlite
              statectl inspect --db ./state.sqlite
              statectl monitor --once
              statectl --generate-completion-script bash > statectl.bash
            """,
        version: "1.0.0",
        subcommands: [
            Migrate.self,
            Recover.self,
            Check.self,
            Inspect.self,
            Export.self,
            Import.self,
            Prune.self,
            Rekey.self,
            Monitor.self,
            Demo.self,
            Soak.self,
        ]
    )

    /// Parses, runs and maps every error to ``ExitStatus`` — instead of argument-parser's
    /// default, which uses exit code 64 for usage errors and prints raw error values.
    static func main() async {
        // A closed pipe on stdout (`statectl inspect | head -1`) ends writes, not the process.
        signal(SIGPIPE, SIG_IGN)
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            // Help, --version and completion scripts arrive here too, with exit code 0.
            let code = exitCode(for: error)
            if code == .success {
                let message = fullMessage(for: error)
                if !message.isEmpty { print(message) }
                Foundation.exit(0)
            }
            Output.error(usageLine(for: error))
            Foundation.exit(code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue)
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
            // Output that never arrived (a full disk, a closed stdout) is a failure; a reader
            // that left (`| head`) is not.
            if fflush(nil) != 0, errno != EPIPE {
                Output.error("statectl: cannot write the output: \(String(cString: strerror(errno))).")
                Foundation.exit(ExitStatus.problemFound.rawValue)
            }
            Foundation.exit(ExitStatus.success.rawValue)
        } catch {
            let (status, message) = ExitStatus.describe(error, command: type(of: command))
            if let message { Output.error(message) }
            Foundation.exit(status)
        }
    }

    /// A usage error as the one line every `statectl` error is: `statectl: <what is wrong>
    /// (see `statectl <command> --help`).`, instead of argument-parser's three or four lines.
    static func usageLine(for error: any Error) -> String {
        var text = oneLine(message(for: error))
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        let names = Set(configuration.subcommands.map { $0._commandName })
        let command = CommandLine.arguments.dropFirst().first(where: names.contains)
        let help = command.map { "statectl \($0) --help" } ?? "statectl --help"
        return "statectl: " + sentence(text) + " See `\(help)`."
    }
}
