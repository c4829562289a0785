import MailExample
import StateStore
import StateStoreTesting
import Testing

@testable import mail

/// The terminal app as its process launches it, at a terminal of the test's own (80 × 12)
/// whose screens the test reads, on the test's store and memory.
@MainActor
final class LaunchedTerminalMail: LaunchedApp {
    /// What the app wrote to its terminal, a screen at a time.
    final class Output {
        var screens: [String] = []
    }

    let app: TerminalMailApp
    let output = Output()
    var application: Application { app.application }
    var window: Window { app.window }

    init(store: StateStore, memory: SimulatedMemory) throws {
        let output = self.output
        app = TerminalMailApp(
            store: store, databasePath: store.path, monitor: memory.monitor, terminalSize: { (80, 12) },
            output: { output.screens.append($0) })
        app.application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        try app.launch()
    }

    /// The last screen drawn, as the user reads it: a line a row, without the escape
    /// sequences and the blanks that end each line.
    var screen: [String] {
        var text = "", inEscape = false
        for character in output.screens.last ?? "" {
            if character == "\u{1B}" {
                inEscape = true
            } else if inEscape {
                inEscape = !character.isLetter
            } else {
                text.append(character)
            }
        }
        return text.split(separator: "\r\n", omittingEmptySubsequences: false).map {
            String($0.reversed().drop { $0 == " " }.reversed())
        }
    }

    /// The line at the top under the tabs: the screen's title, and what last happened.
    var titleLine: String { screen.dropFirst().first ?? "" }
    /// The status line at the bottom: size, memory, caches.
    var statusLine: String { screen.last ?? "" }
}

/// The mail app at a terminal: what the user was doing is on screen again at the next launch.
/// Serialized: the app's caches of drawn rows are shared by its instances, as in its process.
@MainActor
@Suite("The mail app at a terminal: its screens come back", .serialized)
struct TerminalMailAppTests {
    /// The screen that takes keys, as the app finds it.
    func front<Screen>(_ launch: Launch<LaunchedTerminalMail>, as type: Screen.Type) throws -> Screen {
        try #require(launch.app.app.front as? Screen, "\(launch)")
    }

    /// Waits until the top line says the draft was saved: the app saves it once typing pauses
    /// (300 ms), on the main queue. Ten seconds at most, counting only the time this wait had
    /// the main actor: tests running in parallel can keep it busy for longer.
    func waitForAutosave(_ launch: Launch<LaunchedTerminalMail>) async throws {
        let clock = ContinuousClock()
        var waited = Duration.zero
        while !launch.app.titleLine.hasSuffix("draft saved") && waited < .seconds(10) {
            let start = clock.now
            try await Task.sleep(for: .milliseconds(20))
            waited += min(clock.now - start, .milliseconds(50))
        }
        #expect(launch.app.titleLine.hasSuffix("draft saved"), "\(launch.app.screen)")
    }

    /// A reply typed at the keyboard survives kill -9 once typing has paused (the autosave),
    /// and the next launch draws it where it was: the sheet over the message it answers.
    @Test func aReplySurvivesKill9OnceTypingPauses() async throws {
        let store = try TemporaryStore()
        let memory = try SimulatedMemory(in: store)
        let launch = try store.launch { try LaunchedTerminalMail(store: $0, memory: memory) }
        #expect(launch.app.app.handle([.down, .down, .enter, .character("r")]))
        #expect(launch.app.titleLine.hasPrefix("Compose › Re: Status report #3"), "\(launch.app.screen)")
        #expect(launch.app.app.handle([.paste("Thanks, Linus.")]))
        try await waitForAutosave(launch)
        // Typed after the pause, and killed before the next one: this is what a kill loses.
        #expect(launch.app.app.handle([.paste(" More soon.")]))

        let relaunched = try launch.relaunch(after: .kill)
        let compose = try front(relaunched, as: ComposeScreen.self)
        #expect(compose.restorableState.body == "Thanks, Linus.", "\(relaunched)")
        #expect(compose.restorableState.inReplyTo == "m-1042")
        let screen = relaunched.app.screen
        #expect(relaunched.app.titleLine.hasPrefix("Compose › Re: Status report #3"), "\(screen)")
        #expect(relaunched.app.titleLine.hasSuffix("restored"), "\(screen)")
        #expect(screen.contains("To: linus@example.com") && screen.contains("Thanks, Linus."), "\(screen)")
        // Under the sheet, the message it answers.
        #expect(relaunched.app.app.handle([.escape]))
        #expect(try front(relaunched, as: MessageScreen.self).restorableState.messageID == "m-1042")
    }

    /// Quitting saves every screen: the next launch draws the message scrolled where it was,
    /// and going back, the inbox with the same row selected.
    @Test func theScreensComeBackAfterQuitting() throws {
        let store = try TemporaryStore()
        let memory = try SimulatedMemory(in: store)
        let launch = try store.launch { try LaunchedTerminalMail(store: $0, memory: memory) }
        #expect(launch.app.app.handle([.down, .down, .down, .enter, .down, .down, .down, .down]))
        #expect(launch.app.titleLine.hasPrefix("Inbox › Status report #4"), "\(launch.app.screen)")
        let before = launch.app.screen

        // What ctrl-q, SIGTERM or SIGINT does: `terminate()`, then the process exits.
        let relaunched = try launch.relaunch(after: .termination)
        #expect(relaunched.app.titleLine.hasSuffix("restored"), "\(relaunched.app.screen)")
        #expect(try front(relaunched, as: MessageScreen.self).restorableState.line == 4)
        // The same screen, but for what last happened.
        #expect(relaunched.app.screen.dropFirst(2) == before.dropFirst(2), "\(relaunched.app.screen)")

        #expect(relaunched.app.app.handle([.left]))
        #expect(relaunched.app.titleLine.hasPrefix("Inbox"), "\(relaunched.app.screen)")
        #expect(relaunched.app.screen.contains { $0.hasPrefix("> Status report #4") }, "\(relaunched.app.screen)")
    }

    /// A critical warning from the memory-pressure monitor empties the caches of drawn rows,
    /// and the app says so on its top line. The redraw that says it wraps the message on
    /// screen again: that entry alone is back, as the status line counts.
    @Test func aCriticalMemoryWarningEmptiesTheCaches() async throws {
        let store = try TemporaryStore()
        let memory = try SimulatedMemory(in: store, configuration: .init(repeatInterval: nil))
        let launch = try store.launch { try LaunchedTerminalMail(store: $0, memory: memory) }
        #expect(launch.app.app.handle([.enter]))
        #expect(TerminalMailApp.rows.count > 0 && TerminalMailApp.wrapped.count > 0)

        let report = try #require(try await memory.raise(to: .critical, for: launch.application))
        #expect(report.level == .critical)
        // Not how much this warning released: the drawn rows' caches are the process's, and a
        // critical warning of a test running meanwhile (while this one waited for its own) may
        // have emptied them first. Empty they are, whichever did.
        #expect(TerminalMailApp.rows.count == 0)
        #expect(
            launch.app.titleLine.contains("memory warning (critical): caches released"), "\(launch.app.screen)")
        #expect(launch.app.statusLine.contains("memory critical · cache 1 entries"), "\(launch.app.screen)")
        try launch.end(.termination)
    }
}
