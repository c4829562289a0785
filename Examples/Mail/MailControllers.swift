import StateStore

// The mail app's other screens. Each one saves its model state when it disappears and gets
// it back when it appears (StateRestoring); the inbox and the message keep caches of rendered
// text that they give back on memory warnings.

/// The message list. State: the selected message and how far the list is scrolled.
public final class InboxController: ViewController, StateRestoring {
    public struct State: Codable, Sendable, Hashable {
        public var selectedMessageID: String?
        public var scrollOffset: Double = 0
    }

    public var restorableState = State()

    /// The list's visible scroll position; committed into the state when the inbox disappears.
    public var scrollOffset: Double = 0

    /// One rendered row per message; an entry costs its size in bytes.
    public let previews = RecreatableCache<String, String>(name: "inbox.previews", registry: nil) { $0.utf8.count }

    public override func viewDidLoad() {
        super.viewDidLoad()
        register(previews)
    }

    public override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        scrollOffset = restorableState.scrollOffset  // already restored
        for message in MailMessage.mailbox {
            _ = previews.value(forKey: message.id) {
                "\(message.from) — \(message.subject)\n" + String(message.body.prefix(1024))
            }
        }
    }

    public override func viewWillDisappear(_ animated: Bool) {
        super.viewWillDisappear(animated)
        restorableState.scrollOffset = scrollOffset  // commit; the save follows
    }

    /// Selects a message, as a tap on its row would.
    public func select(_ message: MailMessage) {
        restorableState.selectedMessageID = message.id
    }
}

/// One message. State: which message and how far it has been read (0–1).
public final class MessageController: ViewController, StateRestoring {
    public struct State: Codable, Sendable, Hashable {
        public var messageID: String?
        public var readPosition: Double = 0
    }

    public var restorableState = State()

    /// The message body laid out in paragraphs; an entry costs its size in bytes.
    public let rendered = RecreatableCache<String, String>(name: "message.rendered", registry: nil) { $0.utf8.count }

    public override func viewDidLoad() {
        super.viewDidLoad()
        register(rendered)
    }

    /// Shows `message`, as the inbox does when it pushes this controller.
    public func show(_ message: MailMessage) {
        restorableState = State(messageID: message.id, readPosition: 0)
        render()
    }

    /// Scrolls the body to `position` (0 is the top, 1 the end).
    public func read(to position: Double) {
        restorableState.readPosition = min(max(position, 0), 1)
    }

    public override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        render()
    }

    private func render() {
        guard let message = MailMessage.find(restorableState.messageID) else { return }
        for (index, paragraph) in message.body.split(separator: ".").enumerated() {
            _ = rendered.value(forKey: "\(message.id)#\(index)") {
                "<p>\(paragraph)</p>" + String(repeating: " ", count: 512)
            }
        }
    }
}

/// The settings tab. State: the signature put under replies.
public final class SettingsController: ViewController, StateRestoring {
    public struct State: Codable, Sendable, Hashable {
        public var signature = ""
    }

    public var restorableState = State()
}

/// The storyboard identifiers of the app's controllers; each controller's restoration
/// identifier defaults to its storyboard identifier, so these are also its path components.
public enum MailStoryboard {
    public static let tabs = "tabs"
    public static let mail = "mail"
    public static let inbox = "inbox"
    public static let message = "message"
    public static let compose = "compose"
    public static let settings = "settings"

    /// Every controller the app can show, by identifier: what a relaunch rebuilds from.
    @MainActor
    public static func make() -> Storyboard {
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
