import Foundation
import StateStore
import StateStoreSQLite
import StateStoreTesting
import Testing

/// The testing kit's power cut: what the disk could keep, drawn by a seed, relaunched in process.
@MainActor
@Suite("StateStoreTesting: relaunch after a power cut")
struct TestingKitPowerCutTests {
    /// The notes app with a note open, "milk" saved at a flush point, then "milk, eggs" typed.
    func notesWithAFlushPoint(_ temporary: TemporaryStore) throws -> Launch<KitNotesApp> {
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        first.app.list.restorableState.selected = "groceries"
        try first.app.openNote().restorableState.text = "milk"
        first.application.saveVisibleState()
        first.app.note?.restorableState.text = "milk, eggs"
        return first
    }

    /// A flush point syncs what it commits in both modes: whatever the draw, the note it saved
    /// is back, and what was typed after it is gone with the process.
    @Test(arguments: [StateStore.Options.Synchronous.full, .normal])
    func aFlushPointSurvivesEveryDraw(_ synchronous: StateStore.Options.Synchronous) throws {
        for seed in UInt64(1)...8 {
            let temporary = try TemporaryStore(options: .init(synchronous: synchronous))
            let first = try notesWithAFlushPoint(temporary)
            let second = try first.relaunch(after: .powerCut(seed: seed))
            #expect(first.ending == .powerCut(seed: seed))
            #expect(second.app.restored, "seed \(seed)\n\(second)")
            #expect(second.app.note?.restorableState.text == "milk", "seed \(seed)\n\(second)")
            _ = second.app.navigation.popViewController(animated: false)
            #expect(second.app.list.restorableState.selected == "groceries", "seed \(seed)\n\(second)")
        }
    }

    /// A commit after the flush point: `.full` syncs it as it returns, so every draw keeps it;
    /// with `.normal` it sits unsynced in the WAL, and some draws keep it while others lose it,
    /// whole, back to the flush point. The file is never damaged.
    @Test(arguments: [StateStore.Options.Synchronous.full, .normal])
    func aCommitAfterTheFlushPointIsKeptOrLostWhole(_ synchronous: StateStore.Options.Synchronous) throws {
        var outcomes: Set<String> = []
        for seed in UInt64(1)...16 {
            let temporary = try TemporaryStore(options: .init(synchronous: synchronous))
            let first = try notesWithAFlushPoint(temporary)
            try first.store.save(KitNotesApp.Note.State(text: "milk, eggs"), for: "notes/note")
            let second = try first.relaunch(after: .powerCut(seed: seed))
            #expect(try second.store.check().integrity == ["ok"], "seed \(seed)\n\(second)")
            let text = second.app.note?.restorableState.text
            #expect(text == "milk" || text == "milk, eggs", "seed \(seed)\n\(second)")
            outcomes.insert(text ?? "none")
        }
        #expect(outcomes == (synchronous == .full ? ["milk, eggs"] : ["milk", "milk, eggs"]), "\(synchronous)")
    }

    /// The same seed draws the same disk: a failure seen once is seen again with its seed, which
    /// the relaunch's diagnosis names with what the cut did.
    @Test func aSeedDrawsTheSameOutcomeAgainAndTheDiagnosisNamesIt() throws {
        func rows(seed: UInt64) throws -> (rows: [String], diagnosis: String) {
            let temporary = try TemporaryStore(options: .init(synchronous: .normal))
            let first = try notesWithAFlushPoint(temporary)
            for index in 0..<6 {
                first.app.note?.restorableState.text = "line \(index)"
                first.application.saveVisibleState()
            }
            let second = try first.relaunch(after: .powerCut(seed: seed))
            return (try second.store.entries().map { "\($0.path) \($0.byteCount)" }, second.diagnosis)
        }
        let seed = UInt64.random(in: 1...UInt64.max)
        let once = try rows(seed: seed), again = try rows(seed: seed)
        #expect(once.rows == again.rows, "seed \(seed)")
        #expect(
            once.diagnosis.contains(
                "Started after the power cut (seed \(seed)) of the launch before: of the sectors written since their file's last sync,"
            ), "\(once.diagnosis)")
        #expect(ProcessEnding.powerCut != ProcessEnding.powerCut, "each use draws a seed of its own")
    }

    /// Launches of tests running at once each record their own folder: one's power cut leaves
    /// the other's files alone, and that one's process goes on writing.
    @Test func aPowerCutTouchesItsOwnStoreAlone() throws {
        let cut = try TemporaryStore(options: .init(synchronous: .normal))
        let running = try TemporaryStore(options: .init(synchronous: .normal))
        let beside = try running.launch { try KitNotesApp(store: $0) }
        let first = try notesWithAFlushPoint(cut)
        _ = try first.relaunch(after: .powerCut(seed: 3))
        try beside.app.openNote().restorableState.text = "still here"
        beside.application.saveVisibleState()
        let next = try beside.relaunch(after: .kill)
        #expect(next.app.note?.restorableState.text == "still here", "\(next)")
    }

    /// A store the test opened on the file and kept open would keep this process's view of the
    /// file through the cut, which no reboot does: the cut says so instead of relaunching on it.
    @Test func aStoreLeftOpenOnTheFileIsReportedAtTheCut() throws {
        let temporary = try TemporaryStore(options: .init(synchronous: .normal))
        let first = try notesWithAFlushPoint(temporary)
        let look = try temporary.open()
        _ = try look.entries()
        #expect {
            try first.end(.powerCut(seed: 5))
        } throws: { error in
            guard case .powerCutNotRecorded(let folder, let reason)? = error as? StateStoreTestingError else {
                return false
            }
            return folder == temporary.folder && reason.contains("TemporaryStore.open()")
        }
        withExtendedLifetime(look) {}
    }

    struct Sequence: Codable, Sendable {
        var seq: Int
        var padding: String
    }

    /// The VM lane's real power cuts (`scripts/vm-cgroup2`, saves of seq 1, 2, 3 … to seven
    /// paths in turn, each acknowledged when `save` returns, until the virtual machine is
    /// killed) run through the kit's cut, 12 saves and 30 draws a mode. The classes of outcome are the
    /// lane's: with `.full` no acknowledged save is lost; with `.normal` acknowledged saves are
    /// lost in some cuts (every one of the lane's 20), always the newest, so that the seven
    /// paths hold exactly the state after one save; the file always opens whole.
    @Test func theVMLanesSaveLoopHasTheLanesOutcomesUnderTheKitsCut() throws {
        let paths = 7, saves = 12
        for synchronous in [StateStore.Options.Synchronous.full, .normal] {
            var lostCuts = 0, keptCuts = 0
            for seed in UInt64(1)...30 {
                let temporary = try TemporaryStore(options: .init(synchronous: synchronous))
                let first = try temporary.launch { store in
                    let application = Application(store: store)
                    return LaunchedWindow(
                        application: application,
                        window: Window(
                            size: Size(width: 100, height: 100), orientation: .portrait, application: application))
                }
                for seq in 1...saves {
                    try first.store.save(
                        Sequence(seq: seq, padding: String(repeating: "s", count: 200)),
                        for: RestorationPath(validating: "p/\(seq % paths)"))
                }
                let second = try first.relaunch(after: .powerCut(seed: seed))
                let found = try (0..<paths).map {
                    try second.store.restore(Sequence.self, for: RestorationPath(validating: "p/\($0)"))?.seq
                }
                let highest = found.compactMap { $0 }.max() ?? 0
                let expected: [Int?] = (0..<paths).map { index in
                    let seq = highest - ((highest - index) % paths + paths) % paths
                    return seq >= 1 ? seq : nil
                }
                let context = "\(synchronous) seed \(seed): found \(found)\n\(second)"
                #expect(found == expected, "not the state after one save: \(context)")
                #expect(try second.store.check().integrity == ["ok"], "\(context)")
                if synchronous == .full { #expect(highest == saves, "an acknowledged save was lost: \(context)") }
                if highest < saves { lostCuts += 1 } else { keptCuts += 1 }
            }
            if synchronous == .normal {
                #expect(lostCuts > 0 && keptCuts > 0, "normal: \(lostCuts) cuts lost saves, \(keptCuts) kept all")
            }
        }
    }
}
