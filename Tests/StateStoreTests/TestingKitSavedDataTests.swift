import Foundation
import StateStore
import StateStoreTesting
import Testing

/// Three releases of a one-screen notes app, as an app's tests would keep them: the first saved
/// a note as its text alone (version 1), the third splits it into a title and a body and adds a
/// pin (version 3, migrating version 1), and a careless fourth changed `pinned` to a number
/// without bumping the version.
@MainActor
enum NotesReleases {
    final class NoteV1: ViewController, StateRestoring {
        struct State: Codable, Sendable { var text = "" }
        var restorableState = State()
    }

    final class NoteV3: ViewController, StateRestoring {
        struct State: Codable, Sendable, Equatable {
            var title = ""
            var body = ""
            var pinned = false
        }
        var restorableState = State()
        static var restorableStateVersion: Int { 3 }

        static func migrateRestorableState(from version: Int, data: Data) throws -> State {
            guard version == 1 else {
                throw RestorationError.noMigration(type: "NoteV3.State", from: version, to: 3)
            }
            let old = try JSONDecoder().decode(NoteV1.State.self, from: data)
            let lines = old.text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            return State(title: String(lines[0]), body: lines.count > 1 ? String(lines[1]) : "", pinned: false)
        }
    }

    final class NoteV4: ViewController, StateRestoring {
        struct State: Codable, Sendable, Equatable {
            var title = ""
            var body = ""
            var pinned = 0
        }
        var restorableState = State()
        static var restorableStateVersion: Int { 3 }
    }

    /// A release's launch: the note as the only screen, restored or new.
    static func launch<Note: ViewController>(
        _ make: @escaping @MainActor () -> Note, on store: StateStore
    ) throws
        -> LaunchedWindow
    {
        let storyboard = Storyboard()
        storyboard.register("note") { make() }
        let application = Application(store: store, storyboard: storyboard)
        application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        let window = Window(size: Size(width: 400, height: 800), application: application)
        if try !application.restoreHierarchy(in: window) {
            window.rootViewController = try storyboard.instantiateViewController(withIdentifier: "note")
            window.makeKeyAndVisible()
        }
        return LaunchedWindow(application: application, window: window)
    }

    /// The file the first release left: a note typed, then the app terminated.
    static func firstReleaseFile(text: String) throws -> TemporaryStore {
        let first = try TemporaryStore("firstRelease")
        let launch = try first.launch { try NotesReleases.launch({ NoteV1() }, on: $0) }
        try #require(launch.window.rootViewController as? NoteV1).restorableState.text = text
        try launch.end(.termination)
        return first
    }
}

/// Launching from data an earlier release saved: a database copied, or an export imported.
@MainActor
@Suite("StateStoreTesting: launch from saved data")
struct TestingKitSavedDataTests {
    @Test func aDatabaseFromTheFirstReleaseOpensMigratedInTheThird() throws {
        let first = try NotesReleases.firstReleaseFile(text: "Groceries\nmilk, eggs")
        let store = try TemporaryStore(copying: first.path)
        #expect(store.path != first.path)
        let launch = try store.launch { try NotesReleases.launch({ NotesReleases.NoteV3() }, on: $0) }
        let note = try #require(launch.window.rootViewController as? NotesReleases.NoteV3)
        #expect(note.restorableState == .init(title: "Groceries", body: "milk, eggs", pinned: false))
        // Saved again at version 3 once it leaves the screen: the next launch reads it as is.
        note.restorableState.pinned = true
        let next = try launch.relaunch(after: .termination)
        let saved = try #require(try next.store.entries().first)
        #expect(saved.version == 3)
        #expect(
            try #require(next.window.rootViewController as? NotesReleases.NoteV3).restorableState.pinned == true)
        // The fixture itself was never opened by the launch: still the first release's.
        #expect(try first.open().entries().first?.version == 1)
    }

    @Test func aStateWhoseTypeChangedIsKeptInQuarantineNotLost() throws {
        let first = try NotesReleases.firstReleaseFile(text: "Groceries\nmilk")
        let third = try TemporaryStore(copying: first.path)
        let launch = try third.launch { try NotesReleases.launch({ NotesReleases.NoteV3() }, on: $0) }
        try launch.end(.termination)

        // The fourth release reads `pinned` as a number, at the same version: it cannot decode
        // the third's row, starts from its default, and the row waits in quarantine.
        let fourth = try TemporaryStore(copying: third.path)
        let broken = try fourth.launch { try NotesReleases.launch({ NotesReleases.NoteV4() }, on: $0) }
        let note = try #require(broken.window.rootViewController as? NotesReleases.NoteV4)
        #expect(note.restorableState == .init())
        let quarantined = try broken.store.quarantinedStates()
        #expect(quarantined.count == 1)
        let kept = try #require(quarantined.first)
        #expect(kept.version == 3)
        let json = try #require(try JSONSerialization.jsonObject(with: kept.bytes) as? [String: Any])
        #expect(json["title"] as? String == "Groceries" && json["pinned"] as? Bool == false)
        try broken.end(.termination)
    }

    @Test func anExportFromTheFirstReleaseIsImportedAndMigrated() throws {
        let first = try NotesReleases.firstReleaseFile(text: "Work\nthe report")
        let export = first.folder + "/export.json"
        try StateExport(store: try first.open()).encoded().write(to: URL(fileURLWithPath: export))
        let store = try TemporaryStore(importing: export)
        #expect(try store.open().entries().map(\.version) == [1])
        // No hierarchy in an export: the first screen is built, and restores its state by path.
        let launch = try store.launch { try NotesReleases.launch({ NotesReleases.NoteV3() }, on: $0) }
        let note = try #require(launch.window.rootViewController as? NotesReleases.NoteV3)
        #expect(note.restorableState == .init(title: "Work", body: "the report", pinned: false))
        try launch.end(.termination)
    }

    @Test func aMissingOrMalformedFixtureIsAClearError() throws {
        #expect(throws: StateStoreTestingError.self) { try TemporaryStore(copying: "/nonexistent/state.sqlite") }
        #expect(throws: StateStoreTestingError.self) { try TemporaryStore(importing: "/nonexistent/export.json") }
        let folder = try TemporaryStore()
        let garbage = folder.folder + "/garbage.json"
        try Data("{\"schema\": 1, \"kind\": \"export\"".utf8).write(to: URL(fileURLWithPath: garbage))
        #expect(throws: StateExport.DocumentError.self) { try TemporaryStore(importing: garbage) }
    }
}
