// The examples in the library's documentation comments, each in a scope of its own, so every
// one of them is compiled and run by the package's build and tests.

// snippet.hide
import Foundation
import Logging
import ServiceLifecycle
import StateStore
import StateStoreCrypto
import StateStoreServiceLifecycle

let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-api-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
setenv("XDG_STATE_HOME", folder.path, 1)
let path = folder.appending(path: "other.sqlite").path

final class TextView: View { var text = "" }
final class InboxController: ViewController {}
final class MessageController: ViewController {}
final class ComposeController: ViewController {}
struct Draft: Codable, Sendable { var body = "" }
struct Inbox: Codable, Sendable { var selected = 0 }
let draft = Draft(body: "Dear Ada,")
let inbox = Inbox()

// StateStore
do {
    let store = try StateStore(path: StateStore.defaultPath(appName: "mail"))
    try store.save(draft, for: "root/inbox/compose")
    let restored = try store.restore(Draft.self, for: "root/inbox/compose")
    precondition(restored?.body == "Dear Ada,")

    // StateStore.write(_:)
    try store.write { (transaction) throws(StateStoreError) in
        try transaction.save(inbox, for: "root/inbox")
        try transaction.remove("root/inbox/compose")
    }

    // StateExport
    let otherStore = try StateStore(path: path)
    let data = try StateExport(store: store).encoded()
    // … later, or elsewhere:
    let export = try StateExport(decoding: data)
    try otherStore.importStates(export)

    // StateStore.importStates(_:replace:)
    let backup = folder.appending(path: "backup.json")
    try data.write(to: backup)
    do {
        let export = try StateExport(decoding: Data(contentsOf: backup))
        let result = try store.importStates(export, replace: true)
        print("\(result.created) new, \(result.replaced) replaced, \(result.removed) removed")
    }

    // SQLiteResultCode
    func retryLater() {}
    do {
        try store.save(draft, for: "root/inbox/compose")
    } catch {
        if error.sqliteFailure?.resultCode == .busy { retryLater() }  // error is a StateStoreError
    }
}

// StateRestoring
final class ComposeViewController: ViewController, StateRestoring {
    struct Draft: Codable, Sendable {
        var to = ""
        var body = ""
    }
    var restorableState = Draft()
    let editor = TextView()

    override func viewWillDisappear(_ animated: Bool) {
        super.viewWillDisappear(animated)
        restorableState.body = editor.text  // commit edits; the save follows
    }
    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        editor.text = restorableState.body  // already restored
    }
}

// Storyboard, Application, Window, LifecycleTrace
do {
    let storyboard = Storyboard()
    storyboard.register("inbox") { InboxController() }
    let inbox = try storyboard.instantiateViewController(withIdentifier: "inbox")
    precondition(inbox is InboxController)

    // Storyboard.registerRestoration
    storyboard.registerRestoration(identifier: "compose") { ComposeController() }
    storyboard.registerRestoration(of: MessageController.self) { MessageController() }

    let application = Application(storyboard: storyboard, supportedOrientations: .allButUpsideDown)
    let window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
    window.rootViewController = NavigationController(rootViewController: InboxController())
    window.makeKeyAndVisible()
    window.close()
}

// LifecycleTrace
do {
    let application = Application()
    let window = Window(size: Size(width: 390, height: 844), application: application)
    window.rootViewController = NavigationController(rootViewController: InboxController())
    let trace = LifecycleTrace()
    application.trace = trace
    window.makeKeyAndVisible()
    print(trace.lines)  // ["NavigationController: loadView", "NavigationController: viewDidLoad", …]
    precondition(trace.lines.prefix(2) == ["NavigationController: loadView", "NavigationController: viewDidLoad"])
}

// ViewController
final class InboxViewController: ViewController {
    let list = View()

    override func viewDidLoad() {
        super.viewDidLoad()
        view.addSubview(list)  // once, when the view is first needed
    }
    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        // each time the screen is about to show: refresh what changed while it was away
    }
    override func didReceiveMemoryWarning(level: MemoryPressureLevel) {
        super.didReceiveMemoryWarning(level: level)  // purges the caches given to register(_:)
    }
}

// Window, NavigationController
do {
    let application = Application()
    let window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
    window.rootViewController = NavigationController(rootViewController: InboxController())
    window.makeKeyAndVisible()  // the root appears, then its visible children
    window.resize(to: Size(width: 844, height: 390))  // viewWillTransition(to:with:) on screen

    let navigation = NavigationController(rootViewController: InboxController())
    window.rootViewController = navigation
    navigation.pushViewController(MessageController(), animated: true)  // the inbox disappears, the message appears
    navigation.popViewController(animated: true)  // and back
    precondition(navigation.viewControllers.count == 1)
}

// Application.restoreHierarchy(in:)
for launch in 1...2 {
    let storyboard = Storyboard()
    storyboard.registerRestoration(of: InboxController.self) { InboxController() }
    let application = Application(store: try StateStore(path: path + ".4"), storyboard: storyboard)
    let window = Window(size: Size(width: 390, height: 844), application: application)
    if try !application.restoreHierarchy(in: window) {  // nothing saved: the first screens
        window.rootViewController = NavigationController(rootViewController: InboxController())
        window.makeKeyAndVisible()
    }
    let navigation = window.rootViewController as? NavigationController
    precondition(navigation?.topViewController is InboxController, "launch \(launch) shows no inbox")
    application.terminate()
}

// StateStore.readQuarantinedBytes(id:_:)
do {
    let quarantinePath = folder.appending(path: "quarantine.sqlite").path
    try StateStore(path: quarantinePath).save(Draft(body: String(repeating: "x", count: 4096)), for: "root/big")
    try StateStore(path: quarantinePath).quarantine("root/big", reason: "too large")
    let store = try StateStore(path: quarantinePath, options: .init(maximumStateSize: 1024))
    for state in try store.quarantinedStates() where state.bytes.count < state.byteCount {
        let file = folder.appending(path: "quarantined-\(state.id)")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        try store.readQuarantinedBytes(id: state.id) { (chunk) throws(StateStoreError) in
            handle.write(Data(chunk))
        }
        try handle.close()
    }
    let written = try Data(contentsOf: folder.appending(path: "quarantined-1"))
    let whole = try StateStore(path: quarantinePath).quarantinedStates().first?.bytes
    precondition(written == whole)
}

// RecreatableCache
do {
    let url = URL(fileURLWithPath: "/tmp/beach.jpg")
    func render(_ url: URL) throws -> [UInt8] { Array(url.path.utf8) }
    let thumbnails = RecreatableCache<URL, [UInt8]>(name: "thumbnails", costLimit: 64 << 20) { $0.count }
    let bytes = try thumbnails.value(forKey: url) { try render(url) }
    precondition(bytes.count == url.path.utf8.count)
}

// MemoryPressureMonitor
do {
    let app = Application()
    let monitor = try MemoryPressureMonitor(configuration: .init())
    monitor.onEvent { event in Task { @MainActor in app.didReceiveMemoryWarning(level: event.level) } }
    monitor.start()
    monitor.stop()
}

// StateKey, StateKeyring
do {
    let keyFile = folder.appending(path: "state.key").path
    precondition(
        FileManager.default.createFile(
            atPath: keyFile, contents: Data((0..<32).map { _ in UInt8.random(in: 0...255) }),
            attributes: [.posixPermissions: 0o600]))
    setenv("CREDENTIALS_DIRECTORY", folder.path, 1)
    try FileManager.default.copyItem(atPath: keyFile, toPath: folder.appending(path: "app-state-key").path)
    do {
        let path = folder.appending(path: "sealed-1.sqlite").path
        let keyring = StateKeyring(try .file(keyFile))  // head -c 32 /dev/urandom > state.key; chmod 600
        let store = try StateStore(path: path, options: .init(sealer: keyring))
        try store.save(draft, for: "a")
    }
    do {
        let path = folder.appending(path: "sealed-2.sqlite").path
        let key = try StateKey.credential("app-state-key")  // $CREDENTIALS_DIRECTORY/app-state-key
        let store = try StateStore(path: path, options: .init(sealer: StateKeyring(key)))
        try store.save(draft, for: "a")
    }
}

// ApplicationStateService
do {
    let logger = Logger(label: "snippet")
    let storyboard = Storyboard()
    let store = try StateStore(path: path + ".3")
    Task {  // as systemd stopping the service would
        try await Task.sleep(for: .milliseconds(200))
        kill(getpid(), SIGTERM)
    }
    let monitor = try MemoryPressureMonitor()
    let application = Application(store: store, storyboard: storyboard, memoryMonitor: monitor)
    let group = ServiceGroup(
        configuration: .init(
            services: [
                .init(service: MemoryPressureMonitorService(monitor: monitor)),
                .init(service: ApplicationStateService(application: application)),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
    try await group.run()
}
print("every documentation example ran")
