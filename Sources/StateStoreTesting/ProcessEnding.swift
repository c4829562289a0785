/// How the process of a ``Launch`` ends before ``Launch/relaunch(after:)`` starts the app
/// again from what its database file holds.
///
/// A structure of static values rather than an enumeration, so that further ends can join
/// without breaking a test's `switch`.
public struct ProcessEnding: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case termination
        case kill
        case powerCut(seed: UInt64)
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

    /// The machine loses power at this moment, with `seed` drawing what the disk kept.
    ///
    /// The process dies as by ``kill`` (what the writer had not committed is gone), and the
    /// files then hold what a disk can hold after a power cut: a write since the file's last
    /// sync may have reached the disk, or not, or in part (each 512-byte sector its newest
    /// content, the synced one, or one in between), and a file made or removed since its
    /// folder's last sync may be there or not. Which of these, `seed` draws, the same way on
    /// every run of the same test: what was synced always stays. A flush point syncs what it
    /// commits, so it survives in both modes. With the store's `synchronous: .full`
    /// (``TemporaryStore/options``) every other commit is synced as it returns and survives
    /// too; with `.normal`, the commits since the last sync may be lost, the newest first and
    /// each whole (the next launch recovers the WAL up to its last whole commit).
    ///
    /// The relaunch's ``Launch/diagnosis`` names the seed and what the cut did, so that a
    /// failure seen with one seed is run again with it.
    public static func powerCut(seed: UInt64) -> ProcessEnding {
        ProcessEnding(kind: .powerCut(seed: seed))
    }

    /// A power cut at this moment with a seed of its own (``powerCut(seed:)``), drawn anew at
    /// each use; the relaunch's ``Launch/diagnosis`` names it. Run a test with several to
    /// cover several draws, and with the seed a failure printed to see that failure again.
    public static var powerCut: ProcessEnding {
        .powerCut(seed: UInt64.random(in: 1...UInt64.max))
    }

    /// `termination`, `kill -9`, or `power cut (seed N)`.
    public var description: String {
        switch kind {
        case .termination: "termination"
        case .kill: "kill -9"
        case .powerCut(let seed): "power cut (seed \(seed))"
        }
    }
}
