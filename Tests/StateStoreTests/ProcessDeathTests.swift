import Foundation
import Testing

@testable import StateStore

/// The engine's simulated process death (`StateStore.simulateProcessDeath()`,
/// `Application.simulateProcessDeath()`) and held write-behind work, on which the testing kit's
/// relaunch after a kill rests: what they leave is what a killed process leaves.
@MainActor
@Suite("Process death, simulated in process")
struct ProcessDeathTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    func walSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? -1
    }

    /// Committed saves stay in the WAL, not checkpointed, as after a kill; the file is no longer
    /// open in the process (another process, closing it as the last connection, checkpoints it
    /// and removes the WAL, which it would not do while SQLite's locks were still held here);
    /// the dead object throws on every use, and writes nothing.
    @Test func aDeadStoreClosesWithoutACheckpointAndLetsGoOfTheFile() throws {
        let store = try StateStore(path: database)
        try store.save("kept", for: "root")
        #expect(OpenDatabaseFiles.contains(database))
        store.simulateProcessDeath()
        #expect(store.simulatedProcessHasDied)
        #expect(!OpenDatabaseFiles.contains(database))
        #expect(walSize(database) > 32, "the committed save should still be in the WAL")
        do {
            _ = try store.restore(String.self, for: "root")
            Issue.record("a dead store answered a read")
        } catch {
            guard case .sqlite(let failure) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failure.extendedResultCode == .misuse)
            #expect(failure.message.contains("a process that has ended"), "\(failure.message)")
        }
        #expect(throws: StateStoreError.self) { try store.save("lost", for: "root") }
        store.simulateProcessDeath()  // again: nothing more

        #expect(try statesCountedElsewhere(database) == 1)
        #expect(!FileManager.default.fileExists(atPath: database + "-wal"))
        #expect(try StateStore(path: database).restore(String.self, for: "root") == "kept")
    }

    /// A held queue runs its jobs only when someone waits for it; a dead one never runs what it
    /// held, nor what it is handed later, and counts none of it as work.
    @Test func heldWorkRunsWhenWaitedForAndNeverAfterDeath() throws {
        let store = try StateStore(path: database)
        store.holdsWriteBehind = true
        let ran = LockHeld()
        store.submitWriteBehind { ran.flag.store(true, ordering: .sequentiallyConsistent) }
        usleep(100_000)
        let ranBeforeWaiting = ran.flag.load(ordering: .sequentiallyConsistent)
        #expect(!ranBeforeWaiting, "a held job ran on the writer's thread")
        #expect(store.hasWriteBehindWork)
        store.waitForWriteBehind()
        let ranOnceWaitedFor = ran.flag.load(ordering: .sequentiallyConsistent)
        #expect(ranOnceWaitedFor)

        let never = LockHeld()
        store.submitWriteBehind { never.flag.store(true, ordering: .sequentiallyConsistent) }
        store.simulateProcessDeath()
        store.submitWriteBehind { never.release.store(true, ordering: .sequentiallyConsistent) }
        store.waitForWriteBehind()
        #expect(!store.hasWriteBehindWork)
        let heldJobRan = never.flag.load(ordering: .sequentiallyConsistent)
        let laterJobRan = never.release.load(ordering: .sequentiallyConsistent)
        #expect(!heldJobRan && !laterJobRan)
    }

    /// An application that dies loses what its writer had not committed and nothing before the
    /// last flush point; its scene is free at once; it is no longer the current application.
    @Test func anApplicationThatDiesKeepsTheLastFlushPointAndLetsItsSceneGo() throws {
        let store = try StateStore(path: database)
        store.holdsWriteBehind = true
        let storyboard = Storyboard()
        storyboard.register("nav") { NavigationController() }
        storyboard.register("a") { NoteController() }
        storyboard.register("b") { NoteController() }
        let application = Application(store: store, storyboard: storyboard)
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = try #require(
            try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
        let note = try #require(try storyboard.instantiateViewController(withIdentifier: "a") as? NoteController)
        navigation.setViewControllers([note], animated: false)
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        note.restorableState.text = "flushed"
        application.saveVisibleState()
        note.restorableState.text = "handed over, not committed"
        navigation.pushViewController(try storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        let scene = window.sceneIdentifier
        #expect(try store.sceneHolder(of: scene)?.isThisProcess == true)
        #expect(Application.current === application)

        application.simulateProcessDeath()
        #expect(store.simulatedProcessHasDied)
        #expect(Application.current == nil)
        let next = try StateStore(path: database)
        #expect(try next.sceneHolder(of: scene) == nil, "the dead application's scene is still claimed")
        #expect(try next.restore(NoteController.State.self, for: "nav/a")?.text == "flushed")
        let archive = try HierarchyArchive(decoding: try #require(try next.hierarchyArchive()))
        #expect(archive.root?.children.count == 1, "the push was never committed: one screen")

        // Driven after its death, the application writes nothing.
        _ = navigation.popViewController(animated: false)
        application.terminate()
        #expect(try next.restore(NoteController.State.self, for: "nav/a")?.text == "flushed")
    }
}
