import StateStore

/// What the testing kit itself refuses or fails to do. Failures of the store (opening it, a
/// damaged file) are thrown as the store's own `StateStoreError`, and those of the app's launch
/// code as it threw them.
public enum StateStoreTestingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The temporary folder for a ``TemporaryStore`` could not be made under `folder`
    /// (`errno` says why: the folder is missing, full, or not writable).
    case temporaryFolderNotMade(folder: String, errno: Int32)
    /// A launch on the store at `path` is still running: a process of the app already has the
    /// file open. End it first (``Launch/end(_:)``), or relaunch it (``Launch/relaunch(after:)``).
    case launchStillRunning(path: String)
    /// The launch already ended as `ended`, and was asked to end as `requested`.
    case alreadyEnded(ProcessEnding, requested: ProcessEnding)
    /// The launch on the store at `path` was already relaunched: relaunch the newer ``Launch``.
    case alreadyRelaunched(path: String)
    /// The fixture at `path` (a database or an export document a ``TemporaryStore`` starts
    /// from) could not be read or copied, for `reason`.
    case fixtureNotCopied(path: String, reason: String)
    /// A file of a ``SimulatedMemory`` could not be written at `path`, for `reason`.
    case memoryFilesNotWritten(path: String, reason: String)
    /// The power cut of a launch on the store in `folder` could not be prepared or made, for
    /// `reason`: the crash-simulating VFS that records the launch's writes was not available,
    /// or another store was still open on the file when the power went (close every store a
    /// test opened with ``TemporaryStore/open()`` before the cut: a live connection would keep
    /// the process's view of the file, which a reboot does not).
    case powerCutNotRecorded(folder: String, reason: String)
    /// The application did not respond to a memory warning of `level` or higher `within` the
    /// time given; `lastReceived` is the level of the last warning it did respond to, if any.
    case noMemoryWarning(level: MemoryPressureLevel, within: Duration, lastReceived: MemoryPressureLevel?)

    /// What went wrong and what to do.
    public var description: String {
        switch self {
        case .temporaryFolderNotMade(let folder, let errno):
            "a temporary folder could not be made in \(folder) (errno \(errno)): set TMPDIR to a writable folder"
        case .launchStillRunning(let path):
            "a launch on \(path) is still running; end it (end(_:)) or relaunch it (relaunch(after:)) before launching again"
        case .alreadyEnded(let ended, let requested):
            "the launch already ended by \(ended); it cannot end again by \(requested)"
        case .alreadyRelaunched(let path):
            "the launch on \(path) was already relaunched; relaunch the Launch that relaunch(after:) returned"
        case .fixtureNotCopied(let path, let reason):
            "the fixture \(path) could not be read or copied (\(reason)): check the path, relative to the test's working directory"
        case .memoryFilesNotWritten(let path, let reason):
            "the simulated memory file \(path) could not be written (\(reason)): check that the store's folder is writable"
        case .powerCutNotRecorded(let folder, let reason):
            "the power cut under \(folder) could not be made: \(reason)"
        case .noMemoryWarning(let level, let within, let last):
            "the application responded to no \(level) memory warning within \(within) (the last it responded to: \(last.map { "\($0)" } ?? "none")); check that it observes the monitor (SimulatedMemory.observe(by:)) and that the main actor is free to take the warning"
        }
    }
}
