import Dispatch
import Foundation
import Logging

// Saving: captured states queued, handed to the writer in batches, flush points.
extension RestorationCoordinator {
    // MARK: Saving

    func makeToken() -> UInt64 {
        nextToken &+= 1
        return nextToken
    }

    /// Captures the controller's state and queues it for the writer; nothing is encoded here.
    func enqueueSave<C: StateRestoring>(_ controller: C) {
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
        let handoff = StateHandoff(
            path: entry.path, token: token, stateType: C.RestorableState.self, version: C.restorableStateVersion,
            value: value)
        queue(handoff)
        setPending(PendingValue(capture: handoff.capture, saver: record), in: entry)
        entry.latest = Latest(token: token, generation: nil, verifiedAt: 0)
        record.seenToken = token
    }

    /// Adds `handoff` to ``queued``, in place of a state of its path queued before.
    func queue(_ handoff: StateHandoff) {
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
    func handOverLater() {
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
    func scheduleFlush() {
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
    func submit(
        archiving window: Window? = nil, stored: HierarchyArchive? = nil, releasingMemory: Bool = false,
        waking: Bool = true
    ) {
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
            for path in outcome.setAsidesEnded { settingAside.remove(path) }
            for path in outcome.notSetAside {
                // Saves handed over before now were refused by the writer; later ones are
                // refused here until an appearance reads the path again.
                if unprotectedPaths[path] == nil { unprotectedPaths[path] = false }
                forgetLatest(of: path)
                recentStates.removeValue(forKey: path)
                writer.refuse(path, through: nextToken)
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
            for path in outcome.refused { reportRefusedSave(at: path) }
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
}
