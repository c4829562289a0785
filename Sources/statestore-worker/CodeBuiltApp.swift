import Foundation
import MailExample
import StateStore

// Apps built in code from the mail app's controllers (Examples/Mail), for relaunch tests of
// code-built controllers, scenes and renamed identifiers.

final class AttachmentController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var name = "" }
    var restorableState = State()
}

final class NotesController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var text = "" }
    var restorableState = State()
}

/// Has a restoration identifier but no factory: it cannot be archived, and must be reported.
final class OrphanController: ViewController, StateRestoring {
    struct State: Codable, Sendable { var value = 0 }
    var restorableState = State()
}

/// A compose controller whose code names itself: `draft-v1` in version 1 of the app,
/// `draft-v2` in version 2 (`STATESTORE_APP_VERSION`).
final class VersionedComposeController: ViewController, StateRestoring {
    struct State: Codable, Sendable {
        var to = ""
        var body = ""
    }
    var restorableState = State()

    override init() {
        super.init()
        let version = ProcessInfo.processInfo.environment["STATESTORE_APP_VERSION"] ?? "1"
        restorationIdentifier = "draft-v\(version)"
    }
}

@MainActor
enum CodeBuiltApp {
    static func storyboard() -> Storyboard {
        let storyboard = Storyboard()
        storyboard.registerRestoration(identifier: "inbox") { InboxController() }
        storyboard.registerRestoration(of: MessageController.self) { MessageController() }
        storyboard.registerRestoration(identifier: "attachment") { AttachmentController() }
        storyboard.registerRestoration(identifier: "compose") { ComposeController() }
        storyboard.registerRestoration(identifier: "settings") { SettingsController() }
        storyboard.registerRestoration(of: NotesController.self) { NotesController() }
        return storyboard
    }

    /// Restores, or builds tabs → (mail: inbox) + (split: settings, notes, orphan), all in code.
    static func launch(database: String) throws -> (Application, Window, HierarchyRestoration) {
        let store = try StateStore(path: database)
        let application = Application(store: store, storyboard: storyboard())
        let window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
        let restoration = try application.restoreHierarchyWithReport(in: window)
        if !restoration.restored {
            let inbox = InboxController()
            inbox.restorationIdentifier = "inbox"
            let mail = NavigationController(rootViewController: inbox)
            mail.restorationIdentifier = "mail"
            let split = ViewController()
            split.restorationIdentifier = "split"
            for (child, identifier) in [
                (SettingsController(), "settings"), (NotesController(), "notes"), (OrphanController(), "orphan"),
            ] as [(ViewController, String)] {
                child.restorationIdentifier = identifier
                split.addChild(child)
            }
            let tabs = TabBarController(viewControllers: [mail, split])
            tabs.restorationIdentifier = "tabs"
            window.rootViewController = tabs
            window.makeKeyAndVisible()
        }
        return (application, window, restoration)
    }

    /// Settings and notes in the split tab, then inbox → message (mid-stack) → attachment,
    /// and compose presented over it all.
    static func session(_ application: Application, _ window: Window) {
        let tabs = window.rootViewController as! TabBarController
        tabs.selectedIndex = 1
        let split = tabs.viewControllers[1]
        (split.children[0] as! SettingsController).restorableState.signature = "— Ada"
        (split.children[1] as! NotesController).restorableState.text = "call Grace"
        (split.children[2] as! OrphanController).restorableState.value = 42
        tabs.selectedIndex = 0
        let mail = tabs.viewControllers[0] as! NavigationController
        let inbox = mail.viewControllers[0] as! InboxController
        inbox.scrollOffset = 120
        inbox.select(MailMessage.mailbox[7])
        let message = MessageController()
        message.restorationIdentifier = "message"
        message.show(MailMessage.mailbox[7])
        message.read(to: 0.5)
        mail.pushViewController(message, animated: false)
        let attachment = AttachmentController()
        attachment.restorationIdentifier = "attachment"
        attachment.restorableState.name = "report.pdf"
        mail.pushViewController(attachment, animated: false)
        let compose = ComposeController()
        compose.restorationIdentifier = "compose"
        attachment.present(compose, animated: false, completion: nil)
        compose.type(to: "grace@example.org", subject: "", body: "Hello")
        // Under the presented compose, the selected tab becomes the code-built split container.
        tabs.selectedIndex = 1
    }

    /// After a relaunch: what came back, visiting each controller so it restores.
    static func report(_ window: Window, _ restoration: HierarchyRestoration) -> [String: String] {
        var result: [String: String] = ["restored": "\(restoration.restored)"]
        if !restoration.notRebuilt.isEmpty {
            result["notRebuilt"] = restoration.notRebuilt.map(\.path).joined(separator: ",")
        }
        if !restoration.unarchived.isEmpty {
            result["unarchived"] = restoration.unarchived.map(\.path).joined(separator: ",")
        }
        guard let tabs = window.rootViewController as? TabBarController,
            let mail = tabs.viewControllers.first as? NavigationController
        else { return result }
        result["root"] = "\(type(of: tabs)):\(tabs.restorationIdentifier ?? "")"
        result["tab"] = "\(tabs.selectedIndex)"
        result["stack"] = mail.viewControllers.map { "\(type(of: $0)):\($0.restorationIdentifier ?? "")" }.joined(
            separator: ",")
        if let compose = tabs.presentedViewController as? ComposeController {
            result["presented"] = compose.restorationIdentifier ?? ""
            result["compose"] = "\(compose.restorableState.to)|\(compose.restorableState.body)"
            tabs.dismiss(animated: false, completion: nil)
        }
        // The selected tab appeared when compose was dismissed; the other one appears when selected.
        if tabs.viewControllers.count > 1 {
            let split = tabs.viewControllers[1]
            if tabs.selectedIndex != 1 { tabs.selectedIndex = 1 }
            result["split"] =
                "\(type(of: split)):" + split.children.compactMap(\.restorationIdentifier).joined(separator: ",")
            for child in split.children {
                if let settings = child as? SettingsController {
                    result["settings"] = settings.restorableState.signature
                }
                if let notes = child as? NotesController { result["notes"] = notes.restorableState.text }
            }
        }
        tabs.selectedIndex = 0
        if let attachment = mail.topViewController as? AttachmentController {
            result["attachment"] = attachment.restorableState.name
            _ = mail.popViewController(animated: false)
        }
        if let message = mail.topViewController as? MessageController {
            result["message"] = "\(message.restorableState.messageID ?? "none")|\(message.restorableState.readPosition)"
            _ = mail.popViewController(animated: false)
        }
        if let inbox = mail.topViewController as? InboxController {
            result["inbox"] =
                "\(inbox.restorableState.selectedMessageID ?? "none")|\(inbox.restorableState.scrollOffset)"
        }
        return result
    }
}

/// Two windows (scenes) showing the same storyboard paths: mail → inbox, with a message pushed
/// in the second only.
@MainActor
enum ScenesApp {
    static func describe(_ window: Window) -> String {
        guard let mail = window.rootViewController as? NavigationController else {
            return "\(window.sceneIdentifier):empty"
        }
        var parts = [mail.viewControllers.compactMap(\.restorationIdentifier).joined(separator: ">")]
        if let message = mail.topViewController as? MessageController {
            parts.append("message \(message.restorableState.messageID ?? "none")")
            _ = mail.popViewController(animated: false)
        }
        if let inbox = mail.topViewController as? InboxController {
            parts.append("inbox \(inbox.restorableState.selectedMessageID ?? "none")")
        }
        return parts.joined(separator: "|")
    }

    static func build(_ window: Window, _ application: Application) throws {
        let mail = try application.storyboard.instantiateViewController(withIdentifier: "mail") as! NavigationController
        mail.setViewControllers(
            [try application.storyboard.instantiateViewController(withIdentifier: "inbox")], animated: false)
        window.rootViewController = mail
        window.makeKeyAndVisible()
    }

    /// Opens two windows; the second pushes a message. With `close-first`, the first window is
    /// closed before the process is killed.
    static func session(database: String, ending: String) throws -> String {
        let store = try StateStore(path: database)
        let application = Application(store: store, storyboard: MailStoryboard.make())
        let first = Window(size: Size(width: 390, height: 844), application: application)
        let second = Window(size: Size(width: 390, height: 844), application: application)
        for window in [first, second] { try build(window, application) }
        ((first.rootViewController as! NavigationController).viewControllers[0] as! InboxController).select(
            MailMessage.mailbox[1])
        let secondMail = second.rootViewController as! NavigationController
        (secondMail.viewControllers[0] as! InboxController).select(MailMessage.mailbox[2])
        let message =
            try application.storyboard.instantiateViewController(withIdentifier: "message") as! MessageController
        message.show(MailMessage.mailbox[22])
        secondMail.pushViewController(message, animated: false)
        if ending == "close-first" { first.close() }
        application.saveVisibleState()
        return second.sceneIdentifier
    }

    /// Relaunches: one window per saved scene, each restored; one line per window.
    static func report(database: String) throws -> [String] {
        let store = try StateStore(path: database)
        let application = Application(store: store, storyboard: MailStoryboard.make())
        var lines: [String] = []
        for scene in try application.savedSceneIdentifiers() {
            let window = Window(size: Size(width: 390, height: 844), sceneIdentifier: scene, application: application)
            let restored = try application.restoreHierarchy(in: window)
            lines.append(
                "window=\(scene == Window.defaultSceneIdentifier ? "main" : "other")|\(restored)|\(describe(window))")
        }
        application.terminate()
        return lines
    }
}

/// Version 1 pushes a compose controller that names itself `draft-v1`; version 2's code names
/// it `draft-v2`. The relaunch under version 2 must save where a fresh version-2 compose would.
@MainActor
enum RenameApp {
    static func storyboard() -> Storyboard {
        let storyboard = MailStoryboard.make()
        storyboard.register("draft") { VersionedComposeController() }
        return storyboard
    }

    static func session(database: String) throws {
        let store = try StateStore(path: database, options: MailSession.storeOptions())
        let application = Application(store: store, storyboard: storyboard())
        let window = Window(size: Size(width: 390, height: 844), application: application)
        try ScenesApp.build(window, application)
        let mail = window.rootViewController as! NavigationController
        let draft =
            try application.storyboard.instantiateViewController(withIdentifier: "draft") as! VersionedComposeController
        draft.restorableState = .init(to: "grace@example.org", body: "v1 text")
        mail.pushViewController(draft, animated: false)
        application.saveVisibleState()
    }

    static func report(database: String) throws -> [String: String] {
        let store = try StateStore(path: database, options: MailSession.storeOptions())
        let application = Application(store: store, storyboard: storyboard())
        let window = Window(size: Size(width: 390, height: 844), application: application)
        let restoration = try application.restoreHierarchyWithReport(in: window)
        var result = ["restored": "\(restoration.restored)"]
        result["moved"] = restoration.movedStates.map { "\($0.from)->\($0.to)" }.joined(separator: ",")
        if let mail = window.rootViewController as? NavigationController,
            let draft = mail.topViewController as? VersionedComposeController
        {
            result["draft"] = application.restorationCoordinator?.restorationPath(for: draft)?.rawValue ?? "none"
            result["body"] = draft.restorableState.body
            draft.restorableState.body = "v2 text"
            _ = mail.popViewController(animated: false)
        }
        application.terminate()
        result["paths"] = try store.entries().map(\.path.rawValue).joined(separator: ",")
        return result
    }
}

/// Builds an archive of `count` plain children under a plain root (every controller a
/// built-in `ViewController` made in code), stores it, relaunches, and times `restoreHierarchy`.
@MainActor
enum RebuildTiming {
    /// With `restoring`, the children are `NotesController`s (a factory registered by type),
    /// each of which looks for its state in the store as it appears.
    static func run(count: Int, database: String, restoring: Bool) throws -> String {
        let store = try StateStore(path: database)
        let childClass = restoring ? String(reflecting: NotesController.self) : "StateStore.ViewController"
        var children = [String]()
        children.reserveCapacity(count)
        for index in 0..<count {
            children.append(
                #"{"children":[],"kind":"plain","restorationClass":"\#(childClass)","restorationIdentifier":"c\#(index)"}"#
            )
        }
        let json =
            #"{"format":2,"orientation":"portrait","root":{"children":["# + children.joined(separator: ",")
            + #"],"kind":"plain","restorationClass":"StateStore.ViewController","restorationIdentifier":"root"}}"#
        try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(Data(json.utf8))
        }
        let storyboard = Storyboard()
        storyboard.registerRestoration(of: NotesController.self) { NotesController() }
        let application = Application(store: store, storyboard: storyboard)
        let window = Window(size: Size(width: 390, height: 844), application: application)
        let clock = ContinuousClock()
        var restoration: HierarchyRestoration?
        let elapsed = try clock.measure { restoration = try application.restoreHierarchyWithReport(in: window) }
        let rebuilt = window.rootViewController?.children.count ?? 0
        let seconds = elapsed.seconds
        return
            "nodes=\(count + 1) rebuilt_children=\(rebuilt) outcome=\(restoration.map { "\($0.outcome)" } ?? "?") seconds=\(String(format: "%.3f", seconds))"
    }
}

/// Leaves a mail-app session in a database, then replaces its archive with a hostile one,
/// for timing the next launch (`statestore-worker app-report DB`) by hand.
@MainActor
enum HostileArchive {
    static func json(_ kind: String) -> String? {
        switch kind {
        case "two-presentations":
            return
                #"{"format":2,"orientation":"portrait","root":{"kind":"tabBar","storyboardIdentifier":"tabs","selectedIndex":0,"children":[{"kind":"navigation","storyboardIdentifier":"mail","children":[{"kind":"plain","storyboardIdentifier":"inbox","children":[]}],"presented":{"kind":"plain","storyboardIdentifier":"settings","children":[]}}],"presented":{"kind":"plain","storyboardIdentifier":"compose","children":[]}}}"#
        case "million":
            var json = #"{"format":2,"root":{"kind":"plain","storyboardIdentifier":"settings","children":["#
            json += String(
                repeating: #"{"children":[],"kind":"plain","storyboardIdentifier":"inbox"},"#, count: 1_000_000)
            json.removeLast()
            return json + "]}}"
        case "deep":
            let depth = 100_000
            return #"{"format":2,"root":"#
                + String(repeating: #"{"kind":"plain","storyboardIdentifier":"inbox","children":["#, count: depth)
                + String(repeating: "]}", count: depth) + "}"
        default:
            return nil
        }
    }

    static func write(_ kind: String, database: String) throws {
        guard let json = json(kind) else { fail("hostile-archive KIND is two-presentations, million or deep") }
        let app = try MailSession.launch(database: database)
        try MailSession.session(app)
        app.application.saveVisibleState()
        app.application.terminate()
        let store = try StateStore(path: database)
        try store.write { (transaction) throws(StateStoreError) in try transaction.setHierarchyArchive(Data(json.utf8))
        }
    }
}
