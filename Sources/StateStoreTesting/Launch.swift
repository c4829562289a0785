import StateStore

/// One run of an app's process on a ``TemporaryStore``: the app as its launch code made it,
/// and the means to end that process as the world does and start the app again.
///
/// ``relaunch(after:)`` is the test's question, "what does the user see after this?": it ends
/// the process (``ProcessEnding``), then runs the same launch code on a new store opened on the
/// same file, in the same process, and returns the new launch, whose ``application`` and
/// ``window`` were rebuilt from what the file holds.
@MainActor
public final class Launch<App: LaunchedApp> {
    /// What the launch code returned.
    public let app: App
    /// The application the launch made.
    public var application: Application { app.application }
    /// The window the launch restored or filled.
    public var window: Window { app.window }
    /// The store the launch was given. Once the launch has ended, every read or write through
    /// it throws: open the file again (``TemporaryStore/open()``) to look at what it holds.
    public let store: StateStore
    /// The store's file and folder.
    public let temporaryStore: TemporaryStore
    /// How the launch's process ended; `nil` while it runs.
    public private(set) var ending: ProcessEnding?
    /// Every lifecycle callback the launch's controllers received, from the first its launch
    /// code caused (the restoration's included), unless the launch code set a trace of its own.
    public let trace: LifecycleTrace

    /// How the launch before this one ended and, for a power cut, what the cut did: for
    /// ``diagnosis``.
    var startedAfter: String?

    private let launch: @MainActor (StateStore) throws -> App
    private let recording: PowerCutRecording
    private var relaunched = false

    init(
        app: App, store: StateStore, temporaryStore: TemporaryStore, trace: LifecycleTrace,
        recording: PowerCutRecording, launch: @escaping @MainActor (StateStore) throws -> App
    ) {
        self.app = app
        self.store = store
        self.temporaryStore = temporaryStore
        self.trace = trace
        self.recording = recording
        self.launch = launch
    }

    /// Ends the launch's process as `ending` says, and leaves the file as that end leaves it,
    /// for the test to look at before relaunching (``TemporaryStore/walPath``, a store opened
    /// with ``TemporaryStore/open()``).
    ///
    /// - ``ProcessEnding/termination``: `application.terminate()`, then what `exit()` does
    ///   (the writer's queued work is committed), then the process is gone.
    /// - ``ProcessEnding/kill``: the process is gone at once, without a callback.
    /// - ``ProcessEnding/powerCut(seed:)``: the files take what the disk kept, as the seed draws
    ///   it, and the process is gone as by a kill.
    ///
    /// Once gone, nothing of the launch writes to the file again, even if the test drives its
    /// objects: its store is closed without a checkpoint (the WAL stays, as after a real end of
    /// the process), its scene claims and memory monitors go, and its store throws on every use.
    /// Ending it again the same way does nothing.
    ///
    /// - Throws: ``StateStoreTestingError/alreadyEnded(_:requested:)`` when it already ended
    ///   another way; ``StateStoreTestingError/powerCutNotRecorded(folder:reason:)`` when a
    ///   store the test opened on the file was still open at a power cut.
    public func end(_ ending: ProcessEnding) throws(StateStoreTestingError) {
        if let ended = self.ending {
            guard ended == ending else { throw .alreadyEnded(ended, requested: ending) }
            return
        }
        var cut: String?
        switch ending.kind {
        case .termination:
            application.terminate()
            // What exit() does: the writer's queued work runs before the process goes.
            store.waitForWriteBehind()
        case .kill:
            break
        case .powerCut(let seed):
            // The power goes first, with the process still running: what its writer holds is
            // lost as by a kill, and every later call on the files fails.
            let stats = recording.cut(seed: seed)
            cut =
                "\(ending) of the launch before: of the sectors written since their file's last sync, "
                + "\(stats.sectors_kept) kept, \(stats.sectors_dropped) dropped, \(stats.sectors_torn) torn; "
                + "\(stats.entries_vanished + stats.entries_restored) files made or removed since their folder's last sync undone"
        }
        application.simulateProcessDeath()
        store.simulateProcessDeath()
        self.ending = ending
        let stillOpen = recording.openFiles
        recording.end()
        startedNext = cut ?? "\(ending) of the launch before"
        if cut != nil, stillOpen > 0 {
            throw .powerCutNotRecorded(
                folder: temporaryStore.folder,
                reason:
                    "\(stillOpen) file(s) of the database were still open after the launch's store closed; release every store opened with TemporaryStore.open() before the power cut"
            )
        }
    }

    /// What ``end(_:)`` tells the next launch for its ``diagnosis``.
    private var startedNext: String?

    /// Ends the launch's process as `ending` says (see ``end(_:)``; nothing more when it
    /// already ended so), then starts the app again: the launch code runs on a new store opened
    /// on the same file, which recovers what the file holds as the relaunch of a real process
    /// would. The returned launch's ``window`` is what the user sees.
    ///
    /// - Throws: ``StateStoreTestingError/alreadyEnded(_:requested:)`` or
    ///   ``StateStoreTestingError/alreadyRelaunched(path:)``; a `StateStoreError` when the store
    ///   cannot be opened; what the launch code throws.
    public func relaunch(after ending: ProcessEnding) throws -> Launch<App> {
        guard !relaunched else { throw StateStoreTestingError.alreadyRelaunched(path: temporaryStore.path) }
        try end(ending)
        relaunched = true
        let next = try temporaryStore.launch(launch)
        next.startedAfter = startedNext
        return next
    }
}
