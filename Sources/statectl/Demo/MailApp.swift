import Foundation
import StateStore

/// One launch of the demo mail app: an ``Application`` on a store, its window, and a trace.
///
/// This is the whole integration an app needs: create the application with the store and
/// the storyboard, try `restoreHierarchy(in:)`, and build the first screen only when
/// there is nothing to restore. Everything else (saving on disappear, restoring on
/// appear, archiving the hierarchy, recording memory warnings) is the library's.
@MainActor
final class MailApp {
    let application: Application
    let window: Window
    /// The classic callbacks: the demo's printed trace leaves out `viewIsAppearing` and the
    /// size and trait transitions, which the lifecycle tests cover.
    let trace = LifecycleTrace(
        recording: Set(LifecycleCallback.allCases).subtracting([
            .viewIsAppearing, .viewWillTransition, .willTransitionToTraitCollection, .traitCollectionDidChange,
        ]),
        echo: false
    )
    /// Whether ``launch()`` rebuilt a saved hierarchy rather than building the first screen.
    private(set) var restored = false

    init(store: StateStore) {
        application = Application(store: store, storyboard: MailStoryboard.make(), supportedOrientations: .all)
        application.trace = trace
        window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
    }

    /// Restores the saved hierarchy, or builds tabs → mail (inbox) + settings.
    func launch() throws {
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

    /// A controller from the storyboard, of the class the app expects.
    private func instantiate<Controller: ViewController>(_ identifier: String, as type: Controller.Type) throws -> Controller {
        let controller = try application.storyboard.instantiateViewController(withIdentifier: identifier)
        guard let typed = controller as? Controller else {
            throw CLIError(message: "The storyboard identifier \"\(identifier)\" made a \(Swift.type(of: controller)), not a \(Controller.self).")
        }
        return typed
    }

    // MARK: Finding controllers

    var tabs: TabBarController? { window.rootViewController as? TabBarController }
    var mail: NavigationController? { tabs?.viewControllers.first as? NavigationController }
    var inbox: InboxController? { mail?.viewControllers.first as? InboxController }
    var message: MessageController? { mail?.viewControllers.dropFirst().first as? MessageController }
    var compose: ComposeController? { tabs?.presentedViewController as? ComposeController }

    /// Where the coordinator stores `controller`'s state.
    func path(of controller: ViewController) -> RestorationPath? {
        application.restorationCoordinator?.restorationPath(for: controller)
    }

    // MARK: User actions

    /// Taps a message in the inbox: selects it and pushes a message controller.
    func open(_ item: MailMessage) throws {
        guard let inbox, let mail else { return }
        inbox.scrollOffset = 480
        inbox.select(item)
        let message = try instantiate(MailStoryboard.message, as: MessageController.self)
        mail.pushViewController(message, animated: true)
        message.show(item)
    }

    /// Taps "Reply": presents a compose controller modally over the tabs.
    func reply() throws {
        guard let message else { return }
        let compose = try instantiate(MailStoryboard.compose, as: ComposeController.self)
        message.present(compose, animated: true)
    }

    /// Closes the draft and goes back to the inbox (each controller restores on its first appearance).
    func backToInbox() {
        if let compose { compose.dismiss(animated: false) }
        _ = mail?.popToRootViewController(animated: false)
    }
}
