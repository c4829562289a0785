import Dispatch
import Foundation
import Glibc
import Logging
import StateStoreLinux
import StateStoreSQLite
import Synchronization

extension StateStore.Options {
    /// The integrity check a store runs after it opened, off the launch path (see
    /// ``StateStore/Options/backgroundCheck``).
    public enum BackgroundCheck: Sendable, Hashable {
        /// No check after open.
        case off
        /// `PRAGMA quick_check` (every page read once, the b-trees' structure verified), started
        /// `after` the open, on a thread made then (nothing of the check runs before). The
        /// default, one second after open.
        case quick(after: Duration = .seconds(1))
        /// `PRAGMA integrity_check`: `quick_check`, and every index checked against its table.
        case full(after: Duration = .seconds(1))
    }
}

extension StateStore {
    /// Where the integrity check that runs after open (``Options/backgroundCheck``) stands.
    public enum BackgroundCheckStatus: Sendable, Hashable, CustomStringConvertible {
        /// No check: ``Options/BackgroundCheck/off``, a store in memory, a file that could not be
        /// looked at by its name as it was opened, or a check whose thread could not be made
        /// (both logged at info; a store that could not make its write-behind thread, which
        /// ``StateStore/warnings`` says, does not try).
        case off
        /// Waiting for its start, or reading the file.
        case running
        /// The whole file was read and no damage found; `duration` is the time it read for.
        case passed(duration: Duration)
        /// Damage was found: ``StateStoreError/corrupt(file:_:)`` with SQLite's findings as the
        /// failure's message (at most ten), or what SQLite said when the check's own open met it
        /// (a damaged schema page; ``StateStoreError/notADatabase(file:_:)`` for a header
        /// overwritten since the store opened the file). Also sent to the logger and to every
        /// ``RestorationCoordinator/errorHandler`` on the store.
        case damaged(StateStoreError)
        /// The check could not finish for another reason: an I/O error, the file unreadable, or
        /// ``StateStoreError/fileReplaced(file:)`` when the file's name no longer names the file
        /// the store opened (what the check read, if anything, is not reported). Also sent to
        /// the logger and the error handlers.
        case failed(StateStoreError)
        /// The store was released before the check finished.
        case cancelled

        /// Whether the check has ended, in any way.
        public var isFinished: Bool {
            switch self {
            case .running: false
            default: true
            }
        }

        public var description: String {
            switch self {
            case .off: "off"
            case .running: "running"
            case .passed(let duration): "passed in \(duration)"
            case .damaged(let error): "damaged: \(error.description)"
            case .failed(let error): "failed: \(error.description)"
            case .cancelled: "cancelled"
            }
        }
    }

    /// Where the integrity check that runs after open stands (see ``Options/backgroundCheck``).
    public var backgroundCheckStatus: BackgroundCheckStatus {
        backgroundChecker?.status ?? .off
    }

    /// Blocks the calling thread until the check that runs after open has ended, or `timeout`
    /// passed; returns its status. For tools and tests: never call it on the main actor of an app.
    public func waitForBackgroundCheck(timeout: Duration = .seconds(3600)) -> BackgroundCheckStatus {
        guard let backgroundChecker else { return .off }
        return backgroundChecker.wait(timeout: timeout)
    }

    /// Calls `handler` (on the check's thread, or at once when the check already ended that way)
    /// with the damage or failure the check after open finds. The restoration layer sends it on
    /// to ``RestorationCoordinator/errorHandler``.
    func observeBackgroundCheck(_ handler: @escaping @Sendable (StateStoreError) -> Void) {
        backgroundChecker?.observe(handler)
    }
}

/// The integrity check that runs after a store opened: on a thread of its own, at the idle I/O
/// class and nice 19 (under `SCHED_BATCH`, inherited from the write-behind thread that makes
/// it), over a read-only connection of its own (a WAL reader: it never blocks the store's
/// writes or reads), made once the delay after open has passed. Releasing the store
/// before then ends the check with no thread made; after, it interrupts the check
/// (`sqlite3_interrupt`, and a progress handler for a statement not yet running) and waits
/// for the thread to exit.
final class BackgroundChecker: Sendable {
    /// Whether the check's read transaction is open: the store's commits then make no attempt
    /// to checkpoint (``Connection/pausingCheckpoints``).
    let isHoldingSnapshot = Atomic<Bool>(false)
    private struct State {
        var status: StateStore.BackgroundCheckStatus = .running
        var cancelled = false
        /// The check's connection while it is open, as an address: what `sqlite3_interrupt` is called on.
        var handle: UInt?
        var observers: [@Sendable (StateStoreError) -> Void] = []
        var thread: pthread_t?
        /// Whether the delay has passed (the thread was made, or could not be) or the store was
        /// released first: whoever sets it ends a check that never ran.
        var began = false
        /// The thread's kernel id (`/proc/self/task/<id>`), once it started.
        var threadID: Int32?
    }

    private let state = Lock(State())
    /// Signalled when the check ends (wakes ``wait(timeout:)``).
    private let finished = DispatchSemaphore(value: 0)
    /// The name SQLite opened the store's file by (absolute: a relative path names the same
    /// file after the process changes its working directory).
    let path: String
    /// The device and inode of the file SQLite opened, taken as it opened it: the check reads a
    /// file by its name, so it makes sure the name still names the store's file before and
    /// after it reads.
    let identity: FileIdentity
    let pragma: String
    let options: StateStore.Options

    /// The thread's name, as `/proc/self/task/*/comm` shows it (at most 15 bytes).
    static let threadName = "statestore-chk"

    /// Schedules the check of `file` (the name SQLite opened the store's file by; `identity`,
    /// which file that was) described by `options.backgroundCheck` on `writeBehind`'s thread,
    /// or returns `nil` when it is off. Nothing of the check runs at open: its thread is made
    /// once the delay has passed, by the write-behind thread (whose timed sleep is the timer),
    /// so a launch pays for no thread and shares its cores with nothing of the check's. No
    /// libdispatch timer: its first use makes a thread of libdispatch's own, and at the
    /// process's thread limit libdispatch retries that for ever, blocking the open. Without a
    /// write-behind thread there is no check (`nil`).
    static func start(
        file: String, identity opened: Result<FileIdentity, FileIdentity.Failure>, options: StateStore.Options,
        on writeBehind: WriteBehindQueue
    ) -> BackgroundChecker? {
        let pragma: String, delay: Duration
        switch options.backgroundCheck {
        case .off: return nil
        case .quick(let after): (pragma, delay) = ("PRAGMA quick_check(10)", after)
        case .full(let after): (pragma, delay) = ("PRAGMA integrity_check(10)", after)
        }
        let identity: FileIdentity
        switch opened {
        case .success(let found):
            identity = found
        case .failure(let failure):
            // The file SQLite has just opened cannot be looked at by its name: no check can be
            // sure to read that file.
            options.logger.info(
                "integrity check: not run, the file could not be looked at",
                metadata: [
                    "statestore.database": "\(file)", "statestore.errno": "\(failure.errno)",
                ])
            return nil
        }
        let checker = BackgroundChecker(path: file, identity: identity, pragma: pragma, options: options)
        // Weak: a store released before the delay passed leaves nothing behind (its
        // write-behind thread ends with it, the action unrun).
        let scheduled = writeBehind.schedule(after: .nanoseconds(Self.nanoseconds(delay))) { [weak checker] in
            checker?.startThread()
        }
        return scheduled ? checker : nil
    }

    /// Makes the check's thread, unless the store was released first: under the lock that
    /// ``cancelAndWait()`` takes, so either the release finds the thread to join or the thread
    /// is never made.
    private func startThread() {
        let failure: (errno: Int32, cancelled: Bool)? = state.withLock { state in
            guard !state.began else { return nil }
            state.began = true
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let created = pthread_create(
                &thread, nil,
                { argument in
                    let checker = Unmanaged<BackgroundChecker>.fromOpaque(argument!).takeRetainedValue()
                    _ = clinux_set_thread_name(BackgroundChecker.threadName)
                    checker.state.withLock { $0.threadID = clinux_thread_id() }
                    _ = clinux_lower_thread_priority()
                    checker.run()
                    // A check that ended by itself detaches its thread: a store that lives as
                    // long as the process is never released, and a finished thread nobody
                    // joins keeps its stack. A release that came first took the thread under
                    // this lock and joins it (``cancelAndWait()``).
                    checker.state.withLock { state in
                        guard state.thread != nil else { return }
                        state.thread = nil
                        pthread_detach(pthread_self())
                    }
                    return nil
                }, context)
            guard created == 0 else {
                Unmanaged<BackgroundChecker>.fromOpaque(context).release()
                return (created, state.cancelled)
            }
            state.thread = thread
            return nil
        }
        guard let failure else { return }
        options.logger.info(
            "integrity check: the thread could not be started",
            metadata: [
                "statestore.database": "\(path)", "statestore.errno": "\(failure.errno)",
            ])
        // A release that came meanwhile found the check begun, and left its ending here.
        end(failure.cancelled || isCancelled ? .cancelled : .off)
        finished.signal()
    }

    /// `duration` in nanoseconds, saturated: a delay of `.seconds(.max)` is for ever, not negative.
    static func nanoseconds(_ duration: Duration) -> Int {
        Int(clamping: max(0, duration.saturatingNanoseconds))
    }

    private init(path: String, identity: FileIdentity, pragma: String, options: StateStore.Options) {
        self.path = path
        self.identity = identity
        self.pragma = pragma
        self.options = options
    }

    var status: StateStore.BackgroundCheckStatus { state.withLock { $0.status } }
    /// Whether the check's statement is running now (its connection is open).
    var isReading: Bool { state.withLock { $0.handle != nil } }

    /// Whether the store was released (the check is to stop).
    var isCancelled: Bool { state.withLock { $0.cancelled } }
    var threadID: Int32? { state.withLock { $0.threadID } }

    /// Calls `handler` with the damage or failure the check finds, at once when it already
    /// found one. Kept only while the check runs: a check that ended otherwise calls nothing.
    func observe(_ handler: @escaping @Sendable (StateStoreError) -> Void) {
        let ended: StateStoreError? = state.withLock { state in
            switch state.status {
            case .damaged(let error), .failed(let error): return error
            case .running:
                state.observers.append(handler)
                return nil
            case .off, .passed, .cancelled:
                return nil
            }
        }
        if let ended { handler(ended) }
    }

    func wait(timeout: Duration) -> StateStore.BackgroundCheckStatus {
        let nanoseconds = Self.nanoseconds(timeout)
        if finished.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success { finished.signal() }
        return status
    }

    /// Stops the check (interrupting SQLite mid-statement) and waits for its thread to exit.
    func cancelAndWait() {
        let (thread, neverBegan): (pthread_t?, Bool) = state.withLock { state in
            state.cancelled = true
            if let handle = state.handle { sqlite3_interrupt(OpaquePointer(bitPattern: handle)) }
            defer {
                state.thread = nil
                state.began = true
            }
            return (state.thread, !state.began)
        }
        if neverBegan {
            // Released before the delay passed: no thread was made, and none will be.
            end(.cancelled)
            finished.signal()
        }
        guard let thread else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    private func run() {
        defer { finished.signal() }
        if state.withLock({ $0.cancelled }) { return end(.cancelled) }
        let started = ContinuousClock.now
        if let problem = fileProblem() { return end(.failed(problem)) }
        var readOnly = options
        readOnly.readOnly = true
        let connection: Connection
        do {
            connection = try StateStore.connect(to: path, options: readOnly)
        } catch {
            // Gone since the look above: say so, not only that it cannot be opened.
            if let problem = fileProblem() { return end(.failed(problem)) }
            // Opening reads the schema page: damage there (or to the header, since the store
            // opened the file) is what the check is for, whichever read met it.
            switch error {
            case .corrupt, .notADatabase: return end(.damaged(error))
            default: return end(.failed(error))
            }
        }
        let handle = UInt(bitPattern: connection.handle)
        let registered = state.withLock { state in
            guard !state.cancelled else { return false }
            state.handle = handle
            return true
        }
        guard registered else { return end(.cancelled) }
        isHoldingSnapshot.store(true, ordering: .relaxed)
        // `sqlite3_interrupt` does nothing when no statement is running yet (a release between
        // the registration above and the check's first step): the progress handler also ends
        // the statement once the release is seen.
        sqlite3_progress_handler(
            connection.handle, 1000,
            { context in
                Unmanaged<BackgroundChecker>.fromOpaque(context!).takeUnretainedValue().isCancelled ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
        let outcome: StateStore.BackgroundCheckStatus
        do {
            let problems = try connection.integrityMessages(pragma)
            if problems == ["ok"] {
                outcome = .passed(duration: ContinuousClock.now - started)
            } else {
                outcome = .damaged(
                    .corrupt(
                        file: path,
                        SQLiteFailure(
                            extendedResultCode: .corrupt, message: problems.joined(separator: "; "), sql: pragma
                        )))
            }
        } catch {
            if state.withLock({ $0.cancelled }) {
                outcome = .cancelled
            } else if case .corrupt = error {
                outcome = .damaged(error)
            } else {
                outcome = .failed(error)
            }
        }
        // No interrupt may reach the handle once it is closed.
        state.withLock { $0.handle = nil }
        withExtendedLifetime(connection) {}
        isHoldingSnapshot.store(false, ordering: .relaxed)
        // A file put in the store's place while the check read: what it found is not the store's.
        if outcome != .cancelled, let problem = fileProblem() { return end(.failed(problem)) }
        end(outcome)
    }

    /// `nil` when the name still names the file the store opened; else
    /// ``StateStoreError/fileReplaced(file:)`` when another file has the name or none has (it
    /// was moved, replaced or removed since), or ``StateStoreError/fileSystem(_:)`` when it
    /// cannot be looked at (an I/O error, a folder made unreadable).
    private func fileProblem() -> StateStoreError? {
        switch FileIdentity.of(path) {
        case .success(let now):
            return now == identity ? nil : .fileReplaced(file: path)
        case .failure(let failure) where failure.errno == ENOENT || failure.errno == ENOTDIR:
            return .fileReplaced(file: path)
        case .failure(let failure):
            return .fileSystem(FileSystemFailure(operation: .stat, path: path, errno: failure.errno))
        }
    }

    private func end(_ outcome: StateStore.BackgroundCheckStatus) {
        let observers = state.withLock { state in
            state.status = outcome
            // Called once, below; a later ``observe(_:)`` is answered from the status.
            defer { state.observers = [] }
            return state.observers
        }
        let metadata: Logger.Metadata = ["statestore.database": "\(path)", "statestore.check": "\(pragma)"]
        switch outcome {
        case .passed(let duration):
            options.logger.debug(
                "integrity check passed", metadata: metadata.merging(["statestore.duration": "\(duration)"]) { $1 })
        case .damaged(let error), .failed(let error):
            options.logger.info(
                outcome == .damaged(error) ? "integrity check found damage" : "integrity check failed",
                metadata: metadata.merging(["statestore.error": "\(error.description)"]) { $1 }
            )
            for observer in observers { observer(error) }
        case .cancelled:
            options.logger.debug("integrity check cancelled", metadata: metadata)
        case .off, .running:
            break
        }
    }
}

/// A file's device and inode: which file a path names, whatever its name.
struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// Why a path's file could not be looked at: `stat`'s `errno`.
    struct Failure: Error, Hashable {
        let errno: Int32
    }

    /// The identity of the file `path` names (following symbolic links).
    static func of(_ path: String) -> Result<FileIdentity, Failure> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(Failure(errno: errno)) }
        return .success(FileIdentity(info))
    }

    /// The identity of the file `info` describes (`stat`'s or `fstat`'s).
    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
