import Foundation
import Logging

/// The lifecycle observer that saves each ``StateRestoring`` controller's state when it
/// disappears, restores it when it appears, and archives the window hierarchy.
///
/// - `viewWillDisappear`: after the controller's override has run (it commits its edits), the
///   state is encoded (JSON, sorted keys) and queued; unchanged bytes are not queued at all.
/// - Structural change (push, pop, present, dismiss, tab switch, containment): the queued states
///   and the new hierarchy archive are written in **one** transaction, so the database never holds
///   half a navigation. Anything queued outside a structural change is written at the end of the
///   main actor's current turn, and at once on ``Application/terminate()`` or a critical warning.
/// - `viewWillAppear`: before the override runs, when the store holds a newer generation than
///   this instance has seen (always, for a fresh instance), the state is decoded into
///   `restorableState`, migrated if older, or quarantined if newer or undecodable.
///
/// Failures never crash the app: they go to ``errorHandler`` (by default, the log) and the
/// state stays in memory to be saved again.
@MainActor
public final class RestorationCoordinator: LifecycleObserver {
    public let store: StateStore
    let scenePrefix = "window"

    /// Receives every problem; the default logs it.
    public var errorHandler: @MainActor (RestorationError) -> Void
    /// The most recent problems (at most 100), newest last.
    public private(set) var recentErrors: [RestorationError] = []

    /// Counts of what the coordinator did; useful in tests, soak runs and benchmarks.
    public struct Statistics: Sendable, Hashable {
        /// Disappearances of a savable controller.
        public var saveAttempts = 0
        /// States written to the database.
        public var stateWrites = 0
        /// Saves skipped because the encoded bytes had not changed.
        public var unchangedSkips = 0
        /// States decoded into a controller.
        public var restores = 0
        /// Older states migrated on read.
        public var migrations = 0
        /// States moved to quarantine.
        public var quarantined = 0
        /// Hierarchy archives written.
        public var archiveWrites = 0
        /// Transactions committed.
        public var transactions = 0
    }
    public private(set) var statistics = Statistics()

    /// What the coordinator knows of one live controller instance.
    final class Record {
        weak var controller: ViewController?
        /// The newest generation this instance has loaded or written.
        var seenGeneration: Int64?
        /// The checksum of the bytes last saved or loaded, to skip unchanged saves.
        var lastChecksum: Int64?
        init(_ controller: ViewController) { self.controller = controller }
    }
    private var records: [ObjectIdentifier: Record] = [:]
    private var recordsSweepThreshold = 64

    struct PendingWrite {
        var bytes: Data
        var checksum: Int64
        var typeName: String
        var version: Int
        var record: Record
        /// Other instances that took these bytes from the queue (see ``restore(_:)``): they
        /// have seen this generation once it is written.
        var followers: [Record] = []
    }
    private var pending: [RestorationPath: PendingWrite] = [:]
    private var pendingOrder: [RestorationPath] = []
    private var flushScheduled = false
    private var lastArchives: [String: Data] = [:]
    /// Archives not yet written (a flush failed, or restoration is under way), by scene.
    private var pendingArchives: [String: Data] = [:]
    /// Set while `restoreHierarchy(in:)` rebuilds a window: the half-built hierarchy must not
    /// replace the archive being restored.
    var isRestoringHierarchy = false {
        didSet { if !isRestoringHierarchy { duplicateIdentifiersByParent.removeAll() } }
    }
    /// While a hierarchy is rebuilt, each parent's identifiers shared by two children, so that
    /// finding the paths of n siblings costs O(n), not O(n²).
    private var duplicateIdentifiersByParent: [ObjectIdentifier: Set<String>] = [:]
    private var reportedDuplicates: Set<RestorationPath> = []
    /// Controllers already reported as not archivable, so each is reported once.
    var reportedOmissions: Set<HierarchyArchive.Omission> = []
    /// The restoration-path component of each scene seen (`""` for none), read once from the store.
    private var scenePrefixes: [String: String] = [:]

    /// The limits an archive must be within to be rebuilt; an archive over them is set aside
    /// with the reason and the app starts fresh. Defaults to ``HierarchyArchive/Limits/standard``.
    public var archiveLimits = HierarchyArchive.Limits.standard
    private let logger = Logger(label: "statestore.restoration")

    /// Set while the application terminates: closing windows must not overwrite their archives.
    var isTerminating = false

    public init(store: StateStore) {
        self.store = store
        let logger = self.logger
        errorHandler = { error in logger.error("\(error.description)") }
    }

    func report(_ error: RestorationError) {
        recentErrors.append(error)
        if recentErrors.count > 100 { recentErrors.removeFirst(recentErrors.count - 100) }
        errorHandler(error)
    }

    func record(for controller: ViewController) -> Record {
        let key = ObjectIdentifier(controller)
        if let record = records[key], record.controller === controller { return record }
        // A new instance (perhaps at the address of a deallocated one): start afresh. Dead
        // records are dropped when the table has doubled since the last sweep, so the sweeps
        // cost O(1) per insertion and the table stays within twice the live controllers.
        if records.count >= recordsSweepThreshold {
            records = records.filter { $0.value.controller != nil }
            recordsSweepThreshold = max(64, records.count * 2)
        }
        let record = Record(controller)
        records[key] = record
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
        var components: [String] = []
        var shared = false
        var node: ViewController? = controller
        while let current = node {
            guard let identifier = current.restorationIdentifier else { return nil }
            components.append(identifier)
            if let parent = current.parent, isShared(identifier, of: current, in: parent) {
                shared = true
            }
            node = current.parent ?? current.presentingViewController
        }
        let path: RestorationPath
        do {
            var ordered = Array(components.reversed())
            if let prefix = try pathPrefix(of: controller.window?.sceneIdentifier), !prefix.isEmpty {
                ordered.insert(prefix, at: 0)
            }
            path = try RestorationPath(components: ordered)
        } catch {
            report(.store(error))
            return nil
        }
        if shared {
            if reportedDuplicates.insert(path).inserted { report(.duplicateRestorationIdentifier(path: path)) }
            return nil
        }
        return path
    }

    private func isShared(_ identifier: String, of controller: ViewController, in parent: ViewController) -> Bool {
        guard isRestoringHierarchy, parent.children.count > 16 else {
            return parent.children.contains { $0 !== controller && $0.restorationIdentifier == identifier }
        }
        let key = ObjectIdentifier(parent)
        if let duplicates = duplicateIdentifiersByParent[key] { return duplicates.contains(identifier) }
        var seen = Set<String>()
        var duplicates = Set<String>()
        for child in parent.children {
            if let name = child.restorationIdentifier, !seen.insert(name).inserted { duplicates.insert(name) }
        }
        duplicateIdentifiersByParent[key] = duplicates
        return duplicates.contains(identifier)
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

    public func controller(_ controller: ViewController, willRun callback: LifecycleCallback, animated: Bool) {
        guard callback == .viewWillAppear, let restoring = controller as? any StateRestoring else { return }
        restore(restoring)
    }

    public func controller(_ controller: ViewController, didRun callback: LifecycleCallback, animated: Bool) {
        guard callback == .viewWillDisappear, let restoring = controller as? any StateRestoring else { return }
        enqueueSave(restoring)
        scheduleFlush()
    }

    public func hierarchyDidChange(in window: Window) {
        if window.isClosed, !isTerminating {
            // The user closed the window: its scene is gone, and a relaunch must not rebuild
            // it. Its states stay in the store.
            let scene = window.sceneIdentifier
            pendingArchives[scene] = nil
            lastArchives[scene] = nil
            flush()
            do {
                try store.removeHierarchyArchive(scene: scene)
            } catch {
                report(.store(error))
            }
            return
        }
        guard !isTerminating, !isRestoringHierarchy, !window.isClosed else {
            flush()
            return
        }
        flush(archiving: window)
    }

    public func applicationDidReceiveMemoryWarning(_ application: Application, level: MemoryPressureLevel) {
        // An OOM kill may follow a critical warning: everything visible goes to disk now.
        if level == .critical { saveVisibleControllers(of: application) }
        store.releaseMemory()
    }

    public func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {
        do {
            try store.recordPressureEvent(PressureEvent(
                occurredAt: report.raisedAt, level: report.level, availableBytes: report.availableBytes ?? 0,
                rssBefore: report.rssBefore, rssAfter: report.rssAfter, duration: report.duration
            ))
        } catch {
            self.report(.store(error))
        }
    }

    public func applicationWillTerminate(_ application: Application) {
        saveVisibleControllers(of: application)
        isTerminating = true
    }

    // MARK: Saving

    private func enqueueSave<C: StateRestoring>(_ controller: C) {
        statistics.saveAttempts += 1
        guard let path = restorationPath(for: controller) else { return }
        let record = record(for: controller)
        let bytes: Data
        do {
            bytes = try StateCoding.encode(controller.restorableState, for: path)
        } catch {
            report(.store(error))
            return
        }
        let limit = store.options.maximumStateSize
        guard bytes.count <= limit else {
            // Never queued: it would fail every flush and hold back everything queued with it.
            report(.store(.stateTooLarge(path: path, byteCount: bytes.count, limit: limit)))
            return
        }
        let checksum = Checksum.stored(bytes)
        if record.lastChecksum == checksum, pending[path] == nil {
            statistics.unchangedSkips += 1
            return
        }
        if pending[path] == nil { pendingOrder.append(path) }
        pending[path] = PendingWrite(
            bytes: bytes, checksum: checksum, typeName: StateCoding.typeName(C.RestorableState.self),
            version: C.restorableStateVersion, record: record
        )
    }

    /// Encodes and writes the state of every visible (or appearing) savable controller now.
    public func saveVisibleControllers(of application: Application) {
        for controller in application.liveControllers
        where controller.lifecycleState.isVisibleOrAppearing {
            if let restoring = controller as? any StateRestoring { enqueueSave(restoring) }
        }
        flush()
    }

    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        Task { @MainActor [weak self] in
            self?.flushScheduled = false
            self?.flush()
        }
    }

    /// Writes every queued state, and the hierarchy archive of `window` when it changed,
    /// in one transaction. When that fails for a reason that may pass (a full disk, a lock),
    /// everything stays queued for the next flush; when one write can never succeed, it is
    /// reported and dropped, and the rest are written.
    public func flush(archiving window: Window? = nil) {
        if let window, let application = window.application {
            let scene = sceneName(of: window, in: application)
            do {
                let bytes = try makeArchive(of: window).encoded()
                if lastArchives[scene] != bytes { pendingArchives[scene] = bytes } else { pendingArchives[scene] = nil }
            } catch {
                report(.store(error))
            }
        }
        guard !pending.isEmpty || !pendingArchives.isEmpty else { return }
        let paths = pendingOrder.filter { pending[$0] != nil }
        do {
            try write(paths, archives: pendingArchives)
        } catch where error.isTransient {
            report(.store(error))
        } catch {
            // Find the writes that cannot succeed: each alone, then whatever is left together.
            for path in paths {
                do {
                    try write([path], archives: [:])
                } catch where !error.isTransient {
                    report(.store(error))
                    pending[path] = nil
                } catch {
                    report(.store(error))
                }
            }
            do {
                try write(pendingOrder.filter { pending[$0] != nil }, archives: pendingArchives)
            } catch {
                report(.store(error))
            }
        }
    }

    /// One transaction: the queued states at `paths` and `archives`; on success they leave the queue.
    private func write(_ paths: [RestorationPath], archives: [String: Data]) throws(StateStoreError) {
        let writes = paths.compactMap { path in pending[path].map { (path, $0) } }
        guard !writes.isEmpty || !archives.isEmpty else { return }
        let generations = try store.write { (transaction) throws(StateStoreError) -> [Int64] in
            var generations: [Int64] = []
            for (path, write) in writes {
                let result = try transaction.save(
                    encoded: write.bytes, encoding: .json, typeName: write.typeName, version: write.version, for: path
                )
                generations.append(result.wrote ? result.generation : -result.generation)
            }
            for (scene, bytes) in archives {
                try transaction.registerScene(scene, pathPrefix: scene == Window.defaultSceneIdentifier ? "" : scene)
                try transaction.setHierarchyArchive(bytes, scene: scene)
            }
            return generations
        }
        statistics.transactions += 1
        for ((path, write), generation) in zip(writes, generations) {
            for record in [write.record] + write.followers {
                record.seenGeneration = abs(generation)
                record.lastChecksum = write.checksum
            }
            if generation > 0 { statistics.stateWrites += 1 } else { statistics.unchangedSkips += 1 }
            pending[path] = nil
        }
        pendingOrder.removeAll { pending[$0] == nil }
        for (scene, bytes) in archives {
            lastArchives[scene] = bytes
            pendingArchives[scene] = nil
            statistics.archiveWrites += 1
        }
    }

    func lastArchivesForget(_ scene: String) { lastArchives[scene] = nil }

    /// Whether states are waiting to be written.
    public var hasPendingWrites: Bool { !pending.isEmpty }

    // MARK: Restoring

    private func restore<C: StateRestoring>(_ controller: C) {
        guard let path = restorationPath(for: controller) else { return }
        let record = record(for: controller)
        if let queued = pending[path] {
            // The newest bytes for this path are still in memory, written by another instance.
            guard queued.record !== record, !queued.followers.contains(where: { $0 === record }) else { return }
            if apply(bytes: queued.bytes, version: queued.version, checksum: queued.checksum, to: controller,
                     record: record, path: path, quarantineOnFailure: false) {
                pending[path]?.followers.append(record)
            }
            return
        }
        do {
            if let seen = record.seenGeneration {
                guard let generation = try store.generation(at: path), generation > seen else { return }
            }
            guard let stored = try store.state(at: path) else {
                record.seenGeneration = 0
                return
            }
            record.seenGeneration = stored.generation
            guard stored.checksumIsValid else {
                quarantine(path, reason: "its bytes no longer match their checksum")
                return
            }
            apply(bytes: stored.bytes, version: stored.version, checksum: stored.checksum, to: controller,
                  record: record, path: path, quarantineOnFailure: true)
        } catch .stateTooLarge(_, let byteCount, let limit) {
            // Written by another tool past the budget: moved aside unread, never saved over.
            quarantine(path, reason: "it is \(byteCount) bytes, over the \(limit)-byte maximumStateSize")
        } catch {
            report(.store(error))
        }
    }

    /// Decodes (or migrates) `bytes` into `controller`. On failure the stored row is quarantined
    /// when the bytes came from it; bytes still queued by another instance are only reported.
    /// Returns whether the controller took the bytes.
    @discardableResult
    private func apply<C: StateRestoring>(
        bytes: Data, version: Int, checksum: Int64, to controller: C, record: Record, path: RestorationPath,
        quarantineOnFailure: Bool
    ) -> Bool {
        let current = C.restorableStateVersion
        func fail(_ reason: String) -> Bool {
            if quarantineOnFailure { quarantine(path, reason: reason) } else { report(.store(.decodingFailed(path: path, reason: reason))) }
            return false
        }
        guard version <= current else {
            return fail("version \(version) is newer than this build's version \(current) of \(String(reflecting: C.RestorableState.self))")
        }
        do {
            if version == current {
                controller.restorableState = try StateCoding.decode(C.RestorableState.self, from: bytes, at: path)
                record.lastChecksum = checksum
            } else {
                controller.restorableState = try C.migrateRestorableState(from: version, data: bytes)
                statistics.migrations += 1
                record.lastChecksum = nil
            }
            statistics.restores += 1
            return true
        } catch let error as StateStoreError {
            return fail(error.description)
        } catch {
            return fail("migration from version \(version) to \(current) failed: \(error)")
        }
    }

    private func quarantine(_ path: RestorationPath, reason: String) {
        do {
            if try store.quarantine(path, reason: reason) {
                statistics.quarantined += 1
                report(.quarantined(path: path, reason: reason))
            }
        } catch {
            report(.store(error))
        }
    }
}
