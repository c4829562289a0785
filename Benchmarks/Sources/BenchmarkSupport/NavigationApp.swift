import Foundation
import StateStore

// The application the push + pop benchmarks (LayerBenchmarks) and Tools/PushPopProbe share: a
// navigation controller whose root and pushed page carry a state.

/// A screen with a state of `PageController.stateSize` bytes.
public final class PageController: ViewController, StateRestoring {
    public struct State: Codable, Sendable {
        public var counter = 0
        public var text = ""
    }
    public var restorableState: State

    public init(stateSize: Int) {
        restorableState = State(counter: 0, text: String(repeating: "p", count: stateSize))
        super.init()
    }
}

@MainActor
public final class NavigationApp {
    public let application: Application
    public let window: Window
    public let navigation: NavigationController
    public let root: PageController
    public let stateSize: Int
    /// Run in ``cycle(_:page:)`` right after the push, where a store hands the push over to its
    /// writer: the `wake` peer wakes an idle queue there (``IdleQueueWake``).
    public var afterPush: (@MainActor () -> Void)?

    /// With `tabs` above 1, the window's root is a tab bar of that many tabs, each a navigation
    /// controller with a root page (identifiers `nav0`, `root0`, ...); the cycles run in the
    /// first tab, and the others only make the window larger (how a structural change's cost
    /// grows with the window it archives).
    public init(store: StateStore?, stateSize: Int = 1000, tabs: Int = 1) {
        self.stateSize = stateSize
        // Controllers come from a storyboard, as in an app that restores its hierarchy: each
        // is archived by its storyboard identifier.
        let storyboard = Storyboard()
        storyboard.register("root") { PageController(stateSize: stateSize) }
        // With a store, a page starts from a small default state and gets its large one by
        // restoration, as a real screen does (the first page's is made large by `cycle`);
        // without one, it is made with its large state (outside the measured cycle).
        let pageSize = store == nil ? stateSize : 0
        storyboard.register("page") { PageController(stateSize: pageSize) }
        storyboard.register("nav") { NavigationController() }
        application =
            store.map { Application(store: $0, storyboard: storyboard) } ?? Application(storyboard: storyboard)
        window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        storyboard.register("tabs") { TabBarController() }
        var navigations: [NavigationController] = []
        var roots: [PageController] = []
        for tab in 0..<max(tabs, 1) {
            let root = try! storyboard.instantiateViewController(withIdentifier: "root") as! PageController
            let navigation = try! storyboard.instantiateViewController(withIdentifier: "nav") as! NavigationController
            if tabs > 1 {
                root.restorationIdentifier = "root\(tab)"
                navigation.restorationIdentifier = "nav\(tab)"
            }
            navigation.setViewControllers([root], animated: false)
            navigations.append(navigation)
            roots.append(root)
        }
        root = roots[0]
        navigation = navigations[0]
        if tabs > 1 {
            let tabBar = try! storyboard.instantiateViewController(withIdentifier: "tabs") as! TabBarController
            tabBar.setViewControllers(navigations, animated: false)
            window.rootViewController = tabBar
        } else {
            window.rootViewController = navigation
        }
        window.makeKeyAndVisible()
    }

    /// A page whose state is as large as the root's (made outside the measured cycle).
    public func makePage() -> PageController {
        try! application.storyboard.instantiateViewController(withIdentifier: "page") as! PageController
    }

    /// One push and one pop; both controllers' states change, so both are written. A page
    /// that restored nothing (the first, or any without a store) gets a state of `stateSize`.
    public func cycle(_ index: Int, page: PageController) {
        root.restorableState.counter = index
        navigation.pushViewController(page, animated: false)
        afterPush?()
        if page.restorableState.text.utf8.count != stateSize {
            page.restorableState.text = String(repeating: "p", count: stateSize)
        }
        page.restorableState.counter = index
        _ = navigation.popViewController(animated: false)
    }

    /// One push: the root disappears and its changed state is handed to the writer.
    public func push(_ index: Int, page: PageController) {
        root.restorableState.counter = index
        navigation.pushViewController(page, animated: false)
    }
}

/// What a store that commits each structural change at once cannot avoid: waking a writer that
/// sleeps. An empty job handed to an idle serial dispatch queue (as the store hands a batch to its
/// write-behind queue), so the `wake` peer is the app without a store plus exactly that.
public final class IdleQueueWake: Sendable {
    private let queue = DispatchQueue(label: "benchmark.idle-wake", qos: .userInitiated)

    public init() {}

    /// Wakes the queue's thread with an empty job.
    public func wake() {
        queue.async {}
    }

    /// Returns once the job has run: the queue is idle again, as the writer is between turns.
    public func waitUntilIdle() {
        queue.sync {}
    }
}
