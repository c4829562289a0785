// A photo viewer's caches, tested with StateStoreTesting's SimulatedMemory: the live monitor
// reads the files the test writes, the warning hops to the main actor, and the app responds as
// in production. In a test, each `precondition` would be an `#expect` (or an `XCTAssert`).

// snippet.hide
import StateStore
import StateStoreTesting

final class PhotoController: ViewController, StateRestoring {
    struct Photo: Codable, Sendable { var caption = "" }
    var restorableState = Photo()
    let thumbnails = RecreatableCache<Int, [UInt8]>(name: "thumbnails", registry: nil) { $0.count }

    override func viewDidLoad() {
        super.viewDidLoad()
        register(thumbnails)  // purged by the warnings this controller receives
    }
}

/// The app's own launch: restore where the user left off, or show the first screen.
final class PhotosApp: LaunchedApp {
    let application: Application
    let window: Window

    init(store: StateStore) throws {
        let storyboard = Storyboard()
        storyboard.register("photo") { PhotoController() }
        application = Application(store: store, storyboard: storyboard)
        window = Window(size: Size(width: 390, height: 844), application: application)
        if try !application.restoreHierarchy(in: window) {
            window.rootViewController = try storyboard.instantiateViewController(withIdentifier: "photo")
            window.makeKeyAndVisible()
        }
    }

    var photo: PhotoController { window.rootViewController as! PhotoController }
}

@MainActor
func run() async throws {
    let store = try TemporaryStore()
    let launch = try store.launch { store in try PhotosApp(store: store) }
    launch.app.photo.thumbnails[1] = [UInt8](repeating: 0, count: 64 << 10)
    launch.app.photo.restorableState.caption = "the harbour at dawn"
    // snippet.show
    let memory = try SimulatedMemory(in: store)
    memory.observe(by: launch.application)
    let report = try await memory.raise(to: .critical, for: launch.application)
    // report.cacheCostReleased, report.bytesFreed; the app's caches are empty
    // snippet.hide
    precondition(report?.level == .critical && report!.cacheCostReleased >= 64 << 10)
    precondition(launch.app.photo.thumbnails.count == 0)
    // snippet.show
    // A critical warning is a flush point: what is on screen is on disk, even if a kill follows.
    let relaunched = try launch.relaunch(after: .kill)
    precondition(relaunched.app.photo.restorableState.caption == "the harbour at dawn")
    // snippet.hide
    try relaunched.end(.termination)
    print("critical warning: \(report!.cacheCostReleased) bytes of cache released; caption kept after kill -9")
}

try await run()
