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
    @exclusivity(unchecked) private var errors: [RestorationError] = []
    /// How many problems went to ``errorHandler`` so far; ``recentErrors`` keeps the last 100.
    package private(set) var reportedCount = 0
    /// How many saves were lost so far: handed-over states the writer dropped for good (a
    /// failure that cannot pass: a key the store was not given, a state that cannot be
    /// encoded), counted as their outcomes are taken in, and saves refused to protect a stored
    /// state that could not be set aside. Each kind was reported to ``errorHandler``.
    package private(set) var droppedStateWrites = 0

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
    @exclusivity(unchecked) private var counts = Statistics()
    /// Controller classes met, each with its `StateRestoring` conformance (see ``restoringType(of:)``).
    @exclusivity(unchecked) private var restoringTypes: [RestoringType] = []
    private struct RestoringType {
        let key: ObjectIdentifier
        let type: (any StateRestoring.Type)?
    }

    /// A restoration path as found for one instance: its identifiers leaf first, its scene,
    /// and what the coordinator knows of the path. A reference: reading it from a record
    /// retains one object, not an array, a string and an entry.
    final class CachedPath {
        let leafFirst: [String]
        let scene: String?
        let entry: PathEntry
        init(leafFirst: [String], scene: String?, entry: PathEntry) {
            self.leafFirst = leafFirst
            self.scene = scene
            self.entry = entry
        }
    }

    /// Kept on the controller (``ViewController/restorationRecord``), for one coordinator.
    final class Record {
        /// The coordinator's ``serial``: a record of another coordinator is not this one's.
        let owner: UInt64
        /// The newest generation this instance has loaded or written.
        @exclusivity(unchecked) var seenGeneration: Int64?
        /// The coordinator's number of the state this instance holds (loaded or handed over).
        @exclusivity(unchecked) var seenToken: UInt64?
        /// The restoration path last found for this instance, with its identifiers leaf first
        /// and its scene: still its path while the walk to the root meets the same ones.
        @exclusivity(unchecked) var path: CachedPath?
        init(owner: UInt64) { self.owner = owner }
    }
    /// This coordinator's number, unique in the process (never reused, unlike an address).
    private let serial: UInt64 = {
        RestorationCoordinator.serials += 1
        return RestorationCoordinator.serials
    }()
    private static var serials: UInt64 = 0

    /// What the coordinator knows of one path: the newest state, and its value while it waits
    /// for the writer. A reference, kept in ``paths`` and on the record of each instance at
    /// the path, so that a save or an appearance at a path already met needs no lookup.
    /// Entries stay for the coordinator's life, one per path met, as what it knows of each
    /// path always did (records point at them).
    final class PathEntry {
        let path: RestorationPath
        /// The newest state of the path; `nil` while not known (the next appearance asks the
        /// database).
        @exclusivity(unchecked) var latest: Latest?
        /// That state's value while the writer has not settled it (see ``setPending(_:in:)``).
        @exclusivity(unchecked) fileprivate(set) var pending: PendingValue?
        init(path: RestorationPath) { self.path = path }
    }
    @exclusivity(unchecked) private var paths: [RestorationPath: PathEntry] = [:]
    /// How many entries hold a pending value.
    @exclusivity(unchecked) private var pendingCount = 0

    /// The entry of `path`, made on first use.
    private func entry(_ path: RestorationPath) -> PathEntry {
        if let entry = paths[path] { return entry }
        let entry = PathEntry(path: path)
        paths[path] = entry
        return entry
    }

    private func setPending(_ value: PendingValue?, in entry: PathEntry) {
        if (entry.pending == nil) != (value == nil) { pendingCount += value == nil ? -1 : 1 }
        entry.pending = value
    }

    /// The newest state of a path the coordinator knows of.
    struct Latest {
        var token: UInt64
        /// Its generation in the database (0: no row); `nil` while it waits for the writer.
        var generation: Int64?
        /// The store's change count when it was known to be current.
        var verifiedAt: UInt64
    }
    /// The store's change count from which a path with no ``PathEntry/latest`` holds no state
    /// (``StateStore/noStatesAtChangeCount``): the store held none at open and this coordinator
    /// is its only one. `nil` once anything else may have written, or an entry was dropped
    /// without the path being known empty.
    @exclusivity(unchecked) private var noStatesAt: UInt64?

    /// A state handed to the writer and not yet settled. A reference, so that an entry holds
    /// one pointer per path: an appearance that takes the value looks it up once and copies
    /// no existential, and records itself as a taker in place.
    final class PendingValue {
        /// The handoff's capture (the value, its version and token), shared, not copied.
        let capture: StateHandoff.Capture
        var token: UInt64 { capture.token }
        var value: any Encodable & Sendable { capture.value }
        var version: Int { capture.version }
        /// The instance that saved it, and those that took it since: they have seen its
        /// generation once it is written.
        let saver: Record
        /// The first instance that took it, and any later ones: one screen usually takes a
        /// state once, which then needs no array.
        @exclusivity(unchecked) private(set) var taker: Record?
        @exclusivity(unchecked) private(set) var moreTakers: [Record] = []

        init(capture: StateHandoff.Capture, saver: Record) {
            self.capture = capture
            self.saver = saver
        }

        func addTaker(_ record: Record) {
            if taker == nil { taker = record } else { moreTakers.append(record) }
        }
    }
    @exclusivity(unchecked) private var nextToken: UInt64 = 0
    /// Paths whose stored state had to be set aside (it does not decode, or a save would drop
    /// members of it) and could not be (a full disk, a lock): no save replaces it until an
    /// appearance sets it aside. The value says whether the refusal was reported.
    @exclusivity(unchecked) private var unprotectedPaths: [RestorationPath: Bool] = [:]
    /// States captured since the last batch, in the order their paths were first queued (a
    /// path queued again has its state replaced in place). Found by a scan while few (a
    /// structural change queues one or two), through ``queuedIndex`` once many.
    @exclusivity(unchecked) private var queued: [StateHandoff] = []
    @exclusivity(unchecked) private var queuedIndex: [RestorationPath: Int] = [:]
    @exclusivity(unchecked) private var queuedEvents: [PressureEvent] = []
    @exclusivity(unchecked) private var queuedRemovals: [String] = []
    @exclusivity(unchecked) private var queuedForgotten: [String] = []
    /// How many open windows show their scene read-only (``SceneConflictPolicy/openReadOnly``):
    /// while none does, no save or archive looks further.
    @exclusivity(unchecked) var readOnlyWindows = 0
    /// Set while a controller of a read-only scene restores: what it finds wrong is reported,
    /// not set aside.
    @exclusivity(unchecked) private var restoringReadOnly = false
    @exclusivity(unchecked) private var flushScheduled = false
    /// Whether a look at ``queued`` is waiting for the end of the transition under way.
    @exclusivity(unchecked) private var handOverAtTransitionEnd = false
    /// When `PRAGMA data_version` was last read for an appearance.
    @exclusivity(unchecked) private var lastChangeCheck: UInt64?

    let writer: RestorationWriter
    /// The write-behind job that writes the batches waiting for the writer, made once.
    private let runWriter: @Sendable () -> Void
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
    @exclusivity(unchecked) private var batchDepth = 0
    /// While a hierarchy is rebuilt or a batch runs, each parent's identifiers shared by two
    /// children, and the children themselves, so that finding the paths of n siblings costs
    /// O(n), not O(n²).
    @exclusivity(unchecked) private var duplicateIdentifiersByParent: [ObjectIdentifier: Siblings] = [:]

    /// A parent's children as ``isShared(_:of:in:)`` looks at them in a batch.
    private struct Siblings {
        /// Identifiers two or more of them have.
        var duplicates: Set<String>
        /// The children themselves.
        var members: Set<ObjectIdentifier>
    }

    /// Runs `body` with sibling identifiers cached per parent (see ``batchDepth``).
    private func inBatch<T>(_ body: () -> T) -> T {
        batchDepth += 1
        defer {
            batchDepth -= 1
            if batchDepth == 0 && !isRestoringHierarchy { duplicateIdentifiersByParent.removeAll() }
        }
        return body()
    }
    @exclusivity(unchecked) private var reportedDuplicates: Set<RestorationPath> = []
    /// Controllers already reported as not archivable, so each is reported once.
    @exclusivity(unchecked) var reportedOmissions: Set<HierarchyArchive.Omission> = []
    /// How many controllers the last archive capture met: the room the next one reserves.
    @exclusivity(unchecked) var lastCaptureCount = 0
    /// The restoration-path component of each scene seen (`""` for none), read once from the store.
    @exclusivity(unchecked) private var scenePrefixes: [String: String] = [:]

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

    private func existingRecord(of controller: ViewController) -> Record? {
        guard let record = controller.restorationRecord, record.owner == serial else { return nil }
        return record
    }

    // MARK: Restoration paths

    /// The chain of restoration identifiers from the root to `controller`, through parents
    /// and presenting controllers; `nil` when one is missing, invalid or shared by a sibling.
    ///
    /// In a window of a scene other than the default one (``Window/defaultSceneIdentifier``),
    /// the path starts with the scene's component (its identifier, or none for a scene
    /// archived before scenes had identities), so two windows showing the same controllers
    /// keep separate states.
    public func restorationPath(for controller: ViewController) -> RestorationPath? {
        if let record = existingRecord(of: controller) { return pathEntry(for: controller, record: record)?.path }
        return findPath(of: controller)?.entry.path
    }

    /// The entry of the controller's restoration path (``restorationPath(for:)``), kept on its
    /// record with the identifiers that lead to it.
    private func pathEntry(for controller: ViewController, record: Record) -> PathEntry? {
        if let cached = record.path, isUnchanged(cached, for: controller) { return cached.entry }
        guard let found = findPath(of: controller) else { return nil }
        record.path = found
        return found.entry
    }

    /// The identifiers a walk to the root met (leaf first) and its scene: what a path is
    /// found by once it has been built and validated (``knownPaths``).
    /// Compared and hashed by the identifiers' UTF-8 bytes, as paths are: `é` (U+00E9) and
    /// `e` + U+0301 are equal `String`s but different paths.
    private struct PathKey: Hashable {
        let leafFirst: [String]
        let scene: String?

        static func == (a: PathKey, b: PathKey) -> Bool {
            guard a.leafFirst.count == b.leafFirst.count, sameBytes(a.scene, b.scene) else { return false }
            for index in a.leafFirst.indices where !sameBytes(a.leafFirst[index], b.leafFirst[index]) { return false }
            return true
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(leafFirst.count)
            for identifier in leafFirst { Self.combine(identifier, into: &hasher) }
            if let scene { Self.combine(scene, into: &hasher) } else { hasher.combine(-1) }
        }

        private static func combine(_ text: String, into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { bytes in
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            }
        }

        private static func sameBytes(_ a: String?, _ b: String?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return RestorationCoordinator.sameBytes(a, b)
        }
    }

    /// Whether two identifiers are the same bytes (not merely canonically equivalent).
    nonisolated static func sameBytes(_ a: String, _ b: String) -> Bool {
        // The same representation (the same storage, or the same small-string bytes) holds the
        // same bytes: the usual case, an identifier compared with the one read from the same
        // controller before, costs two integer comparisons.
        if MemoryLayout<String>.size == 16,
           unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self) {
            return true
        }
        guard a.utf8.count == b.utf8.count else { return false }
        // Native strings are contiguous UTF-8: one memcmp, not a walk of two UTF-8 views.
        let compared = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
        if let compared, let compared { return compared }
        return a.utf8.elementsEqual(b.utf8)
    }
    /// Every path found so far, by the identifiers and scene that lead to it: an instance at
    /// a path met before (a screen shown again, a new page of a kind pushed before) shares its
    /// ``CachedPath``; no path is built or validated again.
    @exclusivity(unchecked) private var knownPaths: [PathKey: CachedPath] = [:]
    /// The last paths found, newest first, looked through before ``knownPaths``.
    @exclusivity(unchecked) private var recentPaths: [CachedPath] = []
    /// The most paths ``knownPaths`` holds before it starts afresh.
    static let knownPathsLimit = 4096

    /// Whether the walk from `controller` to the root meets the identifiers of `cached`, none
    /// shared by a sibling, and ends in the same scene; no path is built.
    private func isUnchanged(_ cached: CachedPath, for controller: ViewController) -> Bool {
        let leafFirst = cached.leafFirst
        var index = 0
        // One level: whether it matches, and the level above it. `controller` is the caller's
        // and is looked at as it is; each level above comes from a weak load, which gives the
        // walk its own reference. No more is retained (a controller's retain and release take
        // the runtime's slow path, as `allUnretained` explains).
        func level(_ node: ViewController) -> (matches: Bool, next: ViewController?) {
            guard index < leafFirst.count, let identifier = node.restorationIdentifier,
                  Self.sameBytes(identifier, leafFirst[index])
            else { return (false, nil) }
            index += 1
            if let parent = node.parent {
                return isShared(identifier, of: node, in: parent) ? (false, nil) : (true, parent)
            }
            // Without a parent, `node` is its containment root: its presenter is `presentingViewController`.
            if let presenter = node.presentingStorage { return (true, presenter) }
            guard index == leafFirst.count else { return (false, nil) }
            switch (node.hostingWindow?.sceneIdentifier, cached.scene) {
            case (nil, nil): return (true, nil)
            case let (scene?, cachedScene?): return (Self.sameBytes(scene, cachedScene), nil)
            default: return (false, nil)
            }
        }
        var (matches, next) = level(controller)
        while matches, let above = next {
            (matches, next) = level(above)
        }
        return matches
    }

    private func findPath(of controller: ViewController) -> CachedPath? {
        // The cache serves the few paths a navigating app meets again and again; a rebuild or a
        // pass over many controllers (each path met once) neither reads nor fills it.
        let usesCache = batchDepth == 0 && !isRestoringHierarchy
        // The few paths met last first (a new page of the kind just pushed): each compared by a
        // walk that stops at the first identifier that differs, with no list of identifiers
        // built. A walk that meets a shared identifier matches none; the walk below reports it.
        if usesCache {
            for recent in recentPaths where isUnchanged(recent, for: controller) {
                remember(recent)
                return recent
            }
        }
        var components: [String] = []
        components.reserveCapacity(4)
        var shared = false
        var node: ViewController = controller
        while true {
            guard let identifier = node.restorationIdentifier else { return nil }
            components.append(identifier)
            if let parent = node.parent {
                if isShared(identifier, of: node, in: parent) { shared = true }
                node = parent
            } else if let presenter = node.presentingStorage {
                node = presenter
            } else {
                break
            }
        }
        // The walk ended at the root of everything `controller` is in: its window's root.
        let scene = node.hostingWindow?.sceneIdentifier
        let key = usesCache ? PathKey(leafFirst: components, scene: scene) : nil
        if !shared, let key, let known = knownPaths[key] {
            remember(known)
            return known
        }
        let path: RestorationPath
        do {
            let prefix = try pathPrefix(of: scene)
            path = try RestorationPath(prefix: prefix?.isEmpty == false ? prefix : nil, leafFirst: components)
        } catch {
            report(.store(error))
            return nil
        }
        if shared {
            if reportedDuplicates.insert(path).inserted { report(.duplicateRestorationIdentifier(path: path)) }
            return nil
        }
        let found = CachedPath(leafFirst: components, scene: scene, entry: entry(path))
        // Bounded: many distinct paths met outside a rebuild start it afresh.
        if let key {
            if knownPaths.count >= Self.knownPathsLimit { knownPaths = [:] }
            knownPaths[key] = found
            remember(found)
        }
        return found
    }

    /// Puts `path` first among ``recentPaths``, which keeps four.
    private func remember(_ path: CachedPath) {
        if let first = recentPaths.first, first === path { return }
        recentPaths.removeIdentical(path)
        if recentPaths.count == 4 { recentPaths.removeLast() }
        recentPaths.insert(path, at: 0)
    }

    /// Whether `controller`, a child of `parent`, shares `identifier` with a sibling.
    ///
    /// A controller its parent no longer lists is leaving it (a stack or a tab bar replaced by
    /// `setViewControllers` drops it before the transition). It shares its path only with a
    /// listed child of its identifier that has been on screen before, a twin that stays (a
    /// screen pushed twice, one popped): then neither is saved, as while both were listed.
    /// A listed one never shown is the new instance replacing it, which gets its last state.
    private func isShared(_ identifier: String, of controller: ViewController, in parent: ViewController) -> Bool {
        let children = parent.children
        if children.isEmpty { return false }
        // Terminating closes every window in one pass, which changes no identifier: each
        // parent's duplicates are looked at once there too, not once per disappearing child
        // (100,000 children of one container took minutes to close).
        guard isRestoringHierarchy || batchDepth > 0 || isTerminating, children.count > 16 else {
            var listed = false, twin = false, shownTwin = false
            _ = children.allUnretained { child in
                if child === controller {
                    listed = true
                } else if child.restorationIdentifier == identifier {
                    twin = true
                    if child.lifecycleState != .initialized { shownTwin = true }
                }
                return !(listed && twin)
            }
            return listed ? twin : shownTwin
        }
        let key = ObjectIdentifier(parent)
        let siblings: Siblings
        if let known = duplicateIdentifiersByParent[key] {
            siblings = known
        } else {
            var seen = Set<String>(minimumCapacity: children.count)
            var found = Siblings(duplicates: [], members: Set(minimumCapacity: children.count))
            for child in children {
                found.members.insert(ObjectIdentifier(child))
                if let name = child.restorationIdentifier, !seen.insert(name).inserted { found.duplicates.insert(name) }
            }
            duplicateIdentifiersByParent[key] = found
            siblings = found
        }
        guard siblings.members.contains(ObjectIdentifier(controller)) else {
            return children.contains { $0.restorationIdentifier == identifier && $0.lifecycleState != .initialized }
        }
        return !siblings.duplicates.isEmpty && siblings.duplicates.contains(identifier)
    }

    /// The path component the controllers of `scene` save under: none for the default scene,
    /// else the one recorded for the scene (none for scenes archived before scenes had
    /// identities), else the scene identifier itself.
    func pathPrefix(of scene: String?) throws(StateStoreError) -> String? {
        guard let scene, scene != Window.defaultSceneIdentifier else { return nil }
        if let known = scenePrefixes[scene] { return known }
        let prefix = try store.scenePathPrefix(scene: scene) ?? scene
        scenePrefixes[scene] = prefix
        return prefix
    }

    /// The restoration path of a controller of `scene` whose identifiers from the root are `components`.
    func restorationPath(components: [String], scene: String) throws(StateStoreError) -> RestorationPath {
        if let prefix = try pathPrefix(of: scene), !prefix.isEmpty {
            return try RestorationPath(components: [prefix] + components)
        }
        return try RestorationPath(components: components)
    }

    // MARK: LifecycleObserver

    /// It restores before `viewWillAppear` runs and saves after `viewWillDisappear` ran; the
    /// engine does not call it otherwise.
    var observedBeforeCallbacks: LifecycleCallback.Mask { LifecycleCallback.Mask([.viewWillAppear]) }
    var observedAfterCallbacks: LifecycleCallback.Mask { LifecycleCallback.Mask([.viewWillDisappear]) }

    public func controller(_ controller: ViewController, willRun callback: LifecycleCallback, animated: Bool) {
        guard callback == .viewWillAppear, let type = restoringType(of: controller) else { return }
        restore(controller, as: type)
    }

    public func controller(_ controller: ViewController, didRun callback: LifecycleCallback, animated: Bool) {
        guard callback == .viewWillDisappear, let type = restoringType(of: controller) else { return }
        enqueueSave(controller, as: type)
        handOverLater()
    }

    /// The controller's class as a `StateRestoring` type, or `nil` when it does not conform:
    /// looked up once per class (a cast to `any StateRestoring` asks the runtime each time),
    /// in a short list scanned from its front, where the classes met most recently stay.
    private func restoringType(of controller: ViewController) -> (any StateRestoring.Type)? {
        let key = ObjectIdentifier(type(of: controller))
        for index in restoringTypes.indices where restoringTypes[index].key == key {
            let entry = restoringTypes[index]
            if index > 0 { restoringTypes.swapAt(index, index - 1) }
            return entry.type
        }
        let type = (controller as? any StateRestoring).map { Swift.type(of: $0) }
        if restoringTypes.count == 16 { restoringTypes.removeLast() }
        restoringTypes.insert(RestoringType(key: key, type: type), at: restoringTypes.count / 2)
        return type
    }

    /// Sends `applicationFinishedRestoringState()` to `controller` when it restores a state,
    /// its conformance taken from the cache (a rebuild sends it to every node).
    func finishRestoring(_ controller: ViewController) {
        if let type = restoringType(of: controller) { finishRestoring(controller, as: type) }
    }

    private func finishRestoring<C: StateRestoring>(_ controller: ViewController, as _: C.Type) {
        unsafeDowncast(controller, to: C.self).applicationFinishedRestoringState()
    }

    private func restore<C: StateRestoring>(_ controller: ViewController, as _: C.Type) {
        guard readOnlyWindows > 0, let window = controller.window, isReadOnly(window) else {
            restore(unsafeDowncast(controller, to: C.self))
            return
        }
        restoringReadOnly = true
        defer { restoringReadOnly = false }
        restore(unsafeDowncast(controller, to: C.self))
    }

    private func enqueueSave<C: StateRestoring>(_ controller: ViewController, as _: C.Type) {
        enqueueSave(unsafeDowncast(controller, to: C.self))
    }

    public func hierarchyDidChange(in window: Window) {
        if window.isClosed, !isTerminating {
            // The user closed the window: its scene is gone, and a relaunch must not rebuild
            // it. Its states stay in the store. A read-only window's scene is another
            // process's. The claim goes once the removal is written.
            if !isReadOnly(window) { queuedRemovals.append(window.sceneIdentifier) }
            submit()
            windowDidClose(window)
            return
        }
        if isTerminating {
            // Terminating is a flush point: the controllers that disappeared as the windows
            // closed are written before the process goes, and only then is the scene let go.
            flush()
            if window.isClosed { windowDidClose(window) }
            return
        }
        guard !isRestoringHierarchy, !window.isClosed else {
            submit()
            return
        }
        submit(archiving: window)
    }

    public func applicationDidReceiveMemoryWarning(_ application: Application, level: MemoryPressureLevel) {
        // Recreatable: a path met again is found by its walk and validated again.
        knownPaths = [:]
        recentPaths = []
        // An OOM kill may follow a critical warning: everything visible goes to disk now.
        if level == .critical {
            saveVisibleControllers(of: application)
            store.releaseMemory()
            // The flush put the states it wrote in the cache, after the registry purged it.
            recentStates.purge(for: level)
        } else {
            // After the writes already queued, without waiting for them.
            submit(releasingMemory: true)
        }
    }

    public func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {
        queuedEvents.append(PressureEvent(
            occurredAt: report.raisedAt, level: report.level, availableBytes: report.availableBytes ?? 0,
            rssBefore: report.rssBefore, rssAfter: report.rssAfter, duration: report.duration
        ))
        submit(waking: report.level != .critical)
        if report.level == .critical { settle() }
    }

    public func applicationWillTerminate(_ application: Application) {
        saveVisibleControllers(of: application)
        isTerminating = true
    }

    // MARK: Saving

    private func makeToken() -> UInt64 {
        nextToken &+= 1
        return nextToken
    }

    /// Captures the controller's state and queues it for the writer; nothing is encoded here.
    private func enqueueSave<C: StateRestoring>(_ controller: C) {
        counts.saveAttempts += 1
        let record = record(for: controller)
        guard let entry = pathEntry(for: controller, record: record) else { return }
        // A read-only window's scene is another process's to save.
        if readOnlyWindows > 0, let window = controller.window, isReadOnly(window) { return }
        if !unprotectedPaths.isEmpty, unprotectedPaths[entry.path] != nil {
            refuseSave(at: entry.path)
            return
        }
        let value: any Encodable & Sendable = controller.restorableState
        let token = makeToken()
        let handoff = StateHandoff(path: entry.path, token: token, stateType: C.RestorableState.self, version: C.restorableStateVersion, value: value)
        queue(handoff)
        setPending(PendingValue(capture: handoff.capture, saver: record), in: entry)
        entry.latest = Latest(token: token, generation: nil, verifiedAt: 0)
        record.seenToken = token
    }

    /// Adds `handoff` to ``queued``, in place of a state of its path queued before.
    private func queue(_ handoff: StateHandoff) {
        // Room for a structural change's few states, made once per batch rather than by the
        // first appends.
        if queued.isEmpty { queued.reserveCapacity(4) }
        if queued.count < 16 {
            // A loop, not `firstIndex(where:)`: a main-actor closure checks its executor when called.
            for position in queued.indices where queued[position].path == handoff.path {
                queued[position] = handoff
                return
            }
            queued.append(handoff)
            return
        }
        if queuedIndex.count != queued.count {
            queuedIndex.removeAll(keepingCapacity: true)
            for (position, queuedHandoff) in queued.enumerated() { queuedIndex[queuedHandoff.path] = position }
        }
        if let position = queuedIndex[handoff.path] {
            queued[position] = handoff
        } else {
            queuedIndex[handoff.path] = queued.count
            queued.append(handoff)
        }
    }

    /// Captures the state of every visible (or appearing) savable controller and writes it,
    /// with everything queued before, before returning: a flush point.
    public func saveVisibleControllers(of application: Application) {
        inBatch {
            for controller in application.liveControllers
            where controller.lifecycleState.isVisibleOrAppearing {
                if let type = restoringType(of: controller) { enqueueSave(controller, as: type) }
            }
        }
        flush()
    }

    /// Makes sure a state queued by a disappearance is handed over even when no structural
    /// change follows, at the end of the main actor's turn. Inside a transition the task for
    /// that is only scheduled when the transition ends with states still queued: the
    /// structural change it makes usually hands everything over first (states and archive in
    /// one batch), and then the turn needs no task. Some callers announce their structural
    /// change just after the transition (removing a child, replacing or closing a window's
    /// root), so what is left is handed over at the end of the turn, not when the transition
    /// ends, and goes out with that change's archive.
    private func handOverLater() {
        guard TransitionQueue.isBusy else {
            scheduleFlush()
            return
        }
        guard !handOverAtTransitionEnd else { return }
        handOverAtTransitionEnd = true
        TransitionQueue.notifyAtEnd(self)
    }

    func transitionsDidEnd() {
        handOverAtTransitionEnd = false
        if !queued.isEmpty { scheduleFlush() }
    }

    /// At the end of the main actor's current turn: hands over what is still queued.
    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        Task { @MainActor [weak self] in
            self?.flushScheduled = false
            self?.submit()
        }
    }

    /// Hands everything queued, and the hierarchy archive of `window`, to the writer as one
    /// batch, and returns at once. `waking: false` when the caller settles right after (the
    /// main thread then runs the batch itself; a writer still running may take it first).
    /// `stored`: the archive the database holds for the window's scene, when known (a rebuild
    /// just read it); an equal archive is not handed over again.
    func submit(archiving window: Window? = nil, stored: HierarchyArchive? = nil, releasingMemory: Bool = false, waking: Bool = true) {
        var batch = WriteBatch()
        if let window, window.application != nil, !isReadOnly(window) {
            let scene = window.sceneIdentifier
            let archive = makeArchive(of: window)
            let alreadyStored = if let stored { archive.describes(stored) } else { false }
            if !alreadyStored {
                batch.archives = [(scene, scene == Window.defaultSceneIdentifier ? "" : scene, archive)]
            }
        }
        // Moved, not copied; the lists a structural change rarely has are only touched when
        // they hold something.
        swap(&batch.states, &queued)
        if !queuedRemovals.isEmpty { swap(&batch.removedScenes, &queuedRemovals) }
        if !queuedEvents.isEmpty { swap(&batch.pressureEvents, &queuedEvents) }
        batch.releaseMemory = releasingMemory
        if !queuedIndex.isEmpty { queuedIndex.removeAll(keepingCapacity: true) }
        // An empty batch still runs when writes wait for a retry: a flush point retries them.
        // Archives to forget alone do not make a batch: they wait for the next one.
        guard !batch.isEmpty || writer.hasCarriedWork else { return }
        if !queuedForgotten.isEmpty { swap(&batch.forgottenArchives, &queuedForgotten) }
        if writer.enqueue(&batch) {
            // Write-behind wakes the writer (nothing to do while it is still writing), so the
            // window of loss never waits for the main queue; write-through runs the batch here.
            store.submitWriteBehind(waking: waking && writesBehind, runWriter)
        }
        // Write-through settles: failures reach the error handler before the call returns. So
        // does a queue without a thread (the process at its thread limit, which the store's
        // warnings say), whose wake-up has just run the batch here.
        if !writesBehind || store.writeBehind.threadStartError != 0 { settle() }
    }

    /// Hands everything queued, and the hierarchy archive of `window` when it changed, to the
    /// writer in one batch (one transaction), and waits until the writer has written it and
    /// everything handed over before: a flush point. Problems go to ``errorHandler`` before it
    /// returns. When a write fails for a reason that may pass (a full disk, a lock), it stays
    /// queued for the next batch; when one can never succeed, it is reported and dropped, and
    /// the rest are written.
    ///
    /// It then syncs the database's WAL to storage (``StateStore/synchronize()``), so what it
    /// wrote also survives a power cut with `synchronous=.normal`.
    public func flush(archiving window: Window? = nil) {
        submit(archiving: window, waking: false)
        settle()
        do {
            try store.synchronize()
        } catch {
            report(.store(error))
        }
    }

    /// Waits for the writer, then takes in what it did.
    func settle() {
        store.waitForWriteBehind()
        absorbWriterOutcomes()
    }

    /// Takes in the writer's outcomes: settled states leave their entries (their bytes are
    /// in the cache), dropped ones are forgotten, problems are reported.
    func absorbWriterOutcomes() {
        for outcome in writer.takeOutcomes() {
            counts.transactions += outcome.transactions
            counts.archiveWrites += outcome.archiveWrites
            for settled in outcome.settled {
                if settled.wrote { counts.stateWrites += 1 } else { counts.unchangedSkips += 1 }
                guard let entry = paths[settled.path] else { continue }
                if let value = entry.pending, value.token == settled.token {
                    value.saver.seenGeneration = settled.generation
                    value.taker?.seenGeneration = settled.generation
                    for record in value.moreTakers { record.seenGeneration = settled.generation }
                    setPending(nil, in: entry)
                }
                if var known = entry.latest, known.token == settled.token {
                    known.generation = settled.generation
                    known.verifiedAt = outcome.changeCount
                    entry.latest = known
                }
            }
            droppedStateWrites += outcome.dropped.count
            for (path, token) in outcome.dropped {
                guard let entry = paths[path] else { continue }
                if entry.pending?.token == token { setPending(nil, in: entry) }
                if entry.latest?.token == token { forgetLatest(of: entry) }
            }
            for (path, reason) in outcome.setAside {
                counts.quarantined += 1
                report(.quarantined(path: path, reason: reason))
            }
            for error in outcome.errors { report(.store(error)) }
        }
    }

    func forgetArchive(of scene: String) { queuedForgotten.append(scene) }

    /// The bytes held by the cache of recent states (``init(store:cacheLimit:)``), as it counts
    /// them: recreatable, purged on memory warnings.
    package var recentStatesCost: Int { recentStates.totalCost }

    /// Whether states are waiting to be written: captured and not yet handed over, or handed
    /// over and not yet written (or kept for a retry after a failure that may pass).
    public var hasPendingWrites: Bool {
        absorbWriterOutcomes()
        return !queued.isEmpty || pendingCount > 0
    }

    // MARK: Restoring

    private func restore<C: StateRestoring>(_ controller: C) {
        let record = record(for: controller)
        guard let entry = pathEntry(for: controller, record: record) else { return }
        let path = entry.path
        absorbWriterOutcomes()
        if !unprotectedPaths.isEmpty, unprotectedPaths[path] != nil {
            // A row that could not be set aside: read afresh, even by an instance that saw it,
            // so it is set aside now (or found gone) and saves go on; a new failure guards it again.
            unprotectedPaths[path] = nil
            forgetLatest(of: entry)
            recentStates.removeValue(forKey: path)
            record.seenGeneration = nil
            record.seenToken = nil
        }
        let now = changeCount()
        if var known = entry.latest, let generation = known.generation, known.verifiedAt != now {
            // Something else committed since: has this path changed?
            counts.restoreQueries += 1
            do {
                if (try store.generation(at: path, waitingForWrites: false) ?? 0) == generation {
                    known.verifiedAt = now
                    entry.latest = known
                } else {
                    forgetLatest(of: entry)
                    recentStates.removeValue(forKey: path)
                }
            } catch {
                report(.store(error))
                return
            }
        }
        guard let known = entry.latest else {
            if unknownPathsAreEmpty(changeCount: now) {
                // Nothing has written a state since the store found none, but this coordinator's
                // writer, which wrote none at this path: nothing to restore, and no query.
                let token = makeToken()
                entry.latest = Latest(token: token, generation: 0, verifiedAt: now)
                record.seenGeneration = 0
                record.seenToken = token
                return
            }
            load(controller, record: record, entry: entry, now: now)
            return
        }
        if record.seenToken == known.token { return }
        if known.generation == 0 {
            // Known to have no row: nothing to restore.
            record.seenToken = known.token
            return
        }
        if let value = entry.pending, value.token == known.token {
            // The newest state is still with the writer, handed over by another instance.
            if value.version == C.restorableStateVersion, Self.put(value.value, into: controller) {
                counts.restores += 1
                value.addTaker(record)
                record.seenToken = known.token
                return
            }
            // Of another type or version: written first (handed over now if still queued), then
            // read from its bytes as a relaunch reads it, so that a state that does not decode is
            // quarantined, and one this type reads without some of its members is kept, before
            // this instance can save over it.
            submit(waking: false)
            settle()
            guard entry.pending !== value else {
                // Kept for a retry (a full disk, a lock): no save replaces it meanwhile.
                unprotectedPaths[path] = false
                return
            }
            restore(controller)
            return
        }
        if var cached = recentStates[path], cached.token == known.token {
            if cached.version == C.restorableStateVersion, let value = cached.value, Self.put(value, into: controller) {
                // Written (or decoded) by this process: the value itself, no decoding.
                counts.restores += 1
            } else if apply(bytes: cached.bytes, version: cached.version, to: controller, path: path) {
                if cached.version == C.restorableStateVersion {
                    cached.value = controller.restorableState
                    recentStates.setValue(cached, forKey: path)
                }
            } else {
                forgetLatest(of: entry)
                return
            }
            record.seenToken = known.token
            record.seenGeneration = cached.generation
            return
        }
        load(controller, record: record, entry: entry, now: now)
    }

    /// Whether a path with no ``PathEntry/latest`` holds no state: the store held none at open
    /// (``noStatesAt``), this is its only coordinator (another's writer commits without raising
    /// the change count), and the change count `now` has not moved. `now` is the caller's look
    /// (``changeCount()``), as for a path the coordinator knows: taken at most a millisecond
    /// before, and, while the writer holds the connection, as the writer last left it. A
    /// commit by another process after that look is seen by a later one, as if it had come
    /// just after this appearance. A look of its own here cost the first appearances of a
    /// launch a `PRAGMA data_version` on the main thread each (about 6 µs, on code the cycle
    /// had not touched), and was no fresher while the writer held the connection. Once either
    /// fails it fails for good (coordinators are never unmade, counts never go back).
    private func unknownPathsAreEmpty(changeCount now: UInt64) -> Bool {
        guard let noStatesAt else { return false }
        if store.restorationCoordinators.load(ordering: .relaxed) == 1, now == noStatesAt {
            return true
        }
        self.noStatesAt = nil
        return false
    }

    /// Forgets what the coordinator knew of `path`'s newest state: the next appearance asks the
    /// database, and no path unknown to it is taken to be empty any more.
    private func forgetLatest(of entry: PathEntry) {
        entry.latest = nil
        noStatesAt = nil
    }

    /// ``forgetLatest(of:)`` by path, for a path the coordinator may not have met.
    private func forgetLatest(of path: RestorationPath) {
        paths[path]?.latest = nil
        noStatesAt = nil
    }

    /// `CLOCK_MONOTONIC` in nanoseconds, for the once-a-millisecond check in ``changeCount()``:
    /// plain integer arithmetic, where `ContinuousClock` durations are 128-bit.
    private static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// The store's change count, asking SQLite (`PRAGMA data_version`) at most once a
    /// millisecond: the appearances of one transition share one look. A commit by another
    /// process within that millisecond is seen by the next look, as one made just after it would be.
    /// While the writer is in a transaction, the count it published when its last one ended is
    /// taken (it reads the pragma as each begins), as a look at the held connection would
    /// return, without trying the lock; the next appearance looks again.
    private func changeCount() -> UInt64 {
        let clock = Self.monotonicNanoseconds()
        if let last = lastChangeCheck, clock &- last < 1_000_000 {
            return store.changeCount(refreshing: false)
        }
        if store.writerInTransaction.load(ordering: .relaxed) { return store.changeCount(refreshing: false) }
        lastChangeCheck = clock
        return store.changeCount(refreshing: true)
    }

    /// Reads the path's row (no state of it is queued) and puts it into `controller` when it
    /// is newer than what the instance has seen.
    private func load<C: StateRestoring>(_ controller: C, record: Record, entry: PathEntry, now: UInt64) {
        let path = entry.path
        counts.restoreQueries += 1
        let start = ContinuousClock.now
        defer { store.metrics.restore.recordSince(start) }
        do {
            if let seen = record.seenGeneration {
                let generation = try store.generation(at: path, waitingForWrites: false)
                guard let generation, generation > seen else {
                    let token = makeToken()
                    entry.latest = Latest(token: token, generation: generation ?? 0, verifiedAt: now)
                    if generation == seen { record.seenToken = token }
                    return
                }
            }
            let token = makeToken()
            guard let stored = try store.state(at: path, waitingForWrites: false) else {
                record.seenGeneration = 0
                entry.latest = Latest(token: token, generation: 0, verifiedAt: now)
                record.seenToken = token
                return
            }
            record.seenGeneration = stored.generation
            guard stored.checksumIsValid else {
                quarantine(path, reason: "its bytes no longer match their checksum")
                return
            }
            let bytes = try store.plaintext(of: stored)
            remember(stored, bytes: bytes, token: token, now: now)
            if apply(bytes: bytes, version: stored.version, to: controller, path: path) {
                record.seenToken = token
            } else {
                forgetLatest(of: entry)
            }
        } catch .stateTooLarge(_, let byteCount, let limit) {
            // Written by another tool past the budget: moved aside unread, never saved over.
            quarantine(path, reason: "it is \(byteCount) bytes, over the \(limit)-byte maximumStateSize")
        } catch .sealedStateUnopenable(_, let keyID) {
            // The right key, bytes that do not authenticate: altered outside the store. Set aside
            // with their key id, so they stay openable; the controller starts from its default.
            quarantine(path, reason: "its sealed bytes do not open with key \(keyID) (altered, or copied from another row)")
        } catch {
            // A key mismatch among them: reported, the row left exactly as it is, and the
            // controller's saves to this path refused until the right key is configured.
            report(.store(error))
        }
    }

    /// Records a row read from the database as the newest state of its path.
    /// `bytes` are the state's plaintext (the stored bytes, opened when sealed); the writer and
    /// the cache compare plaintext checksums.
    private func remember(_ stored: StoredState, bytes: Data, token: UInt64, now: UInt64) {
        let checksum = stored.isSealed ? Checksum.stored(bytes) : stored.checksum
        entry(stored.path).latest = Latest(token: token, generation: stored.generation, verifiedAt: now)
        recentStates.setValue(
            CachedState(token: token, bytes: bytes, version: stored.version, checksum: checksum,
                        generation: stored.generation, value: nil),
            forKey: stored.path
        )
        writer.noteStored(stored.path, checksum: checksum, generation: stored.generation)
    }

    /// Reads the states of `root`'s savable controllers in one query, so that their first
    /// appearances need none. Paths already known, and rows that need a closer look (too large,
    /// a checksum that does not match), are left to the appearance.
    func preloadStates(of root: ViewController) {
        let entries: [PathEntry] = inBatch {
            var entries: [PathEntry] = []
            forEachInPreorder(root) { controller in
                // The cached lookup, not `is any StateRestoring`: a conformance lookup per node.
                guard restoringType(of: controller) != nil else { return }
                // The record keeps the path found here, so the appearance only checks it.
                guard let entry = pathEntry(for: controller, record: record(for: controller)), entry.latest == nil else { return }
                entries.append(entry)
            }
            return entries
        }
        guard !entries.isEmpty else { return }
        let now = changeCount()
        if unknownPathsAreEmpty(changeCount: now) {
            // The database holds no state but this coordinator's: nothing to read.
            for entry in entries { entry.latest = Latest(token: makeToken(), generation: 0, verifiedAt: now) }
            return
        }
        counts.restoreQueries += 1
        do {
            let (rows, present) = try store.states(at: entries.map(\.path), waitingForWrites: false)
            for (_, stored) in rows {
                // A sealed row that does not open is left to the appearance, which reports it.
                guard let bytes = try? store.plaintext(of: stored) else { continue }
                remember(stored, bytes: bytes, token: makeToken(), now: now)
            }
            // A path with no row at all is known to hold nothing (as a query at its appearance
            // would find), until another connection commits.
            for entry in entries where !present.contains(entry.path) && entry.latest == nil {
                entry.latest = Latest(token: makeToken(), generation: 0, verifiedAt: now)
            }
        } catch {
            report(.store(error))
        }
    }

    /// Puts `value` into `controller` when it is of its state's type; else returns `false` (the
    /// caller goes through its bytes). Compares types first: a conditional cast looks up the
    /// metadata of the state's optional type at run time, as this code is not specialized for
    /// the controller's type.
    /// `value` as `T`, which must be its very type (checked by the caller).
    private static func sameType<V, T>(_ value: V, as _: T.Type) -> T {
        // `V` is the value's own type (the existential is opened), never the box.
        precondition(V.self == T.self, "sameType: \(V.self) is not \(T.self)")
        return unsafeBitCast(value, to: T.self)
    }

    private static func put<C: StateRestoring>(_ value: any Sendable, into controller: C) -> Bool {
        if type(of: value) == C.RestorableState.self {
            // Exactly its type: taken out of the box as it is, without the runtime's cast.
            controller.restorableState = sameType(value, as: C.RestorableState.self)
            return true
        }
        return putCasting(value, into: controller)
    }

    /// Not exactly its type (a subclass of a class state, say): the cast decides, as it always
    /// did. Apart, so that the usual case needs no optional of the state's type.
    @inline(never)
    private static func putCasting<C: StateRestoring>(_ value: any Sendable, into controller: C) -> Bool {
        guard let state = value as? C.RestorableState else { return false }
        controller.restorableState = state
        return true
    }

    /// Decodes (or migrates) `bytes`, the stored row's, into `controller`. On failure the row is
    /// quarantined; when the state decodes without some of the row's members, a copy is kept.
    /// Returns whether the controller took the bytes.
    @discardableResult
    private func apply<C: StateRestoring>(
        bytes: Data, version: Int, to controller: C, path: RestorationPath
    ) -> Bool {
        let current = C.restorableStateVersion
        func fail(_ reason: String) -> Bool {
            quarantine(path, reason: reason)
            return false
        }
        guard version <= current else {
            return fail("version \(version) is newer than this build's version \(current) of \(String(reflecting: C.RestorableState.self))")
        }
        do {
            if version == current {
                let state = try StateCoding.decode(C.RestorableState.self, from: bytes, at: path)
                keepIfSuperseded(bytes, by: state, at: path)
                controller.restorableState = state
            } else {
                controller.restorableState = try C.migrateRestorableState(from: version, data: bytes)
                counts.migrations += 1
            }
            counts.restores += 1
            return true
        } catch let StateStoreError.decodingFailed(_, reason) {
            // The reason alone: the error's own advice (quarantine it) is what happens here.
            return fail("it does not decode as \(String(reflecting: C.RestorableState.self)): \(reason)")
        } catch let error as StateStoreError {
            return fail(error.description)
        } catch {
            return fail("migration from version \(version) to \(current) failed: \(error)")
        }
    }

    /// Keeps the stored `bytes` in quarantine, once, when they have members `state` (decoded from
    /// them) no longer carries: the next save would drop them.
    private func keepIfSuperseded<T: Encodable>(_ bytes: Data, by state: T, at path: RestorationPath) {
        // A read-only window saves nothing, so nothing it reads is dropped.
        guard !store.options.readOnly, !restoringReadOnly, let reencoded = try? StateCoding.encode(state, for: path), reencoded != bytes else { return }
        let members = UnreadMembers.find(stored: bytes, reencoded: reencoded)
        guard !members.isEmpty else { return }
        let reason = "superseded: the stored JSON has members \(String(reflecting: T.self)) no longer reads (\(members.joined(separator: ", "))); kept before a save replaces them"
        do {
            let kept = try store.write { (transaction) throws(StateStoreError) -> Bool in
                try transaction.keepCopy(of: path, reason: reason)
            }
            unprotectedPaths[path] = nil
            if kept {
                counts.quarantined += 1
                store.options.logger.info("superseded state kept", metadata: ["statestore.path": "\(path)", "statestore.reason": "\(reason)"])
                report(.supersededKept(path: path, members: members))
            }
        } catch {
            report(.store(error))
            // Read again at the next appearance, which tries to keep the copy again.
            forgetLatest(of: path)
            recentStates.removeValue(forKey: path)
            unprotectedPaths[path] = false
        }
    }

    private func quarantine(_ path: RestorationPath, reason: String) {
        forgetLatest(of: path)
        recentStates.removeValue(forKey: path)
        guard !restoringReadOnly else {
            // Another process's scene: its row is left as it is; the controller starts from its default.
            report(.store(.invalidState(path: path, reason: "\(reason); left in place, as this window shows its scene read-only")))
            return
        }
        do {
            if try store.quarantine(path, reason: reason) {
                counts.quarantined += 1
                report(.quarantined(path: path, reason: reason))
            }
            unprotectedPaths[path] = nil
        } catch {
            report(.store(error))
            unprotectedPaths[path] = false
        }
    }

    /// Refuses a save to a path whose stored state could not be set aside, reporting it once.
    private func refuseSave(at path: RestorationPath) {
        droppedStateWrites += 1
        guard unprotectedPaths[path] == false else { return }
        unprotectedPaths[path] = true
        report(.store(.invalidState(
            path: path,
            reason: "its stored state could not be set aside before a save replaced it, so it is kept as it is and this screen's changes are not saved; the next appearance at this path tries again"
        )))
    }
}

/// Whether the calling code runs on the main queue, the main actor's executor: not always the
/// main thread (a test runner may drain the main queue on another thread).
enum MainQueue {
    private static let key = DispatchSpecificKey<Bool>()

    /// Marks the main queue; once is enough, again is harmless.
    @MainActor static func mark() { DispatchQueue.main.setSpecific(key: key, value: true) }

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// A weak, `Sendable` handle on a coordinator, for the writer to wake it.
final class WeakCoordinator: Sendable {
    @MainActor weak var coordinator: RestorationCoordinator?

    /// Asks the main actor to take in the writer's outcomes at its next turn.
    func scheduleAbsorb() {
        Task { @MainActor in self.coordinator?.absorbWriterOutcomes() }
    }
}
