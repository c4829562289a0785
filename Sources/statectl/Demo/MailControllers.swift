import StateStore

// A small mail app written only against StateStore's public API: the controllers that
// `statectl demo` drives. Each one saves its model state when it disappears and gets it
// back when it appears (StateRestoring), and keeps a cache of rendered previews that it
// gives back on memory warnings (`register(_:)`).

/// A message in the demo's mailbox.
struct MailMessage: Sendable, Hashable {
    var id: String
    var from: String
    var subject: String
    var body: String

    /// A fixed mailbox, so the demo prints the same thing on every run.
    static let mailbox: [MailMessage] = (0..<24).map { index in
        let id = "m-\(1040 + index)"
        let from = ["ada@example.com", "grace@example.com", "linus@example.com"][index % 3]
        return MailMessage(
            id: id, from: from, subject: "Status report #\(index + 1)",
            body: String(repeating: "Paragraph \(index + 1): all systems nominal. ", count: 40)
        )
    }

    static func find(_ id: String?) -> MailMessage? { mailbox.first { $0.id == id } }
}

/// A cache of rendered text; the cost of an entry is its size in bytes.
typealias PreviewCache = RecreatableCache<String, String>

extension PreviewCache {
    /// A cache owned by one controller: it does not join the global registry, the controller
    /// purges it on memory warnings.
    @MainActor
    static func owned(by controller: ViewController, name: String) -> PreviewCache {
        let cache = PreviewCache(name: name, registry: nil) { $0.utf8.count }
        controller.register(cache)
        return cache
    }
}

/// The message list. State: the selected message and how far the list is scrolled.
final class InboxController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Hashable {
        var selectedMessageID: String?
        var scrollOffset: Double = 0
    }

    var restorableState = State()

    /// The list's visible scroll position; committed into the state when the inbox disappears.
    var scrollOffset: Double = 0

    /// One rendered row per message.
    private(set) lazy var previews = PreviewCache.owned(by: self, name: "inbox.previews")

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        scrollOffset = restorableState.scrollOffset  // already restored
        for message in MailMessage.mailbox {
            _ = previews.value(forKey: message.id) {
                "\(message.from) — \(message.subject)\n" + String(message.body.prefix(1024))
            }
        }
    }

    override func viewWillDisappear(_ animated: Bool) {
        super.viewWillDisappear(animated)
        restorableState.scrollOffset = scrollOffset  // commit; the save follows
    }

    /// Selects a message, as a tap on its row would.
    func select(_ message: MailMessage) {
        restorableState.selectedMessageID = message.id
    }
}

/// One message. State: which message and how far it has been read (0–1).
final class MessageController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Hashable {
        var messageID: String?
        var readPosition: Double = 0
    }

    var restorableState = State()

    /// The message body laid out in paragraphs.
    private(set) lazy var rendered = PreviewCache.owned(by: self, name: "message.rendered")

    /// Shows `message`, as the inbox does when it pushes this controller.
    func show(_ message: MailMessage) {
        restorableState = State(messageID: message.id, readPosition: 0)
        render()
    }

    /// Scrolls the body to `position` (0 is the top, 1 the end).
    func read(to position: Double) {
        restorableState.readPosition = min(max(position, 0), 1)
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        render()
    }

    private func render() {
        guard let message = MailMessage.find(restorableState.messageID) else { return }
        for (index, paragraph) in message.body.split(separator: ".").enumerated() {
            _ = rendered.value(forKey: "\(message.id)#\(index)") { "<p>\(paragraph)</p>" + String(repeating: " ", count: 512) }
        }
    }
}

/// A draft reply, presented modally. State: the draft's fields.
///
/// It refuses to turn upside down, to show that a rotation can be refused.
final class ComposeController: ViewController, StateRestoring {
    struct Draft: Codable, Sendable, Hashable {
        var to = ""
        var subject = ""
        var body = ""
    }

    var restorableState = Draft()

    /// The rendered preview of the draft, redone as it is typed.
    private(set) lazy var preview = PreviewCache.owned(by: self, name: "compose.preview")

    override var supportedInterfaceOrientations: InterfaceOrientationMask { .allButUpsideDown }

    /// Types into the draft's fields, as the user would.
    func type(to: String, subject: String, body: String) {
        restorableState = Draft(to: to, subject: subject, body: body)
        preview.setValue("To: \(to)\nSubject: \(subject)\n\n\(body)" + String(repeating: " ", count: 4096), forKey: "draft")
    }
}

/// The settings tab: a plain controller, restored by the hierarchy but with no state of its own.
final class SettingsController: ViewController {}

/// The storyboard identifiers of the demo's controllers; each controller's restoration
/// identifier defaults to its storyboard identifier, so these are also its path components.
enum MailStoryboard {
    static let tabs = "tabs"
    static let mail = "mail"
    static let inbox = "inbox"
    static let message = "message"
    static let compose = "compose"
    static let settings = "settings"

    /// Every controller the app can show, by identifier: what a relaunch rebuilds from.
    @MainActor
    static func make() -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register(tabs) { TabBarController() }
        storyboard.register(mail) { NavigationController() }
        storyboard.register(inbox) { InboxController() }
        storyboard.register(message) { MessageController() }
        storyboard.register(compose) { ComposeController() }
        storyboard.register(settings) { SettingsController() }
        return storyboard
    }
}
