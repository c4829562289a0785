import StateStore
import StateStoreCrashVFS

/// What the disk holds of one launch's files, recorded as the crash VFS records it: every
/// sector written since its file's last sync, in each version it had, and every file made or
/// removed since its folder's last sync. A power cut chooses, per sector and per entry, what
/// reached the disk; until then the recording changes nothing that SQLite reads or writes.
///
/// One recording per launch, on the ``TemporaryStore``'s folder alone: launches of other tests
/// record their own folders side by side.
final class PowerCutRecording {
    private let session: OpaquePointer
    private var ended = false

    /// Starts recording `folder`; a cut at `seed`'s draws when ``cut(seed:)`` says.
    ///
    /// The crash VFS becomes the process's default VFS, so that every connection the launch's
    /// store opens goes through it (files outside a recording's folder pass straight to the
    /// unix VFS); SQLite's log is installed first, as a store would install it. Made the
    /// default again at each recording, should something have registered another default.
    ///
    /// - Throws: ``StateStoreTestingError/powerCutNotRecorded(folder:reason:)``.
    init(folder: String) throws(StateStoreTestingError) {
        StateStore.installSQLiteLog()
        let registered = statestore_crashvfs_register(1)
        guard registered == 0 else {
            throw .powerCutNotRecorded(
                folder: folder, reason: "the crash VFS could not be registered (SQLite code \(registered))")
        }
        // The seed is set by the cut: until then nothing is drawn.
        guard let session = statestore_crashvfs_session_begin(folder, 0, 0, STATESTORE_CRASH_RANDOM) else {
            throw .powerCutNotRecorded(folder: folder, reason: "another recording holds the folder")
        }
        self.session = session
    }

    deinit {
        if !ended { statestore_crashvfs_session_end(session) }
    }

    /// The files SQLite still has open in the folder.
    var openFiles: Int { Int(statestore_crashvfs_session_open_files(session)) }

    /// The power goes now: each unsynced sector of the folder's files takes one of its versions,
    /// and each unsynced creation or deletion stands or not, as `seed` draws; every later call
    /// on the files fails, as on a stopped machine. Returns what the cut did.
    func cut(seed: UInt64) -> statestore_crash_stats {
        statestore_crashvfs_session_reseed(session, seed)
        statestore_crashvfs_session_crash_now(session)
        return statestore_crashvfs_session_stats(session)
    }

    /// Stops recording, leaving the files as they are.
    func end() {
        guard !ended else { return }
        ended = true
        statestore_crashvfs_session_end(session)
    }
}
