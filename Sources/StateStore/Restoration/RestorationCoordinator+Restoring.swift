import Dispatch
import Foundation
import Logging

// Restoring: what an appearance puts into a controller, from what the coordinator knows, the
// cache of recent bytes or the database; preloading, migration, quarantine.
extension RestorationCoordinator {
    // MARK: Restoring

    func restore<C: StateRestoring>(_ controller: C) {
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
    func unknownPathsAreEmpty(changeCount now: UInt64) -> Bool {
        guard let noStatesAt else { return false }
        if store.restorationCoordinators.load(ordering: .relaxed) == 1, now == noStatesAt {
            return true
        }
        self.noStatesAt = nil
        return false
    }

    /// Forgets what the coordinator knew of `path`'s newest state: the next appearance asks the
    /// database, and no path unknown to it is taken to be empty any more.
    func forgetLatest(of entry: PathEntry) {
        entry.latest = nil
        noStatesAt = nil
    }

    /// ``forgetLatest(of:)`` by path, for a path the coordinator may not have met.
    func forgetLatest(of path: RestorationPath) {
        paths[path]?.latest = nil
        noStatesAt = nil
    }

    /// `CLOCK_MONOTONIC` in nanoseconds, for the once-a-millisecond check in ``changeCount()``:
    /// plain integer arithmetic, where `ContinuousClock` durations are 128-bit.
    static func monotonicNanoseconds() -> UInt64 {
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
    func changeCount() -> UInt64 {
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
    func load<C: StateRestoring>(_ controller: C, record: Record, entry: PathEntry, now: UInt64) {
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
            // Written by another tool past the budget: moved aside unread, never saved over; by
            // the writer, as its copy takes as long as the row is large.
            setAsideByWriter(path, reason: "it is \(byteCount) bytes, over the \(limit)-byte maximumStateSize")
        } catch .sealedStateUnopenable(_, let keyID) {
            // The right key, bytes that do not authenticate: altered outside the store. Set aside
            // with their key id, so they stay openable; the controller starts from its default.
            quarantine(
                path, reason: "its sealed bytes do not open with key \(keyID) (altered, or copied from another row)")
        } catch {
            // A key mismatch among them: reported, the row left exactly as it is, and the
            // controller's saves to this path refused until the right key is configured.
            report(.store(error))
        }
    }

    /// Records a row read from the database as the newest state of its path.
    /// `bytes` are the state's plaintext (the stored bytes, opened when sealed); the writer and
    /// the cache compare plaintext checksums.
    func remember(_ stored: StoredState, bytes: Data, token: UInt64, now: UInt64) {
        let checksum = stored.isSealed ? Checksum.stored(bytes) : stored.checksum
        entry(stored.path).latest = Latest(token: token, generation: stored.generation, verifiedAt: now)
        recentStates.setValue(
            CachedState(
                token: token, bytes: bytes, version: stored.version, checksum: checksum,
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
                guard let entry = pathEntry(for: controller, record: record(for: controller)), entry.latest == nil
                else { return }
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
    static func sameType<V, T>(_ value: V, as _: T.Type) -> T {
        // `V` is the value's own type (the existential is opened), never the box.
        precondition(V.self == T.self, "sameType: \(V.self) is not \(T.self)")
        return unsafeBitCast(value, to: T.self)
    }

    static func put<C: StateRestoring>(_ value: any Sendable, into controller: C) -> Bool {
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
    static func putCasting<C: StateRestoring>(_ value: any Sendable, into controller: C) -> Bool {
        guard let state = value as? C.RestorableState else { return false }
        controller.restorableState = state
        return true
    }

    /// Decodes (or migrates) `bytes`, the stored row's, into `controller`. On failure the row is
    /// quarantined; when the state decodes without some of the row's members, a copy is kept.
    /// Returns whether the controller took the bytes.
    @discardableResult
    func apply<C: StateRestoring>(
        bytes: Data, version: Int, to controller: C, path: RestorationPath
    ) -> Bool {
        let current = C.restorableStateVersion
        func fail(_ reason: String) -> Bool {
            quarantine(path, reason: reason)
            return false
        }
        guard version <= current else {
            return fail(
                "version \(version) is newer than this build's version \(current) of \(String(reflecting: C.RestorableState.self))"
            )
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
    func keepIfSuperseded<T: Encodable>(_ bytes: Data, by state: T, at path: RestorationPath) {
        // A read-only window saves nothing, so nothing it reads is dropped.
        guard !store.options.readOnly, !restoringReadOnly, let reencoded = try? StateCoding.encode(state, for: path),
            reencoded != bytes
        else { return }
        let members = UnreadMembers.find(stored: bytes, reencoded: reencoded)
        guard !members.isEmpty else { return }
        let reason =
            "superseded: the stored JSON has members \(String(reflecting: T.self)) no longer reads (\(members.joined(separator: ", "))); kept before a save replaces them"
        do {
            let kept = try store.write { (transaction) throws(StateStoreError) -> Bool in
                try transaction.keepCopy(of: path, reason: reason)
            }
            unprotectedPaths[path] = nil
            if kept {
                counts.quarantined += 1
                store.options.logger.info(
                    "superseded state kept", metadata: ["statestore.path": "\(path)", "statestore.reason": "\(reason)"])
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

    func quarantine(_ path: RestorationPath, reason: String) {
        forgetLatest(of: path)
        recentStates.removeValue(forKey: path)
        guard !restoringReadOnly else {
            // Another process's scene: its row is left as it is; the controller starts from its default.
            report(
                .store(
                    .invalidState(
                        path: path, reason: "\(reason); left in place, as this window shows its scene read-only")))
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

    /// ``quarantine(_:reason:)`` made by the writer, off the main actor, for a row over the size
    /// limit: its copy takes as long as the row is large (16.9 s for 500 MB, made in one
    /// transaction), so the launch does not wait for it. The controller starts from its default
    /// state at once. The writer copies the row in short transactions
    /// (``StateStore/setAsideInSteps(_:reason:ifLargerThan:transactions:)``), so a query of the
    /// main actor's meanwhile waits for one of them at most. A save of the path handed over after
    /// this is written after the row is set aside (the writer takes its batches in order); when
    /// the row is not set aside (the copy fails, or the row changes while it is copied), the
    /// saves of the path handed over until the main actor learns it are refused by the writer,
    /// and the later ones by ``unprotectedPaths``, as when ``quarantine(_:reason:)`` fails: the
    /// row is never saved over. It is reported as ``quarantine(_:reason:)`` reports it, once the
    /// writer's outcome reaches the main actor.
    ///
    /// A read-only window or store (which report the row and leave it) and write-through (whose
    /// every write waits for the writer anyway) set it aside here, as
    /// ``quarantine(_:reason:)`` does.
    func setAsideByWriter(_ path: RestorationPath, reason: String) {
        guard writesBehind, !restoringReadOnly, !store.options.readOnly else {
            quarantine(path, reason: reason)
            return
        }
        forgetLatest(of: path)
        recentStates.removeValue(forKey: path)
        // Handed over once: an appearance while it is copied finds the row still there.
        guard settingAside.insert(path).inserted else { return }
        // A batch of its own, handed over now: the states still queued (none of this path,
        // which had none pending to be loaded) go out after it, as they would have.
        var batch = WriteBatch()
        batch.setAsides = [(path, reason)]
        if writer.enqueue(&batch) { store.submitWriteBehind(runWriter) }
        // A queue without a thread has just run the batch here: its outcome is taken in now.
        if store.writeBehind.threadStartError != 0 { settle() }
    }

    /// Refuses a save to a path whose stored state could not be set aside, reporting it once.
    func refuseSave(at path: RestorationPath) {
        droppedStateWrites += 1
        reportRefusedSave(at: path)
    }

    /// Reports, once per failure to set the path's row aside, that a save to it was refused.
    func reportRefusedSave(at path: RestorationPath) {
        guard unprotectedPaths[path] == false else { return }
        unprotectedPaths[path] = true
        report(
            .store(
                .invalidState(
                    path: path,
                    reason:
                        "its stored state could not be set aside before a save replaced it, so it is kept as it is and this screen's changes are not saved; the next appearance at this path tries again"
                )))
    }
}
