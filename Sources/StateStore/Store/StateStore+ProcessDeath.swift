import Foundation

// What the death of the store's process leaves, made in process: for the testing kit
// (`StateStoreTesting`), whose relaunch "after a kill -9" must leave the file exactly as a killed
// process leaves it, in the same process, with the test still holding the old objects.

extension StateStore {
    /// Ends the store as the death of its process (`kill -9`, or `exit()` after everything was
    /// flushed) would, in this process:
    ///
    /// - The write-behind writer commits nothing more: the job it is running, if any, finishes
    ///   (a kill could also have come just after it); the batches still queued are dropped, and
    ///   so is anything handed over later. Nothing is drained, unlike at `exit()`.
    /// - The integrity check after open is interrupted and its connection closed.
    /// - The connection is closed without a checkpoint (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`): the
    ///   committed frames stay in the `-wal`, beside the `-shm`, for the next open to recover, as
    ///   after a kill. Closing it also gives back SQLite's `fcntl` locks on the file, which are
    ///   the process's (POSIX record locks belong to a process, not to a connection): a store
    ///   left open here would keep the next store of the same process from being the first
    ///   connection, and its recovery, and the WAL, would not be what a relaunch meets.
    /// - Every later read or write through this object throws ``StateStoreError/sqlite(_:)``
    ///   with `SQLITE_MISUSE`, saying that its process has ended; nothing reaches the file.
    ///
    /// Not public: only a test can want a live object whose process is dead. Calling it again
    /// does nothing. Must not be called from a write-behind job.
    package func simulateProcessDeath() {
        guard !writeBehind.isAbandoned else { return }
        writeBehind.abandon()
        backgroundChecker?.cancelAndWait()
        connection.withLock { (connection: inout Connection) in
            connection.checkpointsOnClose = false
            connection.pausingCheckpoints = nil
            // The last reference to the file's connection goes here, which closes it (its
            // statements first); the store keeps a connection to an empty database in memory,
            // which the check in ``withConnection(waitingForWrites:_:)`` keeps unused. Should
            // even that fail to open, the file's connection stays open, uncheckpointed.
            if let placeholder = try? Connection(path: ":memory:", options: .init()) {
                connection = placeholder
            }
        }
    }

    /// Whether ``simulateProcessDeath()`` ended the store.
    package var simulatedProcessHasDied: Bool { writeBehind.isAbandoned }

    /// Whether write-behind jobs wait for a flush point (or any wait for the writer) instead of
    /// running on the writer's thread as they come: see ``WriteBehindQueue/holdsJobs``. The
    /// testing kit sets it on the stores it opens, so that a simulated kill loses exactly what
    /// was handed over since the last flush point, whatever the scheduler did.
    package var holdsWriteBehind: Bool {
        get { writeBehind.holdsJobs }
        set { writeBehind.holdsJobs = newValue }
    }

    /// The failure every use of a store ended by ``simulateProcessDeath()`` meets.
    static func deadProcessError(_ path: String) -> StateStoreError {
        .sqlite(
            SQLiteFailure(
                extendedResultCode: .misuse,
                message:
                    "the store of \(path) belongs to a process that has ended (simulateProcessDeath()); open a new StateStore"
            ))
    }
}
