import Foundation

/// Stops a relaunch from restoring a hierarchy that keeps killing the app.
///
/// Before restoring, ``beginRestoration()`` counts an attempt in the `metadata` table (committed
/// at once, so the count survives a crash); ``finishRestoration()`` clears it. When the previous
/// launches died while restoring ``threshold`` times in a row, the archive is set aside (kept for
/// `statectl inspect --hierarchy`) and the app starts fresh. States are kept: only the structure
/// that led back to the crash is skipped.
///
/// Its count is its own (no write-behind write touches it), so reading and writing it does not
/// wait for the write-behind writer; it must not: a row over the size limit met during the
/// restoration is set aside by the writer, and the launch must not wait for that copy
/// (``RestorationCoordinator/setAsideByWriter(_:reason:)``).
struct CrashLoopGuard: Sendable {
    static let attemptsKey = "restoration.interrupted_attempts"
    let store: StateStore
    let scene: String
    /// Interrupted restorations tolerated before the archive is set aside. Default 2.
    var threshold = 2

    enum Decision: Equatable {
        case restore
        case skipped(interruptedAttempts: Int)
    }

    /// Call before restoring. Returns whether to go ahead.
    func beginRestoration() throws(StateStoreError) -> Decision {
        let key = Self.attemptsKey + "." + scene
        let interrupted = Int(try store.metadata(key, waitingForWrites: false) ?? "0") ?? 0
        if interrupted >= threshold {
            try store.setHierarchyArchiveAside(
                scene: scene, reason: "the last \(interrupted) launches died while restoring it (the crash-loop guard)"
            )
            try store.setMetadata(key, to: nil, waitingForWrites: false)
            return .skipped(interruptedAttempts: interrupted)
        }
        try store.setMetadata(key, to: String(interrupted + 1), waitingForWrites: false)
        return .restore
    }

    /// Call once the restored hierarchy is on screen.
    func finishRestoration() throws(StateStoreError) {
        try store.setMetadata(Self.attemptsKey + "." + scene, to: nil, waitingForWrites: false)
    }
}
