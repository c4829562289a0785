import Foundation
import MailExample
import StateStore
import StateStoreCrypto

/// The mail app (Examples/Mail) in a real process: a session to kill, and a relaunch that
/// reports what came back.
@MainActor
enum MailSession {
    /// The app on `database`, launched. With STATESTORE_CRASH_ON_RESTORE=1, making the message
    /// controller aborts, so restoring a hierarchy that shows one crashes (for the crash-loop guard).
    /// With STATESTORE_KEY_FILE=PATH, the store seals its states with the key in that file.
    static func launch(database: String) throws -> MailApp {
        let app = MailApp(store: try StateStore(path: database, options: storeOptions()))
        if ProcessInfo.processInfo.environment["STATESTORE_CRASH_ON_RESTORE"] == "1" {
            app.application.storyboard.register(MailStoryboard.message) { abort() }
        }
        try app.launch()
        return app
    }

    /// The store's options: sealed with the key in STATESTORE_KEY_FILE when it is set.
    static func storeOptions() throws -> StateStore.Options {
        var options = StateStore.Options()
        if let keyFile = ProcessInfo.processInfo.environment["STATESTORE_KEY_FILE"] {
            options.sealer = StateKeyring(try StateKey.file(keyFile))
        }
        return options
    }

    /// Drives a session: a signature in settings, an inbox scrolled with a message selected,
    /// that message open and half read, and a reply typed in compose.
    static func session(_ app: MailApp) throws {
        app.changeSignature(to: "— Ada")
        app.scrollInbox(to: 120)
        try app.open(MailMessage.mailbox[7])
        app.message?.read(to: 0.5)
        try app.reply()
        app.compose?.type(to: "grace@example.org", subject: "", body: "Hello")
    }

    /// After a relaunch: what came back, visiting each controller so it restores.
    static func report(_ app: MailApp) -> [String: String] {
        var result: [String: String] = ["restored": "\(app.restored)"]
        guard let tabs = app.tabs, let mail = app.mail else { return result }
        result["tab"] = "\(tabs.selectedIndex)"
        result["stack"] = mail.viewControllers.compactMap(\.restorationIdentifier).joined(separator: ",")
        if let compose = app.compose {
            result["presented"] = "compose"
            result["compose"] = "\(compose.restorableState.to)|\(compose.restorableState.body)"
            tabs.dismiss(animated: false, completion: nil)
        }
        if let message = app.message {
            result["message"] = "\(message.restorableState.messageID ?? "none")|\(message.restorableState.readPosition)"
            _ = mail.popViewController(animated: false)
        }
        if let inbox = app.inbox {
            result["inbox"] =
                "\(inbox.restorableState.selectedMessageID ?? "none")|\(inbox.restorableState.scrollOffset)"
        }
        if let settings = app.settings {
            tabs.selectedViewController = settings
            result["settings"] = settings.restorableState.signature
        }
        return result
    }
}
