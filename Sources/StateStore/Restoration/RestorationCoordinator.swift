import Dispatch
import Foundation
import Logging

/// The lifecycle observer that saves each ``StateRestoring`` controller's state when it
/// disappears, restores it when it appears, and archives the window hierarchy.
///
/// The main actor never waits for the disk, except at the flush points below.
///
/// - `viewWillDisappear`: after the controller's override has run (it commits its edits), the
///   coordinator only captures the controller's `restorableState` (a `Sendable` value, so the
///   copy is cheap) and queues it. Encoding, the unchanged-bytes check and the write happen on
///   the store's write-behind writer, off the main actor.
/// - Structural change (push, pop, present, dismiss, tab switch, containment): the queued states
///   and the new hierarchy archive are handed to the writer as one batch, which it commits in
///   **one** transaction, batches in the order they were handed over; so the database never
///   holds half a navigation, nor a later change without an earlier one. Anything queued
///   outside a structural change is handed over at the end of the main actor's current turn.
/// - Flush points wait for the writer: ``flush(archiving:)``, ``saveVisibleControllers(of:)``
///   (``Application/saveVisibleState()``, every critical memory warning), ``Application/terminate()``
///   (and so SIGTERM/SIGINT once ``Application/installTerminationHandlers(signals:)`` ran),
///   reading ``statistics``, and any read or write made through the ``StateStore`` itself.
/// - `viewWillAppear`: before the override runs, when the path holds a newer state than this
///   instance has seen (always, for a fresh instance), it is put into `restorableState`:
///   migrated if older, quarantined if newer or undecodable. In the steady state this costs no
///   query: the coordinator knows what it handed to the writer (a state still queued is taken
///   as the value itself, a written one from a ``RecreatableCache`` of recent bytes, purged on
///   memory warnings), and `PRAGMA data_version` tells it when another connection committed,
///   in which case it checks the path's generation first. On a database that held no state
///   when the store opened it (a first launch), a path the coordinator has not written costs no
///   query either: it holds nothing until something other than the coordinator's writer writes
///   a state (another connection, a write through the store, a second coordinator on the store).
///
/// ## The window of loss
///
/// A save is durable (in the WAL, so it survives an application crash; with
/// ``StateStore/Options/Synchronous/full`` a power loss too) once the writer has committed its
/// batch. Between the disappearance and that commit — the writer's encoding and one
/// transaction, typically well under a millisecond for a 1 KB state and a few milliseconds for
/// 512 KB with a core to spare (the `save to durable` benchmarks measure it), after the batches
/// handed over before it; on a core shared with a busy main thread, once the main thread
/// blocks or its turn on the core ends, as the writer never preempts it — a crash or
/// `kill -9` loses that batch and the ones after it. What survives is always every batch up
/// to a point, in order, each whole: everything handed over before the last flush point,
/// then a prefix of the later batches. SIGTERM, SIGINT (with the handlers installed),
/// ``Application/terminate()`` and a critical memory warning are flush points, so nothing is
/// lost to them.
///
/// Failures never crash the app: they go to ``errorHandler`` (by default, the log), on the main
/// actor, and the state stays in memory to be saved again.
@MainActor
public final class RestorationCoordinator: LifecycleObserver, SelectiveLifecycleObserver, TransitionEndObserver {
    // The private stored properties it mutates on every appearance and disappearance are marked
    // `@exclusivity(unchecked)`: the coordinator is isolated to the main actor, and none of its
    // accesses to them spans a call out (to an error handler, a controller, the store), so the
    // runtime's dynamic exclusivity check (a thread-local access set, about 40 instructions an
    // access, some 150 accesses a push + pop) would only ever pass.
    /// The store states and archives are written to and read from, given at initialization.
    public let store: StateStore
    let scenePrefix = "window"

    /// Receives every problem, on the main actor; the default logs it. Problems found by the
    /// writer arrive before the next flush point, or the next read or write through the store
    /// on the main thread (each waits for the writer), returns; else at the main actor's next turn.
    public var errorHandler: @MainActor (RestorationError) -> Void
    /// The most recent problems (at most 100), newest last. Includes what the writer has
    /// reported so far (it does not wait for the writer).
    public var recentErrors: [RestorationError] {
        absorbWriterOutcomes()
        return errors
    }
    @exclusivity(unchecked) var errors: [RestorationError] = []
    /// How many problems went to ``errorHandler`` so far; ``recentErrors`` keeps the last 100.
    package private(set) var reportedCount = 0
    /// How many saves were lost so far: handed-over states the writer dropped for good (a
    /// failure that cannot pass: a key the store was not given, a state that cannot be
    /// encoded), counted as their outcomes are taken in, and saves refused to protect a stored
    /// state that could not be set aside. Each kind was reported to ``errorHandler``.
    package internal(set) var droppedStateWrites = 0

    /// Counts of what the coordinator did; useful in tests, soak runs and benchmarks.
    public struct Statistics: Sendable, Hashable {
        /// Disappearances of a savable controller (each hands a state to the writer).
        public var saveAttempts = 0
        /// States written to the database.
        public var stateWrites = 0
        /// Saves skipped because the encoded bytes had not changed (found by the writer, which
        /// encodes every handed-over state).
        public var unchangedSkips = 0
        /// States put into a controller: decoded from the database or the cache of recent
        /// bytes, or taken as the value another instance handed over and is still queued.
        public var restores = 0
        /// Older states migrated on read.
        public var migrations = 0
        /// States moved to quarantine.
        public var quarantined = 0
        /// Hierarchy archives written.
        public var archiveWrites = 0
        /// Transactions committed.
        public var transactions = 0
        /// Appearances that needed a database query (a state not known or not cached, or a
        /// path another connection may have changed). Zero in the steady state.
        public var restoreQueries = 0
    }
    /// Whether states or archives handed to the writer wait for a retry after a failure that
    /// may pass (a full disk, a lock held past the busy timeout): written by a later batch or
    /// flush point if the failure passes, lost if the process ends first. After ``flush(archiving:)``
    /// or ``StateStore/Application/terminate()``, whether they left anything unsaved (each
    /// failure went to ``errorHandler``).
    public var hasUnsavedWrites: Bool { writer.hasCarriedWork }

    /// What the coordinator did. Reading it waits for the writer (a flush point), so the
    /// counts include every state handed over so far.
    public var statistics: Statistics {
        settle()
        return counts
    }
    @exclusivity(unchecked) var counts = Statistics()
    /// Controller classes met, each with its `StateRestoring` conformance (see ``restoringType(of:)``).
    @exclusivity(unchecked) var restoringTypes: [RestoringType] = []
    struct RestoringType {
        let key: ObjectIdentifier
        let type: (any StateRestoring.Type)?
    }

    /// This coordinator's number, unique in the process (never reused, unlike an address).
    let serial: UInt64 = {
        RestorationCoordinator.serials += 1
        return RestorationCoordinator.serials
    }()
    static var serials: UInt64 = 0

    @exclusivity(unchecked) var paths: [RestorationPath: PathEntry] = [:]
    /// How many entries hold a pending value.
    @exclusivity(unchecked) var pendingCount = 0

    /// The entry of `path`, made on first use.
    func entry(_ path: RestorationPath) -> PathEntry {
        if let entry = paths[path] { return entry }
        let entry = PathEntry(path: path)
        paths[path] = entry
        return entry
    }

    func setPending(_ value: PendingValue?, in entry: PathEntry) {
        if (entry.pending == nil) != (value == nil) { pendingCount += value == nil ? -1 : 1 }
        entry.pending = value
    }

    /// The store's change count from which a path with no ``PathEntry/latest`` holds no state
    /// (``StateStore/noStatesAtChangeCount``): the store held none at open and this coordinator
    /// is its only one. `nil` once anything else may have written, or an entry was dropped
    /// without the path being known empty.
    @exclusivity(unchecked) var noStatesAt: UInt64?

    @exclusivity(unchecked) var nextToken: UInt64 = 0
    /// Paths whose stored state had to be set aside (it does not decode, or a save would drop
    /// members of it) and could not be (a full disk, a lock): no save replaces it until an
    /// appearance sets it aside. The value says whether the refusal was reported.
    @exclusivity(unchecked) var unprotectedPaths: [RestorationPath: Bool] = [:]
    /// Paths whose row (over the size limit) the writer is moving to quarantine
    /// (``setAsideByWriter(_:reason:)``), until the main actor takes in how it ended: an
    /// appearance meanwhile finds the row still there and starts from its default state, without
    /// handing it over again.
    @exclusivity(unchecked) var settingAside: Set<RestorationPath> = []
    /// States captured since the last batch, in the order their paths were first queued (a
    /// path queued again has its state replaced in place). Found by a scan while few (a
    /// structural change queues one or two), through ``queuedIndex`` once many.
    @exclusivity(unchecked) var queued: [StateHandoff] = []
    @exclusivity(unchecked) var queuedIndex: [RestorationPath: Int] = [:]
    @exclusivity(unchecked) var queuedEvents: [PressureEvent] = []
    @exclusivity(unchecked) var queuedRemovals: [String] = []
    @exclusivity(unchecked) var queuedForgotten: [String] = []
    /// How many open windows show their scene read-only (``SceneConflictPolicy/openReadOnly``):
    /// while none does, no save or archive looks further.
    @exclusivity(unchecked) var readOnlyWindows = 0
    /// Set while a controller of a read-only scene restores: what it finds wrong is reported,
    /// not set aside.
    @exclusivity(unchecked) var restoringReadOnly = false
    @exclusivity(unchecked) var flushScheduled = false
    /// Whether a look at ``queued`` is waiting for the end of the transition under way.
    @exclusivity(unchecked) var handOverAtTransitionEnd = false
    /// When `PRAGMA data_version` was last read for an appearance.
    @exclusivity(unchecked) var lastChangeCheck: UInt64?

    let writer: RestorationWriter
    /// The write-behind job that writes the batches waiting for the writer, made once.
    let runWriter: @Sendable () -> Void
    /// Recently written or read state bytes, so appearances need no query. Purged on memory warnings.
    let recentStates: RecreatableCache<RestorationPath, CachedState>

    /// Set while `restoreHierarchy(in:)` rebuilds a window: the half-built hierarchy must not
    /// replace the archive being restored.
    @exclusivity(unchecked) var isRestoringHierarchy = false {
        didSet { if !isRestoringHierarchy && batchDepth == 0 { duplicateIdentifiersByParent.removeAll() } }
    }
    /// Set (nested) while one synchronous pass finds the paths of many controllers at once
    /// (saving every visible controller, preloading a window's states): identifiers cannot
    /// change during it, so each parent's duplicates are looked at once.
    @exclusivity(unchecked) var batchDepth = 0
    /// While a hierarchy is rebuilt or a batch runs, each parent's identifiers shared by two
    /// children, and the children themselves, so that finding the paths of n siblings costs
    /// O(n), not O(n²).
    @exclusivity(unchecked) var duplicateIdentifiersByParent: [ObjectIdentifier: Siblings] = [:]

    /// A parent's children as ``isShared(_:of:in:)`` looks at them in a batch.
    struct Siblings {
        /// Identifiers two or more of them have.
        var duplicates: Set<String>
        /// The children themselves.
        var members: Set<ObjectIdentifier>
    }

    /// Runs `body` with sibling identifiers cached per parent (see ``batchDepth``).
    func inBatch<T>(_ body: () -> T) -> T {
        batchDepth += 1
        defer {
            batchDepth -= 1
            if batchDepth == 0 && !isRestoringHierarchy { duplicateIdentifiersByParent.removeAll() }
        }
        return body()
    }
    @exclusivity(unchecked) var reportedDuplicates: Set<RestorationPath> = []
    /// Controllers already reported as not archivable, so each is reported once.
    @exclusivity(unchecked) var reportedOmissions: Set<HierarchyArchive.Omission> = []
    /// How many controllers the last archive capture met: the room the next one reserves.
    @exclusivity(unchecked) var lastCaptureCount = 0
    /// The restoration-path component of each scene seen (`""` for none), read once from the store.
    @exclusivity(unchecked) var scenePrefixes: [String: String] = [:]

    /// The limits an archive must be within to be rebuilt; an archive over them is set aside
    /// with the reason and the app starts fresh. Defaults to ``HierarchyArchive/Limits/standard``.
    // Read at every archived controller; like the coordinator's own state it is exempt from
    // the runtime's dynamic exclusivity check (main-actor state, no access spans a call out).
    @exclusivity(unchecked) public var archiveLimits = HierarchyArchive.Limits.standard

    /// Whether a structural change returns before its batch is committed (write-behind, the
    /// default), or waits for it (write-through).
    ///
    /// With write-behind the main actor only captures states; the writer encodes and commits,
    /// and a crash can lose the changes made since the last flush point (a prefix of them is
    /// on disk, each whole). Batches handed over while the writer is busy are folded into one,
    /// so a writer that falls behind commits each path's newest state once and a flush point
    /// waits for at most two transactions. Each hand-over reaches the writer at once (it is
    /// woken when it sleeps; one still writing takes the batch next). Set it to `false` when
    /// every structural change must be on disk before the call that made it returns, at the
    /// cost of the main thread waiting for the disk.
    // Read at every hand-over; exempt from the dynamic exclusivity check, as above.
    @exclusivity(unchecked) public var writesBehind = true

    /// Set while the application terminates: closing windows must not overwrite their archives.
    @exclusivity(unchecked) var isTerminating = false

    /// - Parameters:
    ///   - store: The store states and archives are written to and read from.
    ///   - cacheLimit: The most bytes of recent states kept for restores without a query.
    public init(store: StateStore, cacheLimit: Int = 16 << 20) {
        self.store = store
        // The default reports through the application's logger (``StateStore/Options/logger``),
        // at info: the application decides what a failed save means to it.
        let logger = store.options.logger
        errorHandler = { error in
            logger.info("restoration problem", metadata: ["statestore.error": "\(error.description)"])
        }
        let cache = RecreatableCache<RestorationPath, CachedState>(
            name: "statestore.recent-states", costLimit: cacheLimit, cost: { $0.cost }
        )
        recentStates = cache
        if store.restorationCoordinators.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
            noStatesAt = store.noStatesAtChangeCount
        }
        let box = WeakCoordinator()
        let writer = RestorationWriter(store: store, cache: cache) { box.scheduleAbsorb() }
        self.writer = writer
        runWriter = { writer.runNext() }
        box.coordinator = self
        // A read through the store (or a flush point) on the main thread that waited for the
        // writer hands its failures to `errorHandler` before it returns, not a turn later.
        // Weak: the store must not keep its coordinator's writer (which holds the store) alive.
        MainQueue.mark()
        store.writeBehind.afterWaiting { [weak writer] in
            guard writer?.hasProblemsWaiting == true, MainQueue.isCurrent else { return }
            MainActor.assumeIsolated { box.coordinator?.absorbWriterOutcomes() }
        }
        // Damage the integrity check after open finds reaches the error handler like any store failure.
        store.observeBackgroundCheck { error in
            Task { @MainActor in box.coordinator?.report(.store(error)) }
        }
        // Room for the first screens' paths, made here rather than by the first saves and
        // appearances (a table's first insert allocates it, and each doubling rehashes it).
        paths.reserveCapacity(16)
        knownPaths.reserveCapacity(16)
    }

    func report(_ error: RestorationError) {
        reportedCount += 1
        errors.append(error)
        if errors.count > 100 { errors.removeFirst(errors.count - 100) }
        errorHandler(error)
    }

    func record(for controller: ViewController) -> Record {
        if let record = existingRecord(of: controller) { return record }
        // A new instance (or one another coordinator knew): start afresh.
        let record = Record(owner: serial)
        controller.restorationRecord = record
        return record
    }

    func existingRecord(of controller: ViewController) -> Record? {
        guard let record = controller.restorationRecord, record.owner == serial else { return nil }
        return record
    }

    /// Every path found so far, by the identifiers and scene that lead to it: an instance at
    /// a path met before (a screen shown again, a new page of a kind pushed before) shares its
    /// ``CachedPath``; no path is built or validated again.
    @exclusivity(unchecked) var knownPaths: [PathKey: CachedPath] = [:]
    /// The last paths found, newest first, looked through before ``knownPaths``.
    @exclusivity(unchecked) var recentPaths: [CachedPath] = []
}
