import Foundation
import Testing

@testable import StateStore

/// Rows another tool wrote at the columns' extremes: none may hold a path hostage.
@MainActor
@Suite("Hostile rows: a generation that cannot rise")
struct HostileRowTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    /// Sets `path`'s generation with the `sqlite3` tool, as another program would.
    func setGeneration(_ generation: String, of path: String) throws {
        _ = try CLI.tool("sqlite3", [database, "UPDATE states SET generation = \(generation) WHERE path = '\(path)'"])
        #expect(
            try CLI.tool("sqlite3", [database, "SELECT generation FROM states WHERE path = '\(path)'"])
                == "\(generation)\n")
    }

    @Test(arguments: ["9223372036854775807", "9223372036854775806", "9007199254740992"])
    func aSaveOverAGenerationThatCannotRiseLandsAndSetsTheRowAside(generation: String) throws {
        let old = Draft(to: ["a@example.com"], subject: "kept", body: "the old text")
        try StateStore(path: database).save(old, for: "mail/draft")
        let oldBytes = try CLI.tool("sqlite3", [database, "SELECT hex(bytes) FROM states"])
        try setGeneration(generation, of: "mail/draft")

        let store = try StateStore(path: database)
        let new = Draft(to: [], subject: "new", body: "typed after relaunch")
        let result = try store.save(new, for: "mail/draft")
        #expect(result.wrote)
        #expect(result.generation == 1)
        let reason = try #require(result.setAside)
        #expect(reason.contains(generation))
        #expect(try store.restore(Draft.self, for: "mail/draft") == new)
        // The next save rises from 1 as usual.
        #expect(try store.save(Draft(to: [], subject: "newer", body: ""), for: "mail/draft").generation == 2)

        let quarantined = try store.quarantinedStates()
        #expect(quarantined.count == 1)
        #expect(quarantined.first?.reason == reason)
        #expect(quarantined.first?.generation == Int64(generation))
        #expect(try CLI.tool("sqlite3", [database, "SELECT hex(bytes) FROM quarantine"]) == oldBytes)
        #expect(try JSONDecoder.state.decode(Draft.self, from: try #require(quarantined.first?.bytes)) == old)
    }

    @Test func anUnchangedSaveStillFreesThePath() throws {
        let value = Draft(to: [], subject: "same", body: "")
        try StateStore(path: database).save(value, for: "root")
        try setGeneration("9223372036854775807", of: "root")
        let store = try StateStore(path: database)
        let result = try store.save(value, for: "root")
        #expect(result.setAside != nil)
        #expect(try store.generation(at: "root") == 1)
        #expect(try store.save(Draft(to: [], subject: "changed", body: ""), for: "root").generation == 2)
    }

    @Test func anImportOverAGenerationThatCannotRiseSetsTheRowAside() throws {
        try StateStore(path: database).save(Draft(to: [], subject: "old", body: ""), for: "root")
        try setGeneration("9223372036854775807", of: "root")
        let store = try StateStore(path: database)
        let bytes = try JSONEncoder().encode(Draft(to: [], subject: "imported", body: ""))
        let state = StoredState(
            path: "root", typeName: "Draft", version: 1, generation: 7, encoding: .json, updatedAt: Date(), bytes: bytes
        )
        try store.write { (transaction) throws(StateStoreError) in try transaction.insert(verbatim: state) }
        #expect(try store.generation(at: "root") == 7)
        #expect(try store.restore(Draft.self, for: "root")?.subject == "imported")
        #expect(try store.quarantinedStates().map(\.generation) == [Int64.max])
        #expect(try store.check().exhaustedGenerations.isEmpty)
    }

    @Test(arguments: [false, true])
    func theNextDisappearanceLandsAndTheErrorIsReported(writesBehind: Bool) throws {
        let storyboard = Storyboard()
        storyboard.register("nav") { NavigationController() }
        storyboard.register("a") { NoteController() }
        storyboard.register("b") { NoteController() }
        try StateStore(path: database).save(NoteController.State(text: "from last time", edits: 1), for: "nav/a")
        try setGeneration("9223372036854775807", of: "nav/a")

        let store = try StateStore(path: database)
        let application = Application(store: store, storyboard: storyboard)
        let coordinator = try #require(application.restorationCoordinator)
        coordinator.writesBehind = writesBehind
        var errors: [RestorationError] = []
        coordinator.errorHandler = { errors.append($0) }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = try #require(
            try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
        navigation.setViewControllers([try storyboard.instantiateViewController(withIdentifier: "a")], animated: false)
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        let note = try #require(navigation.topViewController as? NoteController)
        #expect(note.restorableState.text == "from last time")

        note.restorableState.text = "typed after relaunch"
        navigation.pushViewController(try storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        // A read through the store waits for the write: the new text is there.
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "typed after relaunch")
        #expect(try store.generation(at: "nav/a") == 1)
        coordinator.flush()
        let reported = errors.compactMap { error -> String? in
            if case .quarantined(let path, let reason) = error, path == "nav/a" { return reason }
            return nil
        }
        #expect(reported.count == 1)
        #expect(reported.first?.contains("9223372036854775807") == true)
        let kept = try store.quarantinedStates()
        #expect(kept.count == 1)
        #expect(
            try JSONDecoder.state.decode(NoteController.State.self, from: try #require(kept.first?.bytes)).text
                == "from last time")
        // Reported once: more disappearances save normally.
        _ = navigation.popViewController(animated: false)
        note.restorableState.text = "again"
        navigation.pushViewController(try storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        coordinator.flush()
        #expect(errors.count == 1)
        #expect(try store.generation(at: "nav/a") == 2)
    }
}

extension JSONDecoder {
    /// The store's decoder settings (dates as milliseconds).
    static var state: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}
