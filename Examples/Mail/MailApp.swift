import StateStore

// README: begin
/// One launch of the mail app: an `Application` on a store, and its window.
///
/// This is the whole integration an app needs: create the application with the store and
/// the storyboard, try `restoreHierarchy(in:)`, and build the first screen only when there
/// is nothing to restore. Everything else (saving on disappear, restoring on appear,
/// archiving the hierarchy, purging caches on memory warnings) is the library's.
@MainActor
public final class MailApp {
    public let application: Application
    public let window: Window
    /// Whether `launch()` rebuilt a saved hierarchy rather than building the first screen.
    public private(set) var restored = false

    /// Without a `memoryMonitor`, memory warnings come only from `application.didReceiveMemoryWarning(level:)`.
    public init(store: StateStore, memoryMonitor: MemoryPressureMonitor? = nil) {
        application = Application(store: store, storyboard: MailStoryboard.make(), memoryMonitor: memoryMonitor)
        window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
    }

    /// As the app's own process starts it: warnings from /proc, the cgroup and PSI, and SIGTERM
    /// or SIGINT saving what is visible before the process exits. Then run the main queue: `dispatchMain()`.
    public static func start(database: String = StateStore.defaultPath(appName: "mail")) throws -> MailApp {
        let app = MailApp(store: try StateStore(path: database), memoryMonitor: try MemoryPressureMonitor())
        app.application.installTerminationHandlers()
        try app.launch()
        return app
    }

    /// Back where the user left off (a relaunch), or the first screen: tabs → mail (inbox) + settings.
    public func launch() throws {
        restored = try application.restoreHierarchy(in: window)
        guard !restored else { return }
        let tabs = try instantiate(MailStoryboard.tabs, as: TabBarController.self)
        let mail = try instantiate(MailStoryboard.mail, as: NavigationController.self)
        let inbox = try instantiate(MailStoryboard.inbox, as: InboxController.self)
        let settings = try instantiate(MailStoryboard.settings, as: SettingsController.self)
        mail.setViewControllers([inbox], animated: false)
        tabs.viewControllers = [mail, settings]
        window.rootViewController = tabs
        window.makeKeyAndVisible()
    }
}
// README: end

/// A storyboard identifier made a controller of another class than the app expects.
public struct UnexpectedController: Error, CustomStringConvertible {
    public var identifier: String
    public var made: String
    public var expected: String

    public var description: String { "The storyboard identifier \"\(identifier)\" made a \(made), not a \(expected)." }
}

extension MailApp {
    /// A controller from the storyboard, of the class the app expects.
    func instantiate<Controller: ViewController>(_ identifier: String, as type: Controller.Type) throws -> Controller {
        let controller = try application.storyboard.instantiateViewController(withIdentifier: identifier)
        guard let typed = controller as? Controller else {
            throw UnexpectedController(
                identifier: identifier, made: "\(Swift.type(of: controller))", expected: "\(Controller.self)")
        }
        return typed
    }

    // MARK: Finding controllers

    public var tabs: TabBarController? { window.rootViewController as? TabBarController }
    public var mail: NavigationController? { tabs?.viewControllers.first as? NavigationController }
    public var settings: SettingsController? { tabs?.viewControllers.dropFirst().first as? SettingsController }
    public var inbox: InboxController? { mail?.viewControllers.first as? InboxController }
    public var message: MessageController? { mail?.viewControllers.dropFirst().first as? MessageController }
    public var compose: ComposeController? { tabs?.presentedViewController as? ComposeController }

    // MARK: User actions

    /// Opens the settings tab, changes the signature, and goes back to the mail tab.
    public func changeSignature(to signature: String) {
        guard let tabs, let settings else { return }
        tabs.selectedViewController = settings
        settings.restorableState.signature = signature
        tabs.selectedViewController = mail
    }

    /// Scrolls the inbox's list.
    public func scrollInbox(to offset: Double) {
        inbox?.scrollOffset = offset
    }

    /// Taps a message in the inbox: selects it and pushes a message controller.
    public func open(_ item: MailMessage) throws {
        guard let inbox, let mail else { return }
        inbox.select(item)
        let message = try instantiate(MailStoryboard.message, as: MessageController.self)
        mail.pushViewController(message, animated: true)
        message.show(item)
    }

    /// Taps "Reply": presents a compose controller modally over the tabs.
    public func reply() throws {
        guard let message else { return }
        let compose = try instantiate(MailStoryboard.compose, as: ComposeController.self)
        message.present(compose, animated: true)
    }

    /// Closes the draft and goes back to the inbox (each controller restores on its first appearance).
    public func backToInbox() {
        if let compose { compose.dismiss(animated: false) }
        _ = mail?.popToRootViewController(animated: false)
    }
}
