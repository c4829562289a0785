import Foundation
import StateStore
import StateStoreTesting
import Testing

/// A launch describes itself for a failed expectation: the screens, the rows, the trace.
@MainActor
@Suite("StateStoreTesting: readable failures")
struct TestingKitDiagnosisTests {
    @Test func aLaunchShowsItsScreensRowsAndTrace() throws {
        let temporary = try TemporaryStore()
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        first.app.list.restorableState.selected = "groceries"
        try first.app.openNote().restorableState.text = "milk"
        first.application.saveVisibleState()
        let second = try first.relaunch(after: .kill)
        let text = "\(second)"
        #expect(text.contains("Launch on \(temporary.path), running"), "\(text)")
        #expect(text.contains("Window \"main\" 400x800 portrait, visible, key"), "\(text)")
        #expect(text.contains("NavigationController \"notes\" [appeared]"), "\(text)")
        #expect(text.contains("Note \"note\" [appeared] at "), "\(text)")
        #expect(text.contains(#"state {"text":"milk"}"#), "\(text)")
        // The list is not on screen: it takes its saved state when it next appears.
        #expect(text.contains(#"List "list" [initialized] at notes/list state {}"#), "\(text)")
        #expect(
            text.contains(#"notes/list  StateStoreTests.KitNotesApp.List.State v1  24 B  {"selected":"groceries"}"#))
        #expect(text.contains("Stored states (2):"), "\(text)")
        #expect(text.contains("Quarantine (0):"), "\(text)")
        // The relaunch's restoration, from its first callback.
        #expect(text.contains("Lifecycle trace ("), "\(text)")
        #expect(second.trace.lines.contains("note: viewDidLoad"), "\(second.trace.lines)")
        #expect(text.contains("  note: viewWillAppear(animated: false)"), "\(text)")
        #expect("\(first)".contains("ended by kill -9"))
    }

    /// Describing a launch reads the file as another process would: what the writer holds is
    /// not committed by looking, so a kill after it loses what it would have lost.
    @Test func lookingDoesNotChangeWhatAKillLoses() throws {
        let temporary = try TemporaryStore()
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        first.app.list.restorableState.selected = "groceries"
        first.application.saveVisibleState()
        first.app.list.restorableState.selected = "work"
        try first.app.openNote()  // the list disappears: "work" goes to the writer, held
        let described = first.diagnosis
        #expect(described.contains(#"{"selected":"groceries"}"#), "\(described)")
        let second = try first.relaunch(after: .kill)
        _ = second.app.navigation.popViewController(animated: false)
        #expect(second.app.list.restorableState.selected == "groceries", "\(second)")
    }
}
