import Foundation
import Testing

@testable import StateStore

@MainActor private final class ReleaseScreen: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var text = "" }
    var restorableState = State()
}

/// A container whose code makes its own child (a header, or a navigation controller with its
/// first screen), in `init` or as its view loads, beside children added as the user goes.
@MainActor private final class OwnChildContainer: ViewController {
    let inInit: Bool
    let makeChild: () -> ViewController

    init(inInit: Bool, makeChild: @escaping () -> ViewController) {
        self.inInit = inInit
        self.makeChild = makeChild
        super.init()
        if inInit { addChild(makeChild()) }
    }

    override func viewDidLoad() {
        super.viewDidLoad()
        if !inInit { addChild(makeChild()) }
    }
}

/// An archive written by one release, rebuilt by the next, whose containers changed: a tab the
/// new release adds, a tab it drops, a stack whose every screen was renamed.
@MainActor
@Suite("Archives across releases", .hangGuard(minutes: 10))
struct ArchiveAcrossReleasesTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    func launch(_ storyboard: Storyboard) throws -> (Application, Window) {
        let application = Application(store: try StateStore(path: database), storyboard: storyboard)
        application.restorationCoordinator?.errorHandler = { _ in }
        return (
            application, Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        )
    }

    /// A release whose tab bar (made by its factory) has `tabs`, each a navigation controller.
    func release(tabs: [String]) -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register("nav") { NavigationController() }
        for tab in ["inbox", "search", "settings", "message"] { storyboard.register(tab) { ReleaseScreen() } }
        storyboard.register("tabs") { [unowned storyboard] in
            TabBarController(
                viewControllers: tabs.map { tab in
                    let navigation = NavigationController(
                        rootViewController: try! storyboard.instantiateViewController(withIdentifier: tab))
                    navigation.restorationIdentifier = tab + "-tab"
                    return navigation
                })
        }
        return storyboard
    }

    /// Runs the release with `tabs` once: its tab bar on screen, `use` done with it, terminated.
    func runRelease(tabs: [String], _ use: (TabBarController, Storyboard) throws -> Void = { _, _ in }) throws {
        let storyboard = release(tabs: tabs)
        let (application, window) = try launch(storyboard)
        let tabBar = try #require(try storyboard.instantiateViewController(withIdentifier: "tabs") as? TabBarController)
        window.rootViewController = tabBar
        window.makeKeyAndVisible()
        try use(tabBar, storyboard)
        application.terminate()
    }

    @Test func aTabTheNewReleaseAddsAppearsBesideTheRestoredOnes() throws {
        try runRelease(tabs: ["inbox", "settings"]) { tabs, storyboard in
            tabs.selectedIndex = 1
            let settings = try #require(tabs.selectedViewController as? NavigationController)
            settings.pushViewController(
                try storyboard.instantiateViewController(withIdentifier: "message"), animated: false)
        }
        let storyboard = release(tabs: ["inbox", "search", "settings"])
        let (application, window) = try launch(storyboard)
        let report = try application.restoreHierarchyWithReport(in: window)
        #expect(report.notRebuilt.isEmpty, "\(report.notRebuilt)")
        let tabs = try #require(window.rootViewController as? TabBarController)
        #expect(tabs.viewControllers.map(\.restorationIdentifier) == ["inbox-tab", "search-tab", "settings-tab"])
        // The archived tab is back in its place, its stack and selection with it.
        let settings = try #require(tabs.selectedViewController as? NavigationController)
        #expect(settings.restorationIdentifier == "settings-tab")
        #expect(settings.viewControllers.map(\.restorationIdentifier) == ["settings", "message"])
        application.terminate()
    }

    @Test func aTabTheNewReleaseDropsIsReportedNotShown() throws {
        try runRelease(tabs: ["inbox", "search"])
        let (application, window) = try launch(release(tabs: ["inbox"]))
        let report = try application.restoreHierarchyWithReport(in: window)
        let tabs = try #require(window.rootViewController as? TabBarController)
        #expect(tabs.viewControllers.map(\.restorationIdentifier) == ["inbox-tab"])
        #expect(report.notRebuilt.contains { $0.reason.contains("has no tab \"search-tab\"") }, "\(report.notRebuilt)")
        application.terminate()
    }

    /// A tab whose screens were all renamed by the new release: the factory's tab is shown in
    /// its place, and the other tabs come back as archived.
    @Test func aTabWhoseScreensWereAllRenamedIsTheFactorysOwn() throws {
        try runRelease(tabs: ["inbox", "settings"]) { tabs, storyboard in
            let inbox = try #require(tabs.viewControllers.first as? NavigationController)
            inbox.pushViewController(
                try storyboard.instantiateViewController(withIdentifier: "message"), animated: false)
        }
        // The next release names the settings screen "preferences": its archived stack cannot be made.
        let storyboard = Storyboard()
        for screen in ["inbox", "message", "preferences"] { storyboard.register(screen) { ReleaseScreen() } }
        storyboard.register("tabs") { [unowned storyboard] in
            TabBarController(
                viewControllers: [("inbox", "inbox-tab"), ("preferences", "settings-tab")].map { screen, tab in
                    let navigation = NavigationController(
                        rootViewController: try! storyboard.instantiateViewController(withIdentifier: screen))
                    navigation.restorationIdentifier = tab
                    return navigation
                })
        }
        let (application, window) = try launch(storyboard)
        let report = try application.restoreHierarchyWithReport(in: window)
        let tabs = try #require(window.rootViewController as? TabBarController)
        let stacks = tabs.viewControllers.map {
            ($0 as? NavigationController)?.viewControllers.map(\.restorationIdentifier) ?? []
        }
        #expect(stacks == [["inbox", "message"], ["preferences"]])
        #expect(!report.notRebuilt.isEmpty)
        application.terminate()
    }

    /// Every screen of a stack renamed by the new release: no empty navigation controller on
    /// screen, at this launch or the next; the app starts fresh.
    @Test func aStackWhoseScreensWereAllRenamedIsNotShownEmpty() throws {
        do {
            let storyboard = Storyboard()
            storyboard.register("nav") { NavigationController() }
            storyboard.register("inbox") { ReleaseScreen() }
            let (application, window) = try launch(storyboard)
            let navigation = try #require(
                try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
            navigation.setViewControllers(
                [try storyboard.instantiateViewController(withIdentifier: "inbox")], animated: false)
            window.rootViewController = navigation
            window.makeKeyAndVisible()
            application.terminate()
        }
        for launchNumber in 2...3 {
            let storyboard = Storyboard()
            storyboard.register("nav") { NavigationController() }
            storyboard.register("inbox2") { ReleaseScreen() }
            let (application, window) = try launch(storyboard)
            let restored = try application.restoreHierarchy(in: window)
            // The second launch finds the first one's archive unusable; the third restores what
            // the second showed.
            #expect(restored == (launchNumber == 3))
            if restored {
                let navigation = try #require(window.rootViewController as? NavigationController)
                #expect(navigation.viewControllers.map(\.restorationIdentifier) == ["inbox2"])
            } else {
                #expect(window.rootViewController == nil)
                // What the app does when nothing was restored: its first screen.
                let navigation = NavigationController(
                    rootViewController: try storyboard.instantiateViewController(withIdentifier: "inbox2"))
                navigation.restorationIdentifier = "nav"
                window.rootViewController = navigation
                window.makeKeyAndVisible()
            }
            application.terminate()
        }
    }

    /// A container that makes its own child keeps one, launch after launch, with its state,
    /// beside a child the user added, which is rebuilt: the archived child under the
    /// identifier of the one the container makes is that one, not a second one.
    @Test(arguments: [true, false])
    func aChildTheContainerMakesItselfIsNotAddedAgain(headerInInit: Bool) throws {
        func storyboard() -> Storyboard {
            let storyboard = Storyboard()
            for screen in ["header", "extra"] { storyboard.register(screen) { ReleaseScreen() } }
            storyboard.register("home") { [unowned storyboard] in
                OwnChildContainer(inInit: headerInInit) {
                    try! storyboard.instantiateViewController(withIdentifier: "header")
                }
            }
            return storyboard
        }
        do {
            let board = storyboard()
            let (application, window) = try launch(board)
            window.rootViewController = try board.instantiateViewController(withIdentifier: "home")
            window.makeKeyAndVisible()
            let home = try #require(window.rootViewController)
            let header = try #require(home.children.first as? ReleaseScreen)
            header.restorableState.text = "typed"
            let extra = try board.instantiateViewController(withIdentifier: "extra")
            home.addChild(extra)
            application.terminate()
        }
        for run in 2...4 {
            let board = storyboard()
            let (application, window) = try launch(board)
            let report = try application.restoreHierarchyWithReport(in: window)
            #expect(report.notRebuilt.isEmpty)
            let home = try #require(window.rootViewController as? OwnChildContainer)
            #expect(home.children.map(\.restorationIdentifier) == ["header", "extra"], "launch \(run)")
            let header = try #require(home.children.first as? ReleaseScreen)
            #expect(header.restorableState.text == "typed", "launch \(run)")
            header.restorableState.text = "typed at launch \(run)"
            #expect(application.restorationCoordinator?.recentErrors == [])
            application.terminate()
            let store = try StateStore(path: database)
            #expect(try store.restore(ReleaseScreen.State.self, for: "home/header")?.text == "typed at launch \(run)")
            // the next launch reads it back
            try store.save(ReleaseScreen.State(text: "typed"), for: "home/header")
        }
    }

    /// A container that makes its own navigation controller gets back the stack the user left,
    /// launch after launch, in its own navigation controller: one stack, every screen's state.
    @Test(arguments: [true, false])
    func aStackInANavigationControllerTheContainerMakesItselfComesBack(inInit: Bool) throws {
        func storyboard() -> Storyboard {
            let storyboard = Storyboard()
            for screen in ["inbox", "message"] { storyboard.register(screen) { ReleaseScreen() } }
            storyboard.register("home") { [unowned storyboard] in
                OwnChildContainer(inInit: inInit) {
                    let stack = NavigationController(
                        rootViewController: try! storyboard.instantiateViewController(withIdentifier: "inbox"))
                    stack.restorationIdentifier = "stack"
                    return stack
                }
            }
            return storyboard
        }
        do {
            let board = storyboard()
            let (application, window) = try launch(board)
            window.rootViewController = try board.instantiateViewController(withIdentifier: "home")
            window.makeKeyAndVisible()
            let stack = try #require(window.rootViewController?.children.first as? NavigationController)
            stack.pushViewController(try board.instantiateViewController(withIdentifier: "message"), animated: false)
            (stack.topViewController as? ReleaseScreen)?.restorableState.text = "reading"
            application.terminate()
        }
        for run in 2...3 {
            let board = storyboard()
            let (application, window) = try launch(board)
            let report = try application.restoreHierarchyWithReport(in: window)
            #expect(report.notRebuilt.isEmpty)
            let home = try #require(window.rootViewController as? OwnChildContainer)
            #expect(home.children.map(\.restorationIdentifier) == ["stack"], "launch \(run)")
            let stack = try #require(home.children.first as? NavigationController)
            #expect(stack.viewControllers.map(\.restorationIdentifier) == ["inbox", "message"], "launch \(run)")
            #expect((stack.topViewController as? ReleaseScreen)?.restorableState.text == "reading", "launch \(run)")
            #expect(application.restorationCoordinator?.recentErrors == [])
            application.terminate()
        }
    }
}
