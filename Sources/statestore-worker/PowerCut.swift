import Foundation
import StateStore
import StateStoreCrashVFS

/// `statestore-worker power-cut MODE POINTS SEED FOLDER`: simulated power cuts under SQLite
/// (see `StateStoreCrashVFS`), and what survives each.
///
/// MODE is `full` or `normal` (`synchronous`), each alone (`full`, `normal`: the store's
/// own saves, one commit each) or with the write-behind writer (`full-writebehind`,
/// `normal-writebehind`: an application's disappearances and flush points). The workload is
/// the same at every point; point i of P cuts the power at its operation `1 + i·N/P` (N: the
/// workload's writes, truncates and syncs, counted in a run without a cut), with the seed
/// `SEED + i` for what the cut keeps, drops and tears. After each cut the files are opened
/// again, without the VFS, and checked:
///
/// - the database opens (`StateStore(path:)`; else `openOrRecover` is tried, and counted);
/// - `integrity_check` passes and every row's checksum holds;
/// - what is there is the state after some prefix of the commits (never a later commit
///   without an earlier one): the rows and quarantine equal the model after commit k;
///   with the write-behind writer, the steps and the hierarchy archive are from one commit;
/// - with `full`, k covers every commit that returned (every flush point passed).
///
/// Prints one line of figures (`power-cut mode=… points=… cuts=… acknowledged=… lost=…
/// violations=…`) and, for each violation, a line with its point and seed; exits 1 when
/// there was one.
enum PowerCut {
    struct Figures {
        var points = 0, cuts = 0, opened = 0, recovered = 0, acknowledged = 0, lost = 0, lostPoints = 0
        var sectorsDropped = 0, sectorsTorn = 0, entriesUndone = 0
        var violations: [String] = []
    }

    struct Value: Codable, Sendable {
        var seq: Int
        var padding: String
    }

    /// The database's content as the checks compare it: each path's sequence number, and the
    /// quarantined paths.
    struct Content: Equatable, CustomStringConvertible {
        var states: [String: Int] = [:]
        var quarantined: [String] = []
        var description: String {
            let rows = states.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "[\(rows)] quarantine [\(quarantined.joined(separator: " "))]"
        }
    }

    struct Failure: Error { var message: String }

    /// The last store a workload opened, held weakly: the workload must have closed it (every
    /// connection of the session gone) before the files are read.
    final class LastStore: @unchecked Sendable {
        weak var store: StateStore?
    }

    static func run(mode: String, points: Int, seed: UInt64, folder: String) -> Never {
        let synchronous: StateStore.Options.Synchronous
        switch mode {
        case "full", "full-writebehind": synchronous = .full
        case "normal", "normal-writebehind": synchronous = .normal
        default: fail("power-cut: MODE is full, normal, full-writebehind or normal-writebehind")
        }
        let writeBehind = mode.hasSuffix("-writebehind")
        guard statestore_crashvfs_register(1) == 0 else { fail("power-cut: the crash VFS could not be registered") }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)

        // A run without a cut counts the workload's operations (and checks the checks).
        let dry = folder + "/dry"
        try? FileManager.default.removeItem(atPath: dry)
        var figures = Figures()
        let total: Int
        do {
            total = try MainActor.assumeIsolated { () throws -> Int in
                try point(
                    writeBehind: writeBehind, synchronous: synchronous, folder: dry, crashAt: 0, seed: seed,
                    figures: &figures)
            }
        } catch {
            fail("power-cut: the run without a cut failed: \((error as? Failure)?.message ?? "\(error)")")
        }
        guard total > 0 else { fail("power-cut: the workload did no I/O the VFS could see") }
        try? FileManager.default.removeItem(atPath: dry)
        figures = Figures()

        // The points spread evenly over the workload's operations (each one cut about
        // POINTS / N times, with a different seed each time); the last cuts after the workload
        // ended (-1): its last unsynced writes and folder entries are still undecided then.
        func crashAt(_ index: Int) -> Int { index == points - 1 ? -1 : 1 + index * total / max(points, 1) }
        for index in 0..<points {
            let directory = folder + "/point-\(index)"
            let pointSeed = seed &+ UInt64(index)
            do {
                _ = try MainActor.assumeIsolated { () throws -> Int in
                    try point(
                        writeBehind: writeBehind, synchronous: synchronous, folder: directory,
                        crashAt: crashAt(index), seed: pointSeed, figures: &figures
                    )
                }
                try? FileManager.default.removeItem(atPath: directory)
            } catch {
                // The files stay for a look.
                figures.violations.append(
                    "violation point=\(index) crash-at=\(crashAt(index)) seed=\(pointSeed) folder=\(directory): \((error as? Failure)?.message ?? "\(error)")"
                )
            }
            figures.points += 1
        }
        emit(
            "power-cut mode=\(mode) points=\(figures.points) operations=\(total) cuts=\(figures.cuts) opened=\(figures.opened) "
                + "recovered=\(figures.recovered) acknowledged=\(figures.acknowledged) lost=\(figures.lost) "
                + "lost-points=\(figures.lostPoints) sectors-dropped=\(figures.sectorsDropped) "
                + "sectors-torn=\(figures.sectorsTorn) entries-undone=\(figures.entriesUndone) violations=\(figures.violations.count)"
        )
        for line in figures.violations.prefix(20) { emit(line) }
        exit(figures.violations.isEmpty ? 0 : 1)
    }

    /// One point: the workload in a fresh folder, cut at operation `crashAt` (0: never; -1:
    /// once the workload has ended), then checked.
    /// Returns the number of operations the VFS counted.
    @MainActor
    static func point(
        writeBehind: Bool, synchronous: StateStore.Options.Synchronous, folder: String, crashAt: Int, seed: UInt64,
        figures: inout Figures
    ) throws -> Int {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database = folder + "/state.sqlite"
        statestore_crashvfs_begin(folder, seed, Int64(max(crashAt, 0)), STATESTORE_CRASH_RANDOM)
        let outcome: Outcome
        if writeBehind {
            outcome = StepWorkload.run(database: database, synchronous: synchronous)
        } else {
            outcome = StoreWorkload.run(database: database, synchronous: synchronous)
        }
        // A cut meant for after the workload, or for an operation this run did not reach (the
        // writer's batching makes its count vary): the power goes now, the workload done.
        if crashAt != 0 { statestore_crashvfs_crash_now() }
        let stats = statestore_crashvfs_stats()
        // Every connection of the session closed: the files are read by a fresh one, which
        // recovers the WAL as after a reboot (an open one would share this process's view).
        let stillOpen = statestore_crashvfs_open_files()
        statestore_crashvfs_end()
        guard outcome.released, stillOpen == 0 else {
            throw Failure(message: "the workload left \(stillOpen) file(s) open (store released: \(outcome.released))")
        }
        // (Recorded only when the call failed before any cut.)
        if let error = outcome.unexpectedError {
            throw Failure(message: "failed without a cut: \(error)")
        }
        if stats.crashed != 0 {
            figures.cuts += 1
            figures.sectorsDropped += Int(stats.sectors_dropped)
            figures.sectorsTorn += Int(stats.sectors_torn)
            figures.entriesUndone += Int(stats.entries_vanished + stats.entries_restored)
        }

        // What survived, read without the VFS.
        let store: StateStore
        do {
            store = try StateStore(path: database, options: .init(synchronous: synchronous, backgroundCheck: .off))
            figures.opened += 1
        } catch {
            let recovered = try? StateStore.openOrRecover(path: database)
            if recovered?.recovery != nil { figures.recovered += 1 }
            throw Failure(
                message: "the database does not open after the cut: \(error)"
                    + (recovered?.recovery != nil ? " (openOrRecover moved it aside)" : ""))
        }
        let health = try store.check()
        guard health.integrity == ["ok"] else { throw Failure(message: "integrity_check: \(health.integrity)") }
        guard health.checksumMismatches.isEmpty else {
            throw Failure(message: "checksums do not hold: \(health.checksumMismatches)")
        }
        let found = try outcome.read(store)
        let matches = outcome.commits.indices.filter { outcome.commits[$0] == found }
        guard let commit = matches.last else {
            throw Failure(
                message:
                    "\(found) is not the state after any prefix of the commits (\(outcome.commits.count - 1) commits, \(outcome.acknowledged) returned)"
            )
        }
        if commit < outcome.durable {
            throw Failure(
                message:
                    "a flush point or synchronize() was lost: commit \(commit) survived, \(outcome.durable) were made durable: \(found)"
            )
        }
        if synchronous == .full && !writeBehind && commit < outcome.acknowledged {
            throw Failure(
                message:
                    "with synchronous=FULL, commit \(commit) of \(outcome.acknowledged) acknowledged survived: \(found)"
            )
        }
        if ProcessInfo.processInfo.environment["STATESTORE_POWER_CUT_VERBOSE"] != nil {
            emit(
                "point crash-at=\(crashAt) commit=\(commit) acknowledged=\(outcome.acknowledged) of \(outcome.commits.count - 1) dropped=\(stats.sectors_dropped) torn=\(stats.sectors_torn) kept=\(stats.sectors_kept) undone=\(stats.entries_vanished + stats.entries_restored)"
            )
        }
        figures.acknowledged += outcome.acknowledged
        if commit < outcome.acknowledged {
            figures.lost += outcome.acknowledged - commit
            figures.lostPoints += 1
        }
        return Int(stats.operations)
    }

    /// What a workload did: the content after each commit (index 0: none yet; the last one may
    /// be the commit the cut interrupted), how many returned, and how to read the database.
    struct Outcome {
        var commits: [Content] = [Content()]
        /// Commits that returned (the store's saves), or changes handed to the writer (an
        /// application's disappearances).
        var acknowledged = 0
        /// Commits a flush point or `synchronize()` made durable: they must survive every cut.
        var durable = 0
        var released = true
        var unexpectedError: String?
        var read: (StateStore) throws -> Content = { _ in Content() }
    }
}

/// The store's own saves: one commit per call, over every kind of write the store makes.
private enum StoreWorkload {
    typealias Value = PowerCut.Value

    static func run(database: String, synchronous: StateStore.Options.Synchronous) -> PowerCut.Outcome {
        var outcome = PowerCut.Outcome()
        outcome.read = { store in
            var content = PowerCut.Content()
            for state in try store.states() {
                let value = try JSONDecoder().decode(Value.self, from: state.bytes)
                content.states[state.path.rawValue] = value.seq
            }
            content.quarantined = try store.quarantinedStates().map(\.path.rawValue).sorted()
            return content
        }
        let last = PowerCut.LastStore()
        do {
            try steps(database: database, synchronous: synchronous, outcome: &outcome, last: last)
        } catch {
            if statestore_crashvfs_stats().crashed == 0 { outcome.unexpectedError = "\(error)" }
        }
        outcome.released = last.store == nil
        return outcome
    }

    /// Records a commit about to be made (the cut may keep it even if the call fails), makes
    /// it, and counts it as acknowledged when the call returned.
    static func commit(
        _ outcome: inout PowerCut.Outcome, _ change: (inout PowerCut.Content) -> Void, _ body: () throws -> Void
    ) throws {
        var next = outcome.commits[outcome.commits.count - 1]
        change(&next)
        outcome.commits.append(next)
        try body()
        outcome.acknowledged = outcome.commits.count - 1
    }

    /// Letters that do not compress (so a state takes as many pages as its size says), in
    /// seven variants made once: consecutive saves to a path change every one of its pages.
    static let noise: [String] = (0..<7).map { variant in
        var state = UInt64(variant + 1) &* 6364136223846793005 &+ 1442695040888963407
        var scalars = String.UnicodeScalarView()
        for _ in 0..<60_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            scalars.append(Unicode.Scalar(UInt8(97 + (state >> 33) % 26)))
        }
        return String(scalars)
    }

    static func steps(
        database: String, synchronous: StateStore.Options.Synchronous, outcome: inout PowerCut.Outcome,
        last: PowerCut.LastStore
    ) throws {
        // No check after open: the workload must do the same I/O at every point, and a check
        // thread would read through the VFS on its own timing.
        let options = StateStore.Options(synchronous: synchronous, backgroundCheck: .off)
        var seq = 0
        func save(_ store: StateStore, _ path: String, padding: Int = 40) throws {
            seq += 1
            let value = Value(seq: seq, padding: String(Self.noise[seq % Self.noise.count].prefix(padding)))
            try commit(&outcome, { $0.states[path] = value.seq }) {
                try store.save(value, for: RestorationPath(validating: path))
            }
        }
        // Opening and migrating a new file, then saves of small states.
        var store: StateStore? = try StateStore(path: database, options: options)
        last.store = store
        for index in 0..<10 { try save(store!, "screen/\(index % 4)") }
        try save(store!, "old/a")
        try save(store!, "old/b")
        // Two rows in one transaction.
        for _ in 0..<3 {
            seq += 1
            let value = Value(seq: seq, padding: "")
            try commit(
                &outcome,
                {
                    $0.states["pair/a"] = value.seq
                    $0.states["pair/b"] = value.seq
                }
            ) {
                try store!.write { (transaction) throws(StateStoreError) in
                    try transaction.save(value, for: "pair/a")
                    try transaction.save(value, for: "pair/b")
                }
            }
        }
        // Quarantine.
        try commit(
            &outcome,
            {
                $0.states["screen/1"] = nil
                $0.quarantined = ($0.quarantined + ["screen/1"]).sorted()
            }
        ) {
            _ = try store!.quarantine("screen/1", reason: "set aside by the power-cut workload")
        }
        // A relaunch: the close checkpoints and removes the WAL, the open makes a new one.
        store = nil
        store = try StateStore(path: database, options: options)
        last.store = store
        // States over several pages, so a cut can tear one.
        for index in 0..<6 { try save(store!, "large/\(index % 3)", padding: 9_000) }
        // A removal and a prune (`statectl prune`'s transaction).
        try commit(&outcome, { $0.states["screen/2"] = nil }) { _ = try store!.remove("screen/2") }
        try commit(
            &outcome,
            {
                $0.states["old/a"] = nil
                $0.states["old/b"] = nil
            }
        ) {
            _ = try store!.write { (transaction) throws(StateStoreError) in try transaction.removeEntries(under: "old")
            }
        }
        // An import of two states in one transaction.
        let source = try StateStore.inMemory()
        seq += 1
        let imported = seq
        try source.save(Value(seq: imported, padding: ""), for: "imported/a")
        try source.save(Value(seq: imported, padding: ""), for: "imported/b")
        let export = StateExport(states: try source.states())
        try commit(
            &outcome,
            {
                $0.states["imported/a"] = imported
                $0.states["imported/b"] = imported
            }
        ) {
            _ = try store!.importStates(export)
        }
        // Everything so far, made to survive a power cut in either mode.
        try store!.synchronize()
        outcome.durable = outcome.acknowledged
        // Enough saves to pass SQLite's automatic checkpoint (1,000 pages of WAL).
        for index in 0..<70 { try save(store!, "large/\(index % 5)", padding: 60_000) }
        store = nil
        store = try StateStore(path: database, options: options)
        last.store = store
        try save(store!, "screen/0")
        store = nil
    }
}

/// An application's disappearances, written behind the main thread, with flush points.
private enum StepWorkload {
    typealias StepController = StepApp.StepController

    /// A list screen pushes and pops a detail screen; both carry the step. Each push and each
    /// pop is one commit (the step's state with the archive of the screens then shown), so
    /// the commits are, for step i: (list i, detail i-1, two screens), (list i, detail i, one).
    @MainActor
    static func run(database: String, synchronous: StateStore.Options.Synchronous) -> PowerCut.Outcome {
        var outcome = PowerCut.Outcome()
        let steps = 14
        // The window shown: an archive of the list alone, no state yet.
        var shown = PowerCut.Content()
        shown.states = ["screens": 1]
        outcome.commits.append(shown)
        for step in 1...steps {
            var push = PowerCut.Content()
            push.states = ["list": step, "detail": step - 1, "screens": 2]
            var pop = PowerCut.Content()
            pop.states = ["list": step, "detail": step, "screens": 1]
            outcome.commits += [push, pop]
        }
        outcome.read = { store in
            var content = PowerCut.Content()
            if let list = try store.restore(StepController.State.self, for: "nav/list") {
                content.states["list"] = list.step
            }
            if let detail = try store.restore(StepController.State.self, for: "nav/detail") {
                content.states["detail"] = detail.step
            }
            if let data = try store.hierarchyArchive() {
                let archive = try HierarchyArchive(decoding: data)
                content.states["screens"] = archive.root?.children.count ?? 0
            }
            // Before the first push's commit the detail has no row: step 0, as the model says.
            if content.states["list"] != nil && content.states["detail"] == nil { content.states["detail"] = 0 }
            return content
        }
        let last = PowerCut.LastStore()
        do {
            let store = try StateStore(path: database, options: .init(synchronous: synchronous, backgroundCheck: .off))
            last.store = store
            let app = try StepApp(store: store)
            let padding = String(repeating: "x", count: 6_000)
            for step in 1...steps {
                try app.step(step, padding: padding)
                if statestore_crashvfs_stats().crashed == 0 { outcome.acknowledged = 1 + 2 * step }
                if step % 3 == 0 {
                    // A flush point: both of the step's commits are in and synced, unless
                    // the cut came first.
                    app.application.saveVisibleState()
                    if statestore_crashvfs_stats().crashed == 0 { outcome.durable = 1 + 2 * step }
                }
            }
            app.application.terminate()
        } catch {
            if statestore_crashvfs_stats().crashed == 0 { outcome.unexpectedError = "\(error)" }
        }
        outcome.released = last.store == nil
        return outcome
    }
}
