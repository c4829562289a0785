// The README's "A complete example", verbatim: README.md must show exactly this code.
import StateStore

/// A text field, as far as this example needs one.
final class TextView: View {
    var text = ""
}

/// The compose screen: its draft survives disappearing, relaunches and crashes.
final class ComposeViewController: ViewController, StateRestoring {
    struct Draft: Codable, Sendable { var to = ""; var subject = ""; var body = "" }
    var restorableState = Draft()                     // saved on disappear, restored on appear

    let editor = TextView()
    let previews = RecreatableCache<String, [UInt8]>(name: "previews", costLimit: 8 << 20, cost: { $0.count })

    override func viewDidLoad() {
        view.addSubview(editor)
        register(previews)                            // purged on memory warnings (warning trims, critical empties)
    }

    override func viewWillAppear(_ animated: Bool) {
        editor.text = restorableState.body            // already restored when this runs
    }

    override func viewWillDisappear(_ animated: Bool) {
        restorableState.body = editor.text            // commit edits; the save follows this override
    }
}

final class InboxViewController: ViewController, StateRestoring {
    struct Selection: Codable, Sendable { var message: Int? }
    var restorableState = Selection()
}

@MainActor
func launch(database: String = StateStore.defaultPath(appName: "mail")) throws -> Application {
    let store = try StateStore(path: database)
    let storyboard = Storyboard()
    storyboard.register("mail") { NavigationController() }
    storyboard.register("inbox") { InboxViewController() }
    storyboard.register("compose") { ComposeViewController() }

    let application = Application(
        store: store, storyboard: storyboard,
        memoryMonitor: MemoryPressureMonitor(),       // warnings from /proc, the cgroup and PSI
        supportedOrientations: .allButUpsideDown
    )
    application.installTerminationHandlers()          // SIGTERM/SIGINT: save what is visible, then exit
    let window = Window(size: Size(width: 1280, height: 800), orientation: .landscapeLeft, application: application)
    if try !application.restoreHierarchy(in: window) {  // a relaunch: back where the user left off
        let mail = try storyboard.instantiateViewController(withIdentifier: "mail") as! NavigationController
        mail.setViewControllers([try storyboard.instantiateViewController(withIdentifier: "inbox")], animated: false)
        window.rootViewController = mail
        window.makeKeyAndVisible()
    }
    return application                                // then run the main queue: dispatchMain()
}
