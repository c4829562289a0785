import ArgumentParser
import Foundation
import StateStore

/// `statectl`'s exit codes, documented in the root command's help.
enum ExitStatus: Int32 {
    /// Success; `check` found the database healthy.
    case success = 0
    /// A problem was found, or the operation was refused and nothing was changed.
    case problemFound = 1
    /// Usage error: unknown option, invalid argument.
    case usage = 2
    /// The database cannot be opened.
    case cannotOpen = 3

    /// The exit code for a store error: everything that stops a database from being
    /// opened is ``cannotOpen``; the rest (a refused write, a bad state) is ``problemFound``.
    static func forStoreError(_ error: StateStoreError) -> ExitStatus {
        switch error {
        case .cannotOpen, .notADatabase, .corrupt, .schemaTooNew, .schemaTooOld, .walMissing:
            .cannotOpen
        case .readOnly, .diskFull, .busy, .decodingFailed, .encodingFailed, .checksumMismatch,
             .stateTooLarge, .invalidPath, .sqlite:
            .problemFound
        }
    }

    /// The exit code and the one stderr line (already prefixed) for any error a command throws.
    static func describe(_ error: any Error, command: ParsableCommand.Type) -> (Int32, String?) {
        switch error {
        case let error as StateStoreError:
            return (forStoreError(error).rawValue, "statectl: " + oneLine(error.description))
        case let error as CLIError:
            return (error.status.rawValue, "statectl: " + oneLine(error.message))
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
            let status = code == .validationFailure ? ExitStatus.usage.rawValue : code.rawValue
            return (status, message.isEmpty ? nil : message)
        }
    }
}

/// `text` on one line: SQLite's integrity messages, for one, span several.
func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty }.joined(separator: " ")
}

/// A failure that is not the store's: a bad import document, a missing state, a file
/// that cannot be written. `message` is one line that says what to do.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var status: ExitStatus = .problemFound
    var description: String { message }
}
