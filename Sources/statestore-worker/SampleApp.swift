import Foundation
import StateStore

// A small mail app on the public API, for tests that need real launches of a real process:
// tabs (mail: navigation inbox → message, settings), compose presented over everything.

final class InboxController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var selected: Int?; var scroll = 0.0 }
    var restorableState = State()
}

final class MessageController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var id = 0; var readPosition = 0.0 }
    var restorableState = State()

    override func viewDidLoad() {
        // Lets a test make restoration itself crash, to exercise the crash-loop guard.
        if ProcessInfo.processInfo.environment["STATESTORE_CRASH_ON_RESTORE"] == "1" { abort() }
    }
}

final class ComposeController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var to = ""; var body = "" }
    var restorableState = State()
}

final class SettingsController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var signature = "" }
    var restorableState = State()
}

@MainActor
enum SampleApp {
    static func storyboard() -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register("tabs") { TabBarController() }
        storyboard.register("mail") { NavigationController() }
        storyboard.register("inbox") { InboxController() }
        storyboard.register("message") { MessageController() }
        storyboard.register("compose") { ComposeController() }
        storyboard.register("settings") { SettingsController() }
        return storyboard
    }

    static func launch(database: String) throws -> (Application, Window, restored: Bool) {
        let store = try StateStore(path: database)
        let application = Application(store: store, storyboard: storyboard())
        let window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
        let restored = try application.restoreHierarchy(in: window)
        if !restored {
            let board = application.storyboard
            let tabs = try board.instantiateViewController(withIdentifier: "tabs") as! TabBarController
            let mail = try board.instantiateViewController(withIdentifier: "mail") as! NavigationController
            mail.setViewControllers([try board.instantiateViewController(withIdentifier: "inbox")], animated: false)
            tabs.viewControllers = [mail, try board.instantiateViewController(withIdentifier: "settings")]
            window.rootViewController = tabs
            window.makeKeyAndVisible()
        }
        return (application, window, restored)
    }

    /// Drives a session: settings signature, inbox selection, a message, a draft in compose.
    static func session(_ application: Application, _ window: Window) throws {
        let tabs = window.rootViewController as! TabBarController
        tabs.selectedIndex = 1
        (tabs.viewControllers[1] as! SettingsController).restorableState.signature = "— Ada"
        tabs.selectedIndex = 0
        let mail = tabs.viewControllers[0] as! NavigationController
        let inbox = mail.viewControllers[0] as! InboxController
        inbox.restorableState = .init(selected: 7, scroll: 120)
        let message = try application.storyboard.instantiateViewController(withIdentifier: "message") as! MessageController
        message.restorableState = .init(id: 7, readPosition: 0.5)
        mail.pushViewController(message, animated: true)
        let compose = try application.storyboard.instantiateViewController(withIdentifier: "compose") as! ComposeController
        message.present(compose, animated: true, completion: nil)
        compose.restorableState = .init(to: "grace@example.org", body: "Hello")
    }

    /// After a relaunch: what came back, visiting each controller so it restores.
    static func report(_ application: Application, _ window: Window, restored: Bool) -> [String: String] {
        var result: [String: String] = ["restored": "\(restored)"]
        guard let tabs = window.rootViewController as? TabBarController,
              let mail = tabs.viewControllers.first as? NavigationController else { return result }
        result["tab"] = "\(tabs.selectedIndex)"
        result["stack"] = mail.viewControllers.compactMap(\.restorationIdentifier).joined(separator: ",")
        if let compose = tabs.presentedViewController as? ComposeController {
            result["presented"] = "compose"
            result["compose"] = "\(compose.restorableState.to)|\(compose.restorableState.body)"
            tabs.dismiss(animated: false, completion: nil)
        }
        if let message = mail.topViewController as? MessageController {
            result["message"] = "\(message.restorableState.id)|\(message.restorableState.readPosition)"
            _ = mail.popViewController(animated: false)
        }
        if let inbox = mail.topViewController as? InboxController {
            result["inbox"] = "\(inbox.restorableState.selected ?? -1)|\(inbox.restorableState.scroll)"
        }
        tabs.selectedIndex = 1
        if let settings = tabs.viewControllers.last as? SettingsController {
            result["settings"] = settings.restorableState.signature
        }
        return result
    }
}
