import Dispatch
import Foundation
import StateStoreLinux
import Synchronization

/// Work handed off to run in order, after the caller returns, on a queue of its own.
///
/// Jobs run one at a time in the order they were submitted. ``waitUntilIdle()`` returns once
/// every job submitted before it has finished; rather than sleep, the waiting thread runs the
/// jobs still queued itself, so a flush never waits for the queue's thread to be scheduled.
/// A job must not wait for the queue it runs on (a job that calls ``waitUntilIdle()`` would
/// wait for itself): jobs use the connection directly, never the store's waiting accessors.
///
/// A process that ends with `exit()` (or by returning from its main code) runs every live
/// queue's jobs first, waiting for them at most 10 s, so work handed over is committed even
/// without a flush point. Writes kept for a retry after a failure that may pass are not
/// retried then, and states captured but not yet handed over are not on the queue.
final class WriteBehindQueue: Sendable {
    private let jobs = Lock<[@Sendable () -> Void]>([])
    /// Held while jobs run: whoever holds it is the only one popping and running jobs.
    private let runner = Lock<Void>(())
    /// Jobs submitted and not yet finished.
    private let outstanding = Atomic<Int>(0)
    /// The queue's own thread, which sleeps until woken and then drains.
    private let thread = WriterThread()
    /// Whether a drain is scheduled on the queue's thread: a submit then wakes no thread.
    private let scheduled = Atomic<Bool>(false)
    /// Run by ``waitUntilIdle()`` before it returns, on the waiting thread: the restoration
    /// coordinator hands the writer's failures to its error handler there (see ``afterWaiting(_:)``).
    private let afterWait = Lock<AfterWaiting?>(nil)
    /// A struct, not the bare function: a lock keeps its value in generic storage, where a
    /// function value would be wrapped in two more thunks at every `withLock` (see ``Lock``).
    private struct AfterWaiting: Sendable { let action: @Sendable () -> Void }

    /// The `errno` of the failure to start the queue's thread (the process at its thread limit:
    /// `RLIMIT_NPROC`, a cgroup's `pids.max`), or 0 when it runs. Without a thread, a waking
    /// ``submit(waking:_:)`` runs the queued jobs on the calling thread before it returns.
    var threadStartError: Int32 { startError.load(ordering: .relaxed) }
    private let startError = Atomic<Int32>(0)

    /// Whether jobs wait for someone to wait for the queue (``waitUntilIdle()``: a flush point,
    /// a read or write through the store) instead of running on the queue's thread as they
    /// come. For the testing kit (`StateStoreTesting`), which sets it on the stores it opens:
    /// the writer never preempts the main thread (see ``WriterThread``), so on a busy core it
    /// may commit nothing between two flush points, and a kill then loses every batch handed
    /// over since the last one. Holding makes that worst case the rule, so that what a
    /// simulated kill leaves does not depend on when the thread was scheduled. What a flush
    /// point commits is unchanged: it runs the jobs itself, as it does without holding.
    var holdsJobs: Bool {
        get { holding.load(ordering: .acquiring) }
        set { holding.store(newValue, ordering: .releasing) }
    }
    private let holding = Atomic<Bool>(false)

    /// Set by ``abandon()``: no job runs any more, and jobs submitted later are dropped.
    var isAbandoned: Bool { abandoned.load(ordering: .acquiring) }
    private let abandoned = Atomic<Bool>(false)

    init() {
        startError.store(thread.start { [weak self] in self?.drain() }, ordering: .relaxed)
        ExitDrain.register(self)
    }

    deinit {
        thread.stop()
    }

    /// Queues `job` to run after every job submitted before it. With `waking`, the queue's
    /// thread runs it now (woken when it sleeps, a system call); without, the job waits for the
    /// next ``wake()`` or ``waitUntilIdle()``, unless the thread is still running jobs and
    /// takes it.
    func submit(waking: Bool = true, _ job: @escaping @Sendable () -> Void) {
        guard !isAbandoned else { return }
        outstanding.add(1, ordering: .sequentiallyConsistent)
        jobs.withLock { $0.append(job) }
        if waking { wake() }
    }

    /// Has the queue's thread run the jobs queued so far, unless it is already on its way; a
    /// queue whose thread could not be started runs them here, before returning.
    func wake() {
        guard !isIdle, !holdsJobs else { return }
        guard threadStartError == 0 else {
            runQueued()
            return
        }
        guard scheduled.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
        else { return }
        thread.wake()
    }

    /// The queue's side: runs jobs until none is left and no submit could have been missed.
    private func drain() {
        while true {
            // A timer that falls due while jobs keep coming runs between two of them. Held
            // jobs wait for a waiter (the thread is woken for its timer all the same).
            if !holdsJobs { runQueued(between: thread.runDueTimer) }
            scheduled.store(false, ordering: .sequentiallyConsistent)
            // A job queued after the last look, whose submit saw a drain still scheduled.
            guard !holdsJobs, !jobs.withLock({ $0.isEmpty }),
                scheduled.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
            else { return }
        }
    }

    /// Runs `action` on the queue's thread once `delay` has passed, between jobs: a timer that
    /// needs no other thread. Returns `false`, and never runs it, when the queue has no thread.
    /// The store starts its integrity check with it.
    func schedule(after delay: DispatchTimeInterval, _ action: @escaping @Sendable () -> Void) -> Bool {
        guard threadStartError == 0 else { return false }
        thread.schedule(after: delay, action)
        return true
    }

    /// The kernel id of the queue's thread (0 until it has started).
    var threadID: Int32 { thread.threadID.load(ordering: .acquiring) }

    /// Whether no job is queued or running.
    var isIdle: Bool { outstanding.load(ordering: .sequentiallyConsistent) == 0 }

    /// Returns when every job submitted before the call has finished, running queued ones on
    /// the calling thread. Returns at once when there is none.
    func waitUntilIdle() {
        if !isIdle { runQueued() }
        afterWait.withLock { $0 }?.action()
    }

    /// Sets what ``waitUntilIdle()`` runs before it returns (replacing what was set): so a read
    /// or a flush that waited for a write that failed delivers the failure before it returns.
    func afterWaiting(_ action: (@Sendable () -> Void)?) {
        afterWait.withLock { $0 = action.map(AfterWaiting.init) }
    }

    /// Runs the queued jobs until none is left, calling `between` (if any) after each. Once
    /// the queue is abandoned, they are taken and dropped instead.
    private func runQueued(between: (() -> Void)? = nil) {
        runner.withLock { _ in
            while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                if !isAbandoned { job() }
                outstanding.subtract(1, ordering: .sequentiallyConsistent)
                between?()
            }
        }
    }

    /// Ends the queue as the death of its process would: the job running now (on any thread)
    /// finishes, which a kill could also have let happen; the jobs still queued never run, and
    /// those submitted later are dropped; the thread ends. For the testing kit's simulated
    /// kill (``StateStore/simulateProcessDeath()``).
    func abandon() {
        abandoned.store(true, ordering: .releasing)
        // Waits for the job running, if any, then drops the rest.
        runQueued()
        thread.stop()
    }
}

/// The thread a ``WriteBehindQueue`` runs its jobs on, made with the queue. It runs under
/// `SCHED_BATCH`: a normal share of the CPU, but waking it never preempts the thread that woke
/// it. On a core shared with the main thread (one core, or the other one busy), a writer woken
/// at a push used to take the core at once and hold it for its whole commit: the first push +
/// pop of a new app took 0.5 ms there instead of 55 µs. Now it runs when the main thread blocks
/// or its turn on the core ends; with a core to spare, at once. A lower priority would do the
/// same but make a flush point, which waits for the writer, wait for a thread that runs less.
/// When the thread cannot be made, ``WriteBehindQueue`` runs its jobs on the thread that hands
/// them over (see ``WriteBehindQueue/threadStartError``).
private final class WriterThread: Sendable {
    private let wakeUps = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    /// A one-shot action the thread runs once its deadline has passed (``schedule(after:_:)``).
    private let timer = Lock<Timer?>(nil)
    /// A struct, not a tuple: see ``WriteBehindQueue/AfterWaiting``.
    private struct Timer: Sendable {
        var deadline: DispatchTime
        var action: @Sendable () -> Void
    }
    /// The thread's kernel id once it runs (0 before), as `/proc/self/task` names it.
    let threadID = Atomic<Int32>(0)

    /// Starts the thread: each ``wake()`` runs `drain` once (wake-ups that come while it runs
    /// run it again after). Returns 0, or `pthread_create`'s error when no thread could be made.
    func start(_ drain: @escaping @Sendable () -> Void) -> Int32 {
        final class Body: Sendable {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        let body = Body { [self] in
            // One name, set by the thread itself (at most 15 bytes are kept).
            _ = clinux_set_thread_name("statestore-wb")
            threadID.store(clinux_thread_id(), ordering: .releasing)
            _ = clinux_set_batch_scheduling()
            while true {
                if let deadline = timer.withLock({ $0?.deadline }) {
                    // A semaphore's timed wait is a futex wait with a timeout: no libdispatch
                    // timer, which would need a thread of libdispatch's own.
                    let woken = wakeUps.wait(timeout: deadline) == .success
                    if stopped.load(ordering: .acquiring) { return }
                    // Due, whether the wait timed out or a wake-up came after the deadline
                    // (a writer kept busy must not put the action off for as long as it is).
                    runDueTimer()
                    if !woken { continue }
                } else {
                    wakeUps.wait()
                    if stopped.load(ordering: .acquiring) { return }
                }
                drain()
            }
        }
        // Made with pthread_create, not Foundation's Thread, whose start() does not say when
        // the thread could not be made.
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(body).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, &attributes,
            { argument in
                Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, context)
        if created != 0 { Unmanaged<Body>.fromOpaque(context).release() }
        return created
    }

    func wake() { wakeUps.signal() }

    /// Runs the timer's action when its deadline has passed, taken (cleared) in the lock that
    /// found it due, so a timer set meanwhile is not lost. Called on the thread only: between
    /// its sleeps, and between the jobs of a drain (a writer kept busy must not put it off).
    func runDueTimer() {
        let due: (@Sendable () -> Void)? = timer.withLock { timer in
            guard let due = timer, DispatchTime.now() >= due.deadline else { return nil }
            timer = nil
            return due.action
        }
        due?()
    }

    /// Runs `action` on the thread once `delay` has passed (replacing an action not yet run),
    /// between jobs; never when the thread has ended first.
    func schedule(after delay: DispatchTimeInterval, _ action: @escaping @Sendable () -> Void) {
        timer.withLock { $0 = Timer(deadline: .now() + delay, action: action) }
        // The thread, asleep without a deadline, wakes to take this one (and drains nothing).
        wakeUps.signal()
    }

    /// Ends the thread once it has finished what it is running.
    func stop() {
        stopped.store(true, ordering: .releasing)
        wakeUps.signal()
    }
}

/// Runs the jobs of every live ``WriteBehindQueue`` when the process exits normally.
private enum ExitDrain {
    private struct Entry: Sendable { weak var queue: WriteBehindQueue? }
    private static let queues = Lock<[Entry]>([])
    private static let installed = Atomic<Bool>(false)

    static func register(_ queue: WriteBehindQueue) {
        if installed.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
            atexit { ExitDrain.drainAll() }
        }
        queues.withLock { entries in
            entries.removeAll { $0.queue == nil }
            entries.append(Entry(queue: queue))
        }
    }

    /// Has each busy queue's own thread run its jobs, and waits for them, at most 10 s: the
    /// exiting thread does not run them itself, as it may hold a lock a job needs (`exit()`
    /// called inside a store's closure), and an exit must not hang on it. No thread is made
    /// (at the process's thread limit none could be); a queue without a thread has written
    /// everything as it was handed over.
    private static func drainAll() {
        // A queue without a thread has settled each batch as it was handed over; its wake()
        // would run jobs here, on the exiting thread.
        // A held queue (the testing kit's) runs its jobs when its test waits for them, not here.
        let busy = queues.withLock { $0.compactMap(\.queue) }.filter {
            !$0.isIdle && $0.threadStartError == 0 && !$0.holdsJobs
        }
        guard !busy.isEmpty else { return }
        for queue in busy { queue.wake() }
        let deadline = ContinuousClock.now + .seconds(10)
        while busy.contains(where: { !$0.isIdle }), ContinuousClock.now < deadline { usleep(500) }
    }
}

extension StateStore {
    /// Queues `job` on the store's write-behind queue: it runs after every job queued before
    /// it, and before any read or write made through the store once it is queued. Without
    /// `waking`, it waits for the queue's ``WriteBehindQueue/wake()``, for someone to wait for
    /// the queue, or for the queue's thread to take it while still running.
    func submitWriteBehind(waking: Bool = true, _ job: @escaping @Sendable () -> Void) {
        writeBehind.submit(waking: waking, job)
    }

    /// Returns when every write-behind job handed to the store so far has finished.
    public func waitForWriteBehind() {
        writeBehind.waitUntilIdle()
    }

    /// Whether write-behind jobs are queued or running.
    public var hasWriteBehindWork: Bool { !writeBehind.isIdle }

    /// A number that changes whenever the database may have changed other than through the
    /// write-behind writer: a commit through this store object (``write(_:)`` and everything
    /// built on it), or a commit by another connection (another process, another store object),
    /// which `PRAGMA data_version` reveals.
    ///
    /// With `refreshing`, `PRAGMA data_version` is read now when the connection is free; when
    /// someone holds it (the writer, in a transaction), the value published when it was last
    /// released is returned (the writer reads the pragma as each of its transactions begins
    /// and publishes what it saw as it ends). Never waits for the writer.
    func changeCount(refreshing: Bool) -> UInt64 {
        if refreshing {
            _ = connection.withLockIfAvailable { (connection: inout Connection) -> Bool in
                connection.noteOtherConnectionsCommitsIfAny()
                publishedChangeCount.store(connection.changeCount, ordering: .releasing)
                return true
            }
        }
        return publishedChangeCount.load(ordering: .acquiring)
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction for the write-behind writer: it does not
    /// wait for the write-behind queue (it runs on it), and its commit does not count as a
    /// change in ``changeCount(refreshing:)``; commits by other connections seen when it
    /// begins do.
    func writeBehindTransaction<T: Sendable>(
        _ body: (WriteTransaction) throws(StateStoreError) -> T
    ) throws(StateStoreError) -> T {
        try connection.withLock { (connection: inout Connection) throws(StateStoreError) -> T in
            if writeBehind.isAbandoned { throw Self.deadProcessError(path) }
            writerInTransaction.store(true, ordering: .relaxed)
            defer {
                publishedChangeCount.store(connection.changeCount, ordering: .releasing)
                writerInTransaction.store(false, ordering: .relaxed)
            }
            return try connection.writeTransaction(countsAsChange: false) { () throws(StateStoreError) -> T in
                try body(WriteTransaction(connection: connection, store: self))
            }
        }
    }

    /// The rows stored at `paths`, in one query, keyed by path, and the paths that have a row.
    /// Paths with no row are absent from both; rows over ``Options/maximumStateSize`` or whose
    /// bytes fail their checksum are left out of `rows` but not of `present` (a per-path
    /// ``state(at:)`` reports them).
    func states(
        at paths: [RestorationPath], waitingForWrites: Bool = true
    ) throws(StateStoreError) -> (rows: [RestorationPath: StoredState], present: Set<RestorationPath>) {
        guard !paths.isEmpty else { return ([:], []) }
        // Built as bytes, one path after another: a rebuild asks for every node's path at once.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(paths.count * 24 + 2)
        bytes.append(UInt8(ascii: "["))
        for (index, path) in paths.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSON.writeString(path.rawValue, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        let list = String(decoding: bytes, as: UTF8.self)
        let limit = options.maximumStateSize
        return try withConnection(waitingForWrites: waitingForWrites) {
            (connection) throws(StateStoreError) -> ([RestorationPath: StoredState], Set<RestorationPath>) in
            // The list drives the join, each path one lookup in the primary key: `IN (SELECT …)`
            // would first copy the list into a temporary index. `CROSS JOIN` keeps that order.
            let statement = try connection.cached(
                "SELECT states.path, \(StoredState.columns) FROM json_each(?1) AS wanted CROSS JOIN states ON states.path = wanted.value"
            )
            defer { statement.reset() }
            statement.bind(list, at: 1)
            statement.bind(limit, at: 9)
            var result: [RestorationPath: StoredState] = [:]
            var present = Set<RestorationPath>()
            var unreadablePath = false
            while try statement.step() {
                guard case .success(let path) = RestorationPath.stored(in: statement, column: 0) else {
                    unreadablePath = true
                    continue
                }
                present.insert(path)
                guard let state = try? StoredState(path: path, row: statement, from: 1, limit: limit),
                    state.checksumIsValid
                else { continue }
                result[path] = state
            }
            // A row whose path cannot be read could be any of them: none is known to be empty.
            return (result, unreadablePath ? Set(paths) : present)
        }
    }
}
