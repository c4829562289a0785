import Foundation
import MailExample
import StateStore
import StateStoreTesting
import Testing

extension MailApp: LaunchedApp {}

/// The kit's termination against a real one: the mail app's session, once in
/// `statestore-worker app-session DB sigterm` ended by SIGTERM (its termination handlers call
/// `terminate()`, then it exits), and once in process, ended by `relaunch(after: .termination)`.
/// A termination loses nothing, so the two relaunches show the user exactly the same screens.
@MainActor
@Suite("StateStoreTesting: a termination in process leaves what a real SIGTERM leaves", .hangGuard(minutes: 10))
struct TestingKitTerminationRealityTests {
    /// The worker's session (`MailSession.session`, then the edit only the termination saves).
    func session(_ app: MailApp) throws {
        app.changeSignature(to: "— Ada")
        app.scrollInbox(to: 120)
        try app.open(MailMessage.mailbox[7])
        app.message?.read(to: 0.5)
        try app.reply()
        app.compose?.type(to: "grace@example.org", subject: "", body: "Hello")
        app.compose?.editor.text = "Hello, world"
    }

    /// What the user sees after a relaunch, screen by screen, each visited so that it restores.
    func seen(_ app: MailApp) -> [String: String] {
        var seen = ["restored": "\(app.restored)"]
        guard let tabs = app.tabs, let mail = app.mail else { return seen }
        seen["tab"] = "\(tabs.selectedIndex)"
        seen["stack"] = mail.viewControllers.compactMap(\.restorationIdentifier).joined(separator: ",")
        if let compose = app.compose {
            seen["compose"] = "\(compose.restorableState.to)|\(compose.editor.text)"
            tabs.dismiss(animated: false, completion: nil)
        }
        if let message = app.message {
            seen["message"] = "\(message.restorableState.messageID ?? "none")|\(message.restorableState.readPosition)"
            _ = mail.popViewController(animated: false)
        }
        if let inbox = app.inbox {
            seen["inbox"] = "\(inbox.restorableState.selectedMessageID ?? "none")|\(inbox.restorableState.scrollOffset)"
        }
        if let settings = app.settings {
            tabs.selectedViewController = settings
            seen["settings"] = settings.restorableState.signature
        }
        return seen
    }

    func launchMail(_ store: StateStore) throws -> MailApp {
        let app = MailApp(store: store)
        try app.launch()
        return app
    }

    @Test func theKitsTerminationAndARealSIGTERMShowTheSameScreens() throws {
        let real = try TemporaryStore("real-sigterm")
        let worker = try AppInstance(["app-session", real.path, "sigterm"])
        #expect(worker.firstLine == "ready")
        let status = worker.end(with: SIGTERM)
        #expect(status == 128 + SIGTERM, "the worker should exit through its termination handler")
        let afterReal = seen(try real.launch(launchMail).app)

        let simulated = try TemporaryStore("kit-termination")
        let launch = try simulated.launch(launchMail)
        try session(launch.app)
        let afterKit = seen(try launch.relaunch(after: .termination).app)

        #expect(afterKit == afterReal)
        #expect(afterKit["compose"] == "grace@example.org|Hello, world", "\(afterKit)")
        #expect(afterKit["stack"] == "inbox,message" && afterKit["settings"] == "— Ada", "\(afterKit)")
    }
}
