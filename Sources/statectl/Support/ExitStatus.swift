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
    /// The change was made and committed, but syncing it to storage failed: it is in the
    /// database, and may not survive a power cut. Running the command again is not needed.
    case notSynced = 4

    /// The exit code for a store error: everything that stops a database from being
    /// opened is ``cannotOpen``; a change made and not synced is ``notSynced``; the rest (a
    /// refused write, a bad state) is ``problemFound``.
    static func forStoreError(_ error: StateStoreError) -> ExitStatus {
        switch error {
        case .cannotOpen, .fileSystem, .notADatabase, .corrupt, .schemaTooNew, .schemaTooOld, .walMissing,
            .strayJournal,
            .invalidDatabasePath, .notARegularFile, .notAStateStore, .schemaMismatch:
            .cannotOpen
        case .readOnly, .diskFull, .busy, .decodingFailed, .encodingFailed, .checksumMismatch,
            .stateTooLarge, .invalidPath, .invalidState, .sqlite, .keyMismatch, .sealedStateUnopenable, .keyRequired,
            .invalidKeyID,
            .invalidOption,
            .fileReplaced:
            .problemFound
        case .notSynced:
            .notSynced
        }
    }
}

/// A failure that is not the store's: a bad import document, a missing state, a file
/// that cannot be written. `message` is one line that says what to do.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var status: ExitStatus = .problemFound
    var description: String { message }
}
