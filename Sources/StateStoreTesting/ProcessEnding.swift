/// How the process of a ``Launch`` ends before ``Launch/relaunch(after:)`` starts the app
/// again from what its database file holds.
///
/// A structure of static values rather than an enumeration, so that further ends (a power cut)
/// can join without breaking a test's `switch`.
public struct ProcessEnding: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case termination
        case kill
    }
    let kind: Kind

    /// A graceful end: `Application.terminate()` (what SIGTERM or SIGINT does with the
    /// termination handlers installed, or a `ServiceGroup`'s graceful shutdown), then the
    /// process exits. Every visible controller's state is saved and everything handed to the
    /// write-behind writer is committed and synced.
    public static let termination = ProcessEnding(kind: .termination)

    /// `kill -9` at this moment: no callback runs and nothing is flushed. What the write-behind
    /// writer had not committed is gone: everything handed to it since the last flush point (or
    /// since the test last waited for it with `StateStore.waitForWriteBehind()`), and states
    /// captured and not yet handed over. The committed frames stay in the `-wal` file, not
    /// checkpointed, for the next launch to recover, as a killed process leaves them.
    public static let kill = ProcessEnding(kind: .kill)

    /// `termination` or `kill -9`.
    public var description: String {
        switch kind {
        case .termination: "termination"
        case .kill: "kill -9"
        }
    }
}
