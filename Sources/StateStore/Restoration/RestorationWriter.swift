import Foundation
import Logging
import Synchronization

/// A controller's state as the main actor hands it to the writer: the captured value, not
/// yet encoded.
struct StateHandoff: Sendable {
    /// What was captured, in one immutable box: a handoff is copied as it is queued, folded
    /// and taken by the writer, and a box costs one reference count where its fields cost four.
    final class Capture: Sendable {
        let path: RestorationPath
        let token: UInt64
        let stateType: any Any.Type
        let version: Int
        let value: any Encodable & Sendable

        init(
            path: RestorationPath, token: UInt64, stateType: any Any.Type, version: Int, value: any Encodable & Sendable
        ) {
            self.path = path
            self.token = token
            self.stateType = stateType
            self.version = version
            self.value = value
        }
    }
    let capture: Capture

    var path: RestorationPath { capture.path }
    /// The coordinator's number for this version of the path's state.
    var token: UInt64 { capture.token }
    /// The state's type; its name (stored beside the bytes) is found on the writer, so the
    /// first save of a type does not demangle it on the main actor.
    var stateType: any Any.Type { capture.stateType }
    var version: Int { capture.version }
    /// The captured value, kept with the bytes once written so that another instance takes it
    /// without decoding.
    var value: any Encodable & Sendable { capture.value }
    /// Older states of the path this one replaced in a folded batch, oldest first: written
    /// instead when this one cannot be (it fails to encode, or is over the size limit), newest
    /// first, so that folding does not lose a state the batches one by one would have written.
    /// At most ``maximumSuperseded`` are kept, so a writer held back for long holds a bounded
    /// number of values per path.
    var superseded: [StateHandoff] = []

    init(path: RestorationPath, token: UInt64, stateType: any Any.Type, version: Int, value: any Encodable & Sendable) {
        capture = Capture(path: path, token: token, stateType: stateType, version: version, value: value)
    }

    /// How many replaced states a folded handoff keeps as fallbacks: when this many newer
    /// saves of one path all fail while the writer is behind, the path keeps what it held.
    static let maximumSuperseded = 4

    /// The captured value's bytes (JSON, sorted keys); called on the writer.
    func encode() throws(StateStoreError) -> Data {
        try StateCoding.encode(capture.value, for: capture.path)
    }
}

/// What one structural change (or the end of a main-actor turn) hands to the writer. Its
/// states and archives commit in one transaction.
struct WriteBatch: Sendable {
    var states: [StateHandoff] = []
    /// Archives by scene, with the path component the scene's states save under.
    var archives: [(scene: String, pathPrefix: String, archive: HierarchySnapshot)] = []
    /// Scenes whose window the user closed: their live archives are removed, after the states.
    var removedScenes: [String] = []
    /// Scenes whose archive must be written even when unchanged (a rebuild set the old one aside).
    var forgottenArchives: [String] = []
    var pressureEvents: [PressureEvent] = []
    /// Rows to move to quarantine before the batch's states are written: a row over the size
    /// limit met at an appearance, whose copy (as long as the row is large) is made here, in
    /// short transactions (``StateStore/setAsideInSteps(_:reason:ifLargerThan:transactions:)``), rather than
    /// on the main actor. A row no longer over the limit when the writer comes to it is left
    /// where it is.
    var setAsides: [(path: RestorationPath, reason: String)] = []
    /// Ask SQLite to release its page cache once the batch is written.
    var releaseMemory = false
    /// Where each path is in ``states``, kept by ``absorb(_:)`` once a batch has absorbed another.
    private var positions: [RestorationPath: Int] = [:]

    var isEmpty: Bool {
        states.isEmpty && archives.isEmpty && removedScenes.isEmpty && pressureEvents.isEmpty && !releaseMemory
            && setAsides.isEmpty
    }

    /// Whether committing `later` in this batch's transaction ends where committing the two in
    /// order would, whatever fails: not when it archives a scene this batch removes (a batch
    /// removes scenes after it writes archives), nor when it removes a scene this batch
    /// archives (an archive carried over a transient failure would outlive the removal), nor
    /// when it sets rows aside (a batch sets its rows aside before it writes its states, and a
    /// row set aside after a save of its path must not be the saved one).
    func canAbsorb(_ later: WriteBatch) -> Bool {
        later.setAsides.isEmpty
            && (removedScenes.isEmpty || !later.archives.contains { removedScenes.contains($0.scene) })
            && (later.removedScenes.isEmpty || !archives.contains { later.removedScenes.contains($0.scene) })
    }

    /// Folds `later` into this batch: its states replace older ones of the same path, its
    /// archives older ones of the same scene; the rest is added. Only after ``canAbsorb(_:)``.
    mutating func absorb(_ later: WriteBatch) {
        if !later.states.isEmpty {
            if states.count + later.states.count <= 16 && positions.isEmpty {
                // A handful of states (one structural change's): a scan beats hashing paths.
                for state in later.states {
                    if let position = states.firstIndex(where: { $0.path == state.path }) {
                        replace(at: position, with: state)
                    } else {
                        states.append(state)
                    }
                }
            } else {
                absorbIndexed(later.states)
            }
        }
        for archive in later.archives {
            if let position = archives.firstIndex(where: { $0.scene == archive.scene }) {
                archives[position] = archive
            } else {
                archives.append(archive)
            }
        }
        if !later.removedScenes.isEmpty { removedScenes += later.removedScenes }
        if !later.forgottenArchives.isEmpty { forgottenArchives += later.forgottenArchives }
        if !later.pressureEvents.isEmpty { pressureEvents += later.pressureEvents }
        if !later.setAsides.isEmpty { setAsides += later.setAsides }
        releaseMemory = releaseMemory || later.releaseMemory
    }

    /// Puts `state` at `position`, keeping the one it replaces (and its own) as fallbacks.
    private mutating func replace(at position: Int, with state: StateHandoff) {
        // Moved, not copied: the older handoff leaves the array for the chain.
        var older = state
        swap(&older, &states[position])
        var chain = older.superseded
        older.superseded = []
        chain.append(older)
        if !states[position].superseded.isEmpty { chain += states[position].superseded }
        if chain.count > StateHandoff.maximumSuperseded {
            chain.removeFirst(chain.count - StateHandoff.maximumSuperseded)
        }
        states[position].superseded = chain
    }

    /// ``absorb(_:)`` for states by a path index, kept once built.
    private mutating func absorbIndexed(_ later: [StateHandoff]) {
        if positions.count != states.count {
            positions.removeAll(keepingCapacity: true)
            for (position, state) in states.enumerated() { positions[state.path] = position }
        }
        for state in later {
            if let position = positions[state.path] {
                replace(at: position, with: state)
            } else {
                positions[state.path] = states.count
                states.append(state)
            }
        }
    }
}

/// What the writer did with one batch, for the main actor.
struct WriteOutcome: Sendable {
    struct Settled: Sendable {
        var path: RestorationPath
        var token: UInt64
        var generation: Int64
        /// `false`: the bytes were those already stored, nothing was written.
        var wrote: Bool
    }
    /// States now in the database (written, or found unchanged).
    var settled: [Settled] = []
    /// States that can never be written (their error is in ``errors``).
    var dropped: [(path: RestorationPath, token: UInt64)] = []
    var errors: [StateStoreError] = []
    /// Rows moved to quarantine so that a save could land (see ``StateStore/SaveResult/setAside``),
    /// or as ``WriteBatch/setAsides`` asked.
    var setAside: [(path: RestorationPath, reason: String)] = []
    /// The paths of the ``WriteBatch/setAsides`` this batch ended, however they ended.
    var setAsidesEnded: [RestorationPath] = []
    /// Paths whose row ``WriteBatch/setAsides`` asked to move and that were not moved: the copy
    /// failed (the error is in ``errors``), or the row changed while it was copied. The writer
    /// refuses every save of them handed over until the main actor takes this in
    /// (``RestorationWriter/refuse(_:through:)``).
    var notSetAside: [RestorationPath] = []
    /// Saves dropped because their path's row could not be set aside (see ``notSetAside``).
    var refused: [RestorationPath] = []
    var transactions = 0
    var archiveWrites = 0
    /// The store's change count as the batch began (see ``StateStore/changeCount(refreshing:)``):
    /// what the batch settled is known to be current as of it.
    var changeCount: UInt64 = 0
}

/// The bytes of a state the coordinator wrote or read, kept so that an appearing controller
/// is restored without a query.
struct CachedState: Sendable {
    var token: UInt64
    var bytes: Data
    var version: Int
    var checksum: Int64
    var generation: Int64
    /// The value the bytes encode, when known (it was handed over, or decoded once already).
    var value: (any Sendable)?

    /// What the entry holds, as the cache counts it: the bytes, and as much again for the
    /// decoded value when there is one (its real size cannot be known; a decoded state is
    /// about as large as its JSON).
    var cost: Int { value == nil ? bytes.count : 2 * bytes.count }
}

/// The restoration layer's writer: runs on the store's write-behind queue, one batch at a
/// time, in the order the main actor handed them over. It encodes each captured state, skips
/// the ones whose bytes the database already holds, and commits the rest with the batch's
/// hierarchy archives in one transaction. Outcomes wait in an outbox for the main actor.
final class RestorationWriter: Sendable {
    let store: StateStore
    let cache: RecreatableCache<RestorationPath, CachedState>
    /// Called (from the writer's thread) when an outcome is put in the outbox and none was waiting.
    private let notify: @Sendable () -> Void

    private struct Encoded: Sendable {
        var path: RestorationPath
        var token: UInt64
        var bytes: Data
        var checksum: Int64
        var typeName: String
        var version: Int
        var value: any Sendable
    }

    private struct State: Sendable {
        /// What this writer knows the database holds at each path: checksum and generation.
        var known: [RestorationPath: (checksum: Int64, generation: Int64)] = [:]
        /// The archive bytes last written per scene.
        var archives: [String: Data] = [:]
        /// The store's change count when `known` was last trusted.
        var changeCount: UInt64?
        /// Encoded writes that failed for a reason that may pass (a full disk, a lock): retried,
        /// in order, with the next batch.
        var carried: [Encoded] = []
        var carriedArchives: [String: Data] = [:]
        /// The path component of each scene an archive was handed over for.
        var carriedPrefixes: [String: String] = [:]
        var outbox: [WriteOutcome] = []
        /// Batches handed over and not yet started, oldest first.
        var waiting: [WriteBatch] = []
        /// Whether ``runNext()`` is writing.
        var running = false
        /// Claims on scenes of closed windows, kept until everything handed over before them is
        /// written (see ``release(afterPendingWrites:)``).
        var heldClaims: [SceneClaim] = []
        /// Paths whose row could not be set aside, with the newest token of theirs refused: a
        /// save of one with a token up to it is dropped, so the row is never saved over.
        var refused: [RestorationPath: UInt64] = [:]
    }
    private let state = Lock(State())
    /// Whether an outcome in the outbox carries a failure (or a row set aside) not yet taken.
    private let problemsWaiting = Atomic<Bool>(false)

    /// Whether the outbox holds an outcome not yet taken: an appearance, which takes them in,
    /// looks here first and takes no lock while nothing was delivered.
    private let outcomesWaiting = Atomic<Bool>(false)

    /// Whether the outbox holds a failure the main actor has not taken in yet.
    var hasProblemsWaiting: Bool { problemsWaiting.load(ordering: .acquiring) }

    init(
        store: StateStore, cache: RecreatableCache<RestorationPath, CachedState>, notify: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.cache = cache
        self.notify = notify
    }

    /// Lets `claim` go once every batch handed over so far is written, and no write waits for a
    /// retry: at once when the writer is idle with nothing carried, else at the end of the run
    /// that leaves it so. A scene whose window closed must not be taken by another process
    /// while its last changes may still be written into it.
    func release(afterPendingWrites claim: SceneClaim) {
        state.withLock { state in
            // Not kept: the caller's reference is the last, and the claim goes with it.
            guard state.running || !state.waiting.isEmpty || !state.carried.isEmpty || !state.carriedArchives.isEmpty
            else { return }
            state.heldClaims.append(claim)
        }
    }

    /// Lets every held claim go now, written or not, and forgets the batches waiting and the
    /// writes carried for a retry: the process is dead (``StateStore/simulateProcessDeath()``),
    /// and the kernel drops its locks with it.
    func dropEverythingAsDead() {
        let released: [SceneClaim] = state.withLock { state in
            state.waiting.removeAll()
            state.carried.removeAll()
            state.carriedArchives.removeAll()
            state.carriedPrefixes.removeAll()
            defer { state.heldClaims.removeAll() }
            return state.heldClaims
        }
        // Released here, outside the writer's lock.
        withExtendedLifetime(released) {}
    }

    /// At the end of a run: the held claims go when nothing waits and nothing is carried.
    private func finishRun() {
        let released: [SceneClaim] = state.withLock { state in
            state.running = false
            guard state.waiting.isEmpty, state.carried.isEmpty, state.carriedArchives.isEmpty, !state.heldClaims.isEmpty
            else { return [] }
            defer { state.heldClaims.removeAll() }
            return state.heldClaims
        }
        // Released here, outside the writer's lock.
        withExtendedLifetime(released) {}
    }

    /// Whether writes that failed for a reason that may pass wait for the next batch.
    var hasCarriedWork: Bool {
        state.withLock { !$0.carried.isEmpty || !$0.carriedArchives.isEmpty }
    }

    /// The outcomes delivered so far, oldest first; the outbox is emptied.
    func takeOutcomes() -> [WriteOutcome] {
        // Set under the lock with the outbox, so a false read here only misses an outcome
        // delivered at this very moment, which the next look takes (a flush point's look
        // comes after waiting for the writer, which orders it after every delivery).
        guard outcomesWaiting.load(ordering: .acquiring) else { return [] }
        return state.withLock { state in
            defer { state.outbox.removeAll() }
            outcomesWaiting.store(false, ordering: .relaxed)
            problemsWaiting.store(false, ordering: .releasing)
            return state.outbox
        }
    }

    /// Refuses the saves of `path` with a token up to `token`: those handed over before the main
    /// actor learnt that its row could not be set aside (it refuses the later ones itself, until
    /// an appearance reads the path again).
    func refuse(_ path: RestorationPath, through token: UInt64) {
        state.withLock { state in
            guard state.refused[path] != nil else { return }
            state.refused[path] = token
        }
    }

    /// Records that the database holds `checksum` at `path` (the main actor read it), so an
    /// unchanged save of it is skipped.
    func noteStored(_ path: RestorationPath, checksum: Int64, generation: Int64) {
        state.withLock { $0.known[path] = (checksum, generation) }
    }

    // MARK: Handing over

    /// Adds `batch` to those waiting for the writer, and leaves `batch` empty (it is moved, not
    /// copied). Returns `true` when none was waiting, for which one ``runNext()`` must be
    /// submitted: a job already submitted takes every batch waiting when it starts.
    ///
    /// The main actor usually only appends here; the writer folds the batches it takes
    /// together (``runNext()``), so a writer that falls behind the interface commits each
    /// path's newest state once, and a flush point never waits for more than the batches being
    /// written and one more transaction. Once ``foldOnHandOver`` batches wait (a writer held
    /// back by a lock or a slow disk), a new one is folded into the newest here instead, so
    /// what waits stays bounded: one batch's states per path and one archive per scene.
    func enqueue(_ batch: inout WriteBatch) -> Bool {
        state.withLock { state in
            if state.waiting.count >= Self.foldOnHandOver, state.waiting[state.waiting.count - 1].canAbsorb(batch) {
                state.waiting[state.waiting.count - 1].absorb(batch)
                batch = WriteBatch()
                return false
            }
            state.waiting.append(WriteBatch())
            swap(&state.waiting[state.waiting.count - 1], &batch)
            return state.waiting.count == 1
        }
    }

    /// How many batches wait before a new one is folded on hand-over (see ``enqueue(_:)``).
    static let foldOnHandOver = 8

    // MARK: Running a batch (on the write-behind queue)

    /// Writes every batch waiting, in the order they were handed over: folded into one
    /// transaction where ``WriteBatch/canAbsorb(_:)`` allows, else one after the other.
    func runNext() {
        // Room for the hand-overs to come, made here rather than by the main thread's next one.
        var taken: [WriteBatch] = []
        taken.reserveCapacity(4)
        state.withLock {
            swap(&taken, &$0.waiting)
            $0.running = true
        }
        defer { finishRun() }
        guard !taken.isEmpty else { return }
        // Recorded here, not as the main actor hands a batch over: the metrics backend's call
        // stays off the main thread.
        store.metrics.backlog.record(taken.count)
        // Each batch is moved out of `taken` (not copied), so folding copies no array.
        var merged = WriteBatch()
        swap(&merged, &taken[0])
        for index in taken.indices.dropFirst() {
            var later = WriteBatch()
            swap(&later, &taken[index])
            if merged.canAbsorb(later) {
                merged.absorb(later)
            } else {
                run(merged)
                merged = later
            }
        }
        run(merged)
    }

    private func run(_ batch: WriteBatch) {
        var outcome = WriteOutcome()
        let changeCount = store.changeCount(refreshing: true)
        var (writes, archives, known, lastArchives, prefixes) = state.withLock { state in
            if state.changeCount != changeCount {
                // Someone else wrote: what this writer knew may be stale.
                state.known.removeAll()
                state.archives.removeAll()
                state.changeCount = changeCount
            }
            for scene in batch.forgottenArchives { state.archives[scene] = nil }
            defer {
                state.carried.removeAll()
                state.carriedArchives.removeAll()
                state.carriedPrefixes.removeAll()
            }
            return (state.carried, state.carriedArchives, state.known, state.archives, state.carriedPrefixes)
        }
        let limit = store.options.maximumStateSize
        var refused = state.withLock { $0.refused }
        for (path, reason) in batch.setAsides {
            setAside(path, reason: reason, limit: limit, refused: &refused, known: &known, outcome: &outcome)
        }
        // Where each path's write is in `writes` (carried ones first), and the writes a newer
        // state of their path replaced: found by key, so a batch of many states (every visible
        // controller at termination) costs time linear in its size.
        var position: [RestorationPath: Int] = [:]
        for (index, write) in writes.enumerated() { position[write.path] = index }
        var replaced = Set<Int>()
        for newest in batch.states {
            // The newest state that can be written; those that cannot are reported and dropped.
            if !refused.isEmpty, let bar = refused[newest.path], newest.token <= bar {
                // Its row could not be set aside: kept as it is (older handoffs have lower tokens).
                outcome.dropped.append((newest.path, newest.token))
                outcome.refused.append(newest.path)
                continue
            }
            var candidates = newest.superseded
            var next: StateHandoff? = newest
            var found: (handoff: StateHandoff, bytes: Data)?
            while let handoff = next, found == nil {
                next = candidates.popLast()
                do throws(StateStoreError) {
                    let bytes = try handoff.encode()
                    guard bytes.count <= limit else {
                        throw StateStoreError.stateTooLarge(path: handoff.path, byteCount: bytes.count, limit: limit)
                    }
                    found = (handoff, bytes)
                } catch {
                    outcome.errors.append(error)
                    outcome.dropped.append((handoff.path, handoff.token))
                }
            }
            guard let (handoff, bytes) = found else { continue }
            let checksum = Checksum.stored(bytes)
            let earlier = position.removeValue(forKey: handoff.path)
            let carried = earlier != nil
            if let earlier { replaced.insert(earlier) }
            if !carried, let stored = known[handoff.path], stored.checksum == checksum {
                // Unchanged: the cached bytes now stand for this handoff too.
                cache.setValue(
                    CachedState(
                        token: handoff.token, bytes: bytes, version: handoff.version, checksum: checksum,
                        generation: stored.generation, value: handoff.value),
                    forKey: handoff.path
                )
                outcome.settled.append(
                    .init(path: handoff.path, token: handoff.token, generation: stored.generation, wrote: false))
                continue
            }
            position[handoff.path] = writes.count
            writes.append(
                Encoded(
                    path: handoff.path, token: handoff.token, bytes: bytes, checksum: checksum,
                    typeName: StateCoding.typeName(handoff.stateType), version: handoff.version, value: handoff.value
                ))
        }
        if !replaced.isEmpty {
            writes = writes.indices.filter { !replaced.contains($0) }.map { writes[$0] }
        }
        for (scene, pathPrefix, archive) in batch.archives {
            prefixes[scene] = pathPrefix
            do {
                let bytes = try archive.archive.encoded()
                if lastArchives[scene] != bytes { archives[scene] = bytes } else { archives[scene] = nil }
            } catch {
                outcome.errors.append(error)
            }
        }
        commit(
            writes, archives: archives, prefixes: prefixes, known: &known, lastArchives: &lastArchives,
            outcome: &outcome)
        for scene in batch.removedScenes {
            lastArchives[scene] = nil
            // An archive of the scene kept for a retry must not bring the window back.
            state.withLock {
                $0.carriedArchives[scene] = nil
                $0.carriedPrefixes[scene] = nil
            }
            do {
                try store.writeBehindTransaction { (transaction) throws(StateStoreError) in
                    _ = try transaction.removeHierarchyArchive(scene: scene)
                }
                outcome.transactions += 1
            } catch {
                outcome.errors.append(error)
            }
        }
        if !batch.pressureEvents.isEmpty {
            do {
                try store.writeBehindTransaction { (transaction) throws(StateStoreError) in
                    for event in batch.pressureEvents { try transaction.recordPressureEvent(event) }
                }
                outcome.transactions += 1
            } catch {
                outcome.errors.append(error)
            }
        }
        if batch.releaseMemory { store.releaseMemory() }
        if !outcome.errors.isEmpty { store.metrics.writeFailures.increment(by: outcome.errors.count) }
        // The count as the batch began, not as it ended: the pragma after a commit also sees a
        // commit another connection made just after ours, and stamping that count on the paths
        // this batch settled would mark them verified past a change they did not see (an
        // appearance would then restore the cached value, and an equal save be skipped as
        // unchanged, over the other connection's row). A commit by another connection at any
        // time after this look makes the next look differ, and the paths be checked again.
        outcome.changeCount = changeCount
        let (knownNow, archivesNow) = (known, lastArchives)
        let first = state.withLock { state in
            state.known = knownNow
            state.archives = archivesNow
            state.changeCount = outcome.changeCount
            state.outbox.append(outcome)
            outcomesWaiting.store(true, ordering: .releasing)
            if !outcome.errors.isEmpty || !outcome.setAside.isEmpty || !outcome.setAsidesEnded.isEmpty
                || !outcome.refused.isEmpty
            {
                problemsWaiting.store(true, ordering: .releasing)
            }
            return state.outbox.count == 1
        }
        if first { notify() }
    }

    /// Moves the row at `path` to quarantine with `reason`, in steps, when it is still over
    /// `limit` bytes (one another connection replaced with a smaller one is left alone). When it
    /// could not be moved, the path's saves are refused until the main actor takes that in.
    private func setAside(
        _ path: RestorationPath, reason: String, limit: Int, refused: inout [RestorationPath: UInt64],
        known: inout [RestorationPath: (checksum: Int64, generation: Int64)], outcome: inout WriteOutcome
    ) {
        outcome.setAsidesEnded.append(path)
        known[path] = nil
        let end: StateStore.SetAsideEnd
        do {
            end = try store.setAsideInSteps(
                path, reason: reason, ifLargerThan: limit, transactions: &outcome.transactions)
        } catch {
            outcome.errors.append(error)
            end = .changed
        }
        let metadata: Logger.Metadata = [
            "statestore.path": "\(path)", "statestore.reason": "\(reason)", "statestore.database": "\(store.path)",
        ]
        switch end {
        case .moved:
            outcome.setAside.append((path, reason))
            store.options.logger.info("state quarantined", metadata: metadata)
        case .nothingToMove:
            break
        case .changed:
            // Whatever is at the path now was not set aside: no save handed over goes over it.
            outcome.notSetAside.append(path)
            refused[path] = .max
            state.withLock { $0.refused[path] = .max }
            store.options.logger.info("state not quarantined: it changed, or the copy failed", metadata: metadata)
            return
        }
        refused[path] = nil
        state.withLock { $0.refused[path] = nil }
    }

    /// Commits `writes` and `archives` in one transaction. When that fails for a reason that
    /// may pass, everything is carried to the next batch; when some writes can never succeed,
    /// each is tried alone, the failures are dropped, and the rest commit together.
    private func commit(
        _ writes: [Encoded], archives: [String: Data], prefixes: [String: String],
        known: inout [RestorationPath: (checksum: Int64, generation: Int64)], lastArchives: inout [String: Data],
        outcome: inout WriteOutcome
    ) {
        guard !writes.isEmpty || !archives.isEmpty else { return }
        do {
            try transact(
                writes, archives: archives, prefixes: prefixes, known: &known, lastArchives: &lastArchives,
                outcome: &outcome)
        } catch  where error.isTransient {
            outcome.errors.append(error)
            carry(writes, archives, prefixes)
        } catch {
            var left: [Encoded] = []
            for write in writes {
                do {
                    try transact(
                        [write], archives: [:], prefixes: prefixes, known: &known, lastArchives: &lastArchives,
                        outcome: &outcome)
                } catch  where !error.isTransient {
                    outcome.errors.append(error)
                    outcome.dropped.append((write.path, write.token))
                } catch {
                    outcome.errors.append(error)
                    left.append(write)
                }
            }
            do {
                try transact(
                    left, archives: archives, prefixes: prefixes, known: &known, lastArchives: &lastArchives,
                    outcome: &outcome)
            } catch {
                outcome.errors.append(error)
                carry(left, archives, prefixes)
            }
        }
    }

    private func carry(_ writes: [Encoded], _ archives: [String: Data], _ prefixes: [String: String]) {
        state.withLock { state in
            state.carriedPrefixes.merge(prefixes) { new, _ in new }
            state.carried = writes + state.carried.filter { old in !writes.contains { $0.path == old.path } }
            state.carriedArchives.merge(archives) { new, _ in new }
        }
    }

    /// One transaction: `writes` then `archives`; on success the writes are settled and cached.
    private func transact(
        _ writes: [Encoded], archives: [String: Data], prefixes: [String: String],
        known: inout [RestorationPath: (checksum: Int64, generation: Int64)], lastArchives: inout [String: Data],
        outcome: inout WriteOutcome
    ) throws(StateStoreError) {
        guard !writes.isEmpty || !archives.isEmpty else { return }
        let start = ContinuousClock.now
        let results = try store.writeBehindTransaction {
            (transaction) throws(StateStoreError) -> [StateStore.SaveResult] in
            var results: [StateStore.SaveResult] = []
            for write in writes {
                results.append(
                    try transaction.save(
                        encoded: write.bytes, encoding: .json, typeName: write.typeName, version: write.version,
                        for: write.path
                    ))
            }
            for (scene, bytes) in archives {
                try transaction.registerScene(scene, pathPrefix: prefixes[scene] ?? scene)
                try transaction.setHierarchyArchive(bytes, scene: scene)
            }
            return results
        }
        store.metrics.writeBehindSave.recordSince(start)
        store.metrics.batchStates.record(writes.count)
        outcome.transactions += 1
        for (write, result) in zip(writes, results) {
            known[write.path] = (write.checksum, result.generation)
            cache.setValue(
                CachedState(
                    token: write.token, bytes: write.bytes, version: write.version, checksum: write.checksum,
                    generation: result.generation, value: write.value),
                forKey: write.path
            )
            outcome.settled.append(
                .init(path: write.path, token: write.token, generation: result.generation, wrote: result.wrote))
            if let reason = result.setAside { outcome.setAside.append((write.path, reason)) }
        }
        for (scene, bytes) in archives {
            lastArchives[scene] = bytes
            outcome.archiveWrites += 1
        }
    }
}
