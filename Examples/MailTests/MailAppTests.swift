import MailExample
import StateStore
import StateStoreTesting
import Testing

/// The mail app as its process launches it (`MailApp.start`), on the test's store and memory:
/// the termination handlers are left out, the kit ends the launch.
///
/// An app's own test target conforms its launch type in one line, `extension MailApp:
/// LaunchedApp {}`; this package's other tests, linked into the same test binary, already
/// declare that conformance, so these wrap the app instead.
@MainActor
final class LaunchedMail: LaunchedApp {
    let mail: MailApp
    var application: Application { mail.application }
    var window: Window { mail.window }

    init(store: StateStore, memory: SimulatedMemory? = nil) throws {
        mail = MailApp(store: store, memoryMonitor: memory?.monitor)
        mail.application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
        try mail.launch()
    }
}

/// What the user of the mail app left is what the next launch shows: after kill -9, after a
/// termination, after a memory warning.
@MainActor
@Suite("The mail app: what the user left comes back")
struct MailAppTests {
    /// Opens a message and replies to it, typing `body`.
    func reply(in mail: MailApp, to message: MailMessage, body: String) throws {
        try mail.open(message)
        try mail.reply()
        let compose = try #require(mail.compose)
        compose.type(to: message.from, subject: "Re: \(message.subject)", body: body)
    }

    /// A reply typed, then saved at a flush point (what is visible), then kill -9: the next
    /// launch shows the draft, over the message it answers.
    @Test func theComposeDraftSurvivesKill9() throws {
        let store = try TemporaryStore()
        let launch = try store.launch { try LaunchedMail(store: $0) }
        #expect(!launch.app.mail.restored)
        try reply(in: launch.app.mail, to: MailMessage.mailbox[7], body: "Hello, Grace")
        launch.application.saveVisibleState()

        let relaunched = try launch.relaunch(after: .kill)
        let mail = relaunched.app.mail
        #expect(mail.restored, "\(relaunched)")
        let compose = try #require(mail.compose, "\(relaunched)")
        #expect(compose.restorableState.to == "grace@example.com")
        #expect(compose.restorableState.subject == "Re: Status report #8")
        #expect(compose.restorableState.body == "Hello, Grace")
        #expect(compose.editor.text == "Hello, Grace")
        #expect(mail.message?.restorableState.messageID == "m-1047", "\(relaunched)")
    }

    /// A reply saved at a flush point, then the power goes: a flush point syncs what it
    /// commits, so whatever the disk kept of the rest (eight draws, with the app's default
    /// `synchronous: .normal`), the draft comes back over its message.
    @Test(arguments: UInt64(1)...8)
    func theComposeDraftSurvivesAPowerCut(seed: UInt64) throws {
        let store = try TemporaryStore()
        let launch = try store.launch { try LaunchedMail(store: $0) }
        try reply(in: launch.app.mail, to: MailMessage.mailbox[7], body: "Hello, Grace")
        launch.application.saveVisibleState()
        launch.app.mail.compose?.type(to: "grace@example.com", subject: "Re: Status report #8", body: "Hello, Grace!")

        let relaunched = try launch.relaunch(after: .powerCut(seed: seed))
        let compose = try #require(relaunched.app.mail.compose, "\(relaunched)")
        #expect(compose.restorableState.body == "Hello, Grace", "\(relaunched)")
        #expect(relaunched.app.mail.message?.restorableState.messageID == "m-1047", "\(relaunched)")
    }

    /// What a kill -9 loses, at worst: what was typed since the last flush point. The draft
    /// comes back as it was saved.
    @Test func aKillLosesOnlyWhatWasTypedSinceTheLastSave() throws {
        let store = try TemporaryStore()
        let launch = try store.launch { try LaunchedMail(store: $0) }
        try reply(in: launch.app.mail, to: MailMessage.mailbox[7], body: "Hello")
        launch.application.saveVisibleState()
        launch.app.mail.compose?.type(to: "grace@example.com", subject: "Re: Status report #8", body: "Hello, and more")

        let relaunched = try launch.relaunch(after: .kill)
        #expect(relaunched.app.mail.compose?.restorableState.body == "Hello", "\(relaunched)")
    }

    /// A termination (quitting, SIGTERM) saves what is visible, the editor's text not yet
    /// committed into the draft included: the compose controller commits it as it disappears.
    @Test func aTerminationKeepsTheTextInTheEditor() throws {
        let store = try TemporaryStore()
        let launch = try store.launch { try LaunchedMail(store: $0) }
        try reply(in: launch.app.mail, to: MailMessage.mailbox[7], body: "Hello")
        launch.app.mail.compose?.editor.text = "Hello, world"

        let relaunched = try launch.relaunch(after: .termination)
        let compose = try #require(relaunched.app.mail.compose, "\(relaunched)")
        #expect(compose.restorableState.body == "Hello, world", "\(relaunched)")
        #expect(compose.editor.text == "Hello, world")
    }

    /// The inbox's selected message and scroll position, and the settings' signature, come
    /// back however the process ended after they were saved.
    @Test(arguments: [ProcessEnding.termination, .kill])
    func theInboxSelectionComesBack(after ending: ProcessEnding) throws {
        let store = try TemporaryStore()
        let launch = try store.launch { try LaunchedMail(store: $0) }
        let mail = launch.app.mail
        mail.changeSignature(to: "— Ada")
        mail.scrollInbox(to: 120)
        try mail.open(MailMessage.mailbox[3])
        mail.backToInbox()
        launch.application.saveVisibleState()

        let relaunched = try launch.relaunch(after: ending).app.mail
        #expect(relaunched.restored)
        #expect(relaunched.message == nil && relaunched.compose == nil)
        let inbox = try #require(relaunched.inbox)
        #expect(inbox.restorableState.selectedMessageID == "m-1043")
        #expect(inbox.scrollOffset == 120)
        let tabs = try #require(relaunched.tabs), settings = try #require(relaunched.settings)
        tabs.selectedViewController = settings
        #expect(settings.restorableState.signature == "— Ada")
    }

    /// A critical warning from the memory-pressure monitor empties every screen's cache of
    /// rendered text, and saves what is on screen: an OOM kill right after it keeps the draft.
    @Test func aCriticalMemoryWarningEmptiesTheCachesAndSavesTheDraft() async throws {
        let store = try TemporaryStore()
        let memory = try SimulatedMemory(in: store, configuration: .init(repeatInterval: nil))
        let launch = try store.launch { try LaunchedMail(store: $0, memory: memory) }
        let mail = launch.app.mail
        try reply(in: mail, to: MailMessage.mailbox[7], body: "Hello")
        let inbox = try #require(mail.inbox), message = try #require(mail.message)
        let compose = try #require(mail.compose)
        #expect(inbox.previews.count == MailMessage.mailbox.count)
        #expect(message.rendered.count > 0 && compose.preview.count == 1)

        let report = try #require(try await memory.raise(to: .critical, for: launch.application))
        #expect(report.level == .critical)
        #expect(inbox.previews.count == 0 && message.rendered.count == 0 && compose.preview.count == 0)
        #expect(report.cacheCostReleased > MailMessage.mailbox.count * 1024)

        let relaunched = try launch.relaunch(after: .kill)
        #expect(relaunched.app.mail.compose?.restorableState.body == "Hello", "\(relaunched)")
    }

    /// A draft as releases before the cursor wrote it (`to`, `subject`, `body`).
    struct DraftWithoutCursor: Codable, Equatable {
        var to = "", subject = "", body = ""
    }

    /// The draft gained its cursor as an optional: a row written before comes back with its
    /// text and no cursor, and a draft without a cursor is written as such a row, so an
    /// earlier release still reads it.
    @Test func aDraftWrittenBeforeTheCursorExistedComesBackWithItsText() throws {
        let temporary = try TemporaryStore()
        let store = try temporary.open()
        let old = DraftWithoutCursor(to: "ada@example.com", subject: "Re: Status", body: "Half a reply")
        try store.save(old, for: "tabs/compose")
        let restored = try #require(try store.restore(ComposeController.Draft.self, for: "tabs/compose"))
        #expect(restored.to == old.to && restored.subject == old.subject && restored.body == old.body)
        #expect(restored.cursor == nil)

        try store.save(restored, for: "tabs/compose")
        #expect(try store.restore(DraftWithoutCursor.self, for: "tabs/compose") == old)
        var moved = restored
        moved.cursor = 4
        try store.save(moved, for: "tabs/compose")
        #expect(try store.restore(ComposeController.Draft.self, for: "tabs/compose")?.cursor == 4)
    }
}
