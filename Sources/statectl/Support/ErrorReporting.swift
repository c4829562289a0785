import ArgumentParser
import Foundation
import StateStore
import StateStoreSoak

// Kept apart from ExitStatus.swift, which needs neither ArgumentParser nor the root command.
extension ExitStatus {
    /// The exit code and the one stderr line (already prefixed) for any error a command throws.
    static func describe(_ error: any Error, command: ParsableCommand.Type) -> (Int32, String?) {
        switch error {
        case .busy(let failure) as StateStoreError:
            // The store's own advice (raise Options.busyTimeout) is for an application's code.
            let timeout = StateStore.Options().busyTimeout
            return (
                forStoreError(.busy(failure)).rawValue,
                "statectl: the state database stayed locked by another process for longer than \(timeout.components.seconds) s (\(failure.message)); nothing was changed. Run the command again once the application holding it is idle, or stopped."
            )
        case .notSynced(let file, let failure) as StateStoreError:
            // The library's advice speaks of a change an application made; this one, of the command.
            return (
                ExitStatus.notSynced.rawValue,
                "statectl: the change was made and committed to \(file), but syncing it to storage failed (\(failure.message)), so it may not survive a power cut. Do not run the command again: check the storage (the kernel log names I/O errors) and copy the database to healthy storage; a later sync that succeeds does not prove this one's writes reached it."
            )
        case let error as StateStoreError:
            return (forStoreError(error).rawValue, "statectl: " + sentence(oneLine(error.description)))
        case let error as CLIError:
            return (error.status.rawValue, "statectl: " + sentence(oneLine(error.message)))
        case let error as SoakError:
            return (ExitStatus.problemFound.rawValue, "statectl: " + sentence(oneLine(error.message)))
        case let error as ExitCode:
            // Thrown after the command has printed its own report (e.g. `check` on a damaged file).
            return (error.rawValue, nil)
        default:
            let code = Statectl.exitCode(for: error)
            let message = Statectl.fullMessage(for: error)
            if code == .success {
                // A clean exit (help for a command without `run`, for one): its text goes to stdout.
                if !message.isEmpty { print(message) }
                return (0, nil)
            }
            if code == .validationFailure { return (ExitStatus.usage.rawValue, Statectl.usageLine(for: error)) }
            return (code.rawValue, message.isEmpty ? nil : "statectl: " + sentence(oneLine(message)))
        }
    }
}

/// `text` on one line: SQLite's integrity messages, for one, span several.
func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty }.joined(separator: " ")
}
