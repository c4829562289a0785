import StateStore
import StateStoreGTK4

/// A `GtkStack` that shows a `NavigationController`: one page per controller of its stack, the
/// top one visible.
///
/// | engine | GTK |
/// |---|---|
/// | `pushViewController(_:animated:)`, a `setViewControllers(_:animated:)` that adds controllers | a page built for each new controller; the new top slides in from the right (`GTK_STACK_TRANSITION_TYPE_SLIDE_LEFT`) |
/// | `popViewController(animated:)`, `popToRootViewController(animated:)`, a `setViewControllers(_:animated:)` that removes controllers | the controller now on top slides back in from the left (`GTK_STACK_TRANSITION_TYPE_SLIDE_RIGHT`); the pages of the controllers that left are removed once the transition has run |
/// | the stack a relaunch restored (`Application.restoreHierarchy(in:)`) | a page for each controller, the top shown without a transition |
///
/// The engine is the model: the stack follows whatever changed it (the app's code, a
/// relaunch, a back button made by ``makeBackButton(label:)``, which calls
/// `popViewController(animated:)`). It observes the navigation controller's application (a
/// `LifecycleObserver`, told of every structural change), so the navigation controller's
/// `delegate` stays the app's; a navigation controller not yet in an application's window is
/// followed once ``update()`` is called after it is.
///
/// Pages are built by the closure given to ``init(navigationController:page:)``, once per
/// controller, when the controller joins the stack; the widget stays the controller's page
/// for as long as the controller stays in the stack. The adapter is held by the application's
/// observers, so it lives as long as the application does.
@MainActor
public final class GTKNavigationStack {
    /// Builds the page that shows a controller of the stack; gets the adapter too, for
    /// ``makeBackButton(label:)``.
    public typealias PageBuilder = @MainActor (GTKNavigationStack, ViewController) -> UnsafeMutablePointer<GtkWidget>

    /// The navigation controller the stack shows.
    public let navigationController: NavigationController

    /// The `GtkStack`, as a widget: put it where the navigation controller's view goes.
    public let widget: UnsafeMutablePointer<GtkWidget>

    /// The controllers that have a page, bottom first: the navigation controller's stack, once
    /// the adapter has caught up with it.
    public var controllers: [ViewController] { pages.compactMap(\.controller) }

    /// How long a push or pop slides, in milliseconds (GTK's default is 200).
    public var transitionDuration: UInt32 {
        get { gtk_stack_get_transition_duration(stack) }
        set { gtk_stack_set_transition_duration(stack, newValue) }
    }

    private struct Page {
        weak var controller: ViewController?
        let widget: UnsafeMutablePointer<GtkWidget>
        let name: String
    }

    private let build: PageBuilder
    /// `GTK_STACK(widget)`: `GtkStack` is an opaque type.
    private var stack: OpaquePointer { OpaquePointer(widget) }
    private var pages: [Page] = []
    /// Pages of controllers that left the stack, removed when the transition that hides them ends.
    private var leaving: [Page] = []
    private var pagesMade = 0
    private var observer: HierarchyChangeObserver?

    /// Creates the stack with a page for each controller `navigationController` holds now, the
    /// top one visible, and follows its changes from then on.
    ///
    /// - Parameters:
    ///   - navigationController: The navigation controller to show.
    ///   - page: Builds a controller's page; called once for each controller that joins the stack.
    public init(navigationController: NavigationController, page: @escaping PageBuilder) {
        self.navigationController = navigationController
        build = page
        widget = gtk_stack_new()
        g_object_ref_sink(UnsafeMutableRawPointer(widget))
        gtk_stack_set_hhomogeneous(stack, 1)
        gtk_stack_set_vhomogeneous(stack, 1)
        cgtk_connect_notify(
            UnsafeMutableRawPointer(widget), "notify::transition-running",
            { _, _, data in
                MainActor.assumeIsolated {
                    Unmanaged<GTKNavigationStack>.fromOpaque(data!).takeUnretainedValue().removeLeavingPages()
                }
            }, Unmanaged.passUnretained(self).toOpaque())
        update(transition: false)
        observeApplication()
    }

    isolated deinit { g_object_unref(UnsafeMutableRawPointer(widget)) }

    /// The widget showing `controller`, if it is in the stack.
    public func page(for controller: ViewController) -> UnsafeMutablePointer<GtkWidget>? {
        pages.first { $0.controller === controller }?.widget
    }

    /// A button that goes back: `popViewController(animated: true)` on the navigation
    /// controller, whose change the stack then follows. Put it in a page or a header bar.
    public func makeBackButton(label: String = "Back") -> UnsafeMutablePointer<GtkWidget> {
        let button = gtk_button_new_with_label(label)!
        cgtk_connect(
            UnsafeMutableRawPointer(button), "clicked",
            { _, data in
                MainActor.assumeIsolated {
                    Unmanaged<GTKNavigationStack>.fromOpaque(data!).takeUnretainedValue().goBack()
                }
            }, Unmanaged.passUnretained(self).toOpaque())
        return button
    }

    /// Goes back one controller: `popViewController(animated: true)` on the navigation controller.
    public func goBack() {
        _ = navigationController.popViewController(animated: true)
        update()
    }

    /// Brings the pages in line with the navigation controller's stack now: builds the pages
    /// of controllers that have none, shows the top, and removes the pages of controllers that
    /// left. Structural changes in the application's windows call it; calling it again changes
    /// nothing.
    public func update() {
        update(transition: true)
        observeApplication()
    }

    private func update(transition: Bool) {
        let wanted = navigationController.viewControllers
        let oldTop = pages.last
        var kept: [Page] = []
        for controller in wanted {
            if let page = pages.first(where: { $0.controller === controller }) {
                kept.append(page)
            } else {
                pagesMade += 1
                let page = Page(
                    controller: controller, widget: build(self, controller), name: "page-\(pagesMade)")
                gtk_stack_add_named(stack, page.widget, page.name)
                kept.append(page)
            }
        }
        let gone = pages.filter { page in !kept.contains { $0.name == page.name } }
        pages = kept
        leaving += gone
        if let top = pages.last, top.name != oldTop?.name {
            let deeper = oldTop.map { old in pages.contains { $0.name == old.name } } ?? false
            let type =
                !transition || oldTop == nil
                ? GTK_STACK_TRANSITION_TYPE_NONE
                : deeper ? GTK_STACK_TRANSITION_TYPE_SLIDE_LEFT : GTK_STACK_TRANSITION_TYPE_SLIDE_RIGHT
            gtk_stack_set_visible_child_full(stack, top.name, type)
        }
        removeLeavingPages()
    }

    /// Removes the pages of controllers that left, unless a transition still shows one.
    private func removeLeavingPages() {
        guard !leaving.isEmpty, gtk_stack_get_transition_running(stack) == 0 else { return }
        for page in leaving { gtk_stack_remove(stack, page.widget) }
        leaving.removeAll()
    }

    private func observeApplication() {
        guard observer == nil else { return }
        observer = HierarchyChangeObserver.attach(to: navigationController.application, owner: self) {
            [unowned self] in update()
        }
    }
}

/// Calls `changed` after every structural change in an application's windows; holds what it
/// calls for, so an adapter lives as long as the application it observes.
@MainActor
final class HierarchyChangeObserver: LifecycleObserver {
    let changed: @MainActor () -> Void
    /// The adapter `changed` updates, kept alive with the application's observers.
    let owner: AnyObject

    private init(owner: AnyObject, _ changed: @escaping @MainActor () -> Void) {
        self.owner = owner
        self.changed = changed
    }

    /// Adds an observer for `owner` to `application`'s observers; `nil` (nothing added) while
    /// there is no application yet.
    static func attach(
        to application: Application?, owner: AnyObject, _ changed: @escaping @MainActor () -> Void
    ) -> HierarchyChangeObserver? {
        guard let application else { return nil }
        let observer = HierarchyChangeObserver(owner: owner, changed)
        application.addObserver(observer)
        return observer
    }

    func hierarchyDidChange(in window: Window) { changed() }
}
