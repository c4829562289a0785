import StateStore
import StateStoreGTK4

/// Shows the controller a `ViewController` presents (`present(_:animated:)`) as a modal GTK
/// dialog over a ``GTKWindow``.
///
/// | engine | GTK |
/// |---|---|
/// | `present(_:animated:)` on the presenter (or on a controller it contains) | a `GtkWindow` (`gtk_window_new`) of the main window's application, modal (`gtk_window_set_modal`) and transient for the main window (`gtk_window_set_transient_for`), with a header bar, the title and the content the closures give |
/// | `dismiss(animated:completion:)` | the dialog is destroyed |
/// | the presented controller a relaunch restored (`Application.restoreHierarchy(in:)`) | the dialog, shown again once the main window is mapped and presented (so it opens over it) |
///
/// | GTK | engine |
/// |---|---|
/// | the dialog's close button, Escape, or any other `close-request` | `dismiss(animated: true)` on the presented controller; the dialog closes when the engine has dismissed it |
///
/// The main window stays on screen under the dialog: present with a style that keeps the
/// presenter visible (`formSheet`, `pageSheet` or `overFullScreen`, set on the controller when it
/// is made, so a relaunch rebuilds it so too), and the engine's controllers under it stay
/// appeared as they are on screen. With the default, `fullScreen`, they disappear in the engine
/// while GTK still shows them.
///
/// The engine is the model: the dialog is there while the presenter's
/// `presentedViewController` is, whatever presented or dismissed it. The adapter observes the
/// presenter's application (a `LifecycleObserver`, told of every structural change) and is held
/// by its observers, so it lives as long as the application does; a presenter not yet in an
/// application's window is followed once ``update()`` is called after it is.
@MainActor
public final class GTKPresentation {
    /// Builds what the dialog shows for a presented controller.
    public typealias ContentBuilder = @MainActor (ViewController) -> UnsafeMutablePointer<GtkWidget>

    /// The controller whose presentations are shown: usually the window's root controller.
    public let presenter: ViewController

    /// The main window the dialogs are modal over.
    public let parent: GTKWindow

    /// The size a dialog opens at, in GTK logical pixels.
    public var defaultSize: (width: Int, height: Int) = (360, 240)

    /// The dialog on screen now, if any.
    public private(set) var dialog: UnsafeMutablePointer<GtkWindow>?

    /// The presented controller the dialog shows, if any.
    public private(set) var presented: ViewController?

    private let title: @MainActor (ViewController) -> String
    private let content: ContentBuilder
    private var observer: HierarchyChangeObserver?
    private var selfPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Shows `presenter`'s presented controller, if it has one, once `parent` is mapped, and
    /// follows its presentations and dismissals from then on.
    ///
    /// - Parameters:
    ///   - presenter: The controller whose `presentedViewController` is shown.
    ///   - parent: The main window the dialog is modal over.
    ///   - title: The dialog's title for a presented controller.
    ///   - content: Builds the dialog's content for a presented controller; called each time one
    ///     is presented (or restored).
    public init(
        presenter: ViewController, over parent: GTKWindow,
        title: @escaping @MainActor (ViewController) -> String,
        content: @escaping ContentBuilder
    ) {
        self.presenter = presenter
        self.parent = parent
        self.title = title
        self.content = content
        cgtk_connect(
            UnsafeMutableRawPointer(parent.widget), "map",
            { _, data in
                MainActor.assumeIsolated {
                    Unmanaged<GTKPresentation>.fromOpaque(data!).takeUnretainedValue().parentMapped()
                }
            }, selfPointer)
        update()
    }

    /// Brings the dialog in line with the engine now: opens one for a presented controller
    /// that has none (once the main window is mapped), closes the one of a controller that was
    /// dismissed. Structural changes in the application's windows call it; calling it again
    /// changes nothing.
    public func update() {
        observeApplication()
        let current = presenter.presentedViewController
        guard current !== presented || (current != nil && dialog == nil) else { return }
        if current !== presented { closeDialog() }
        presented = current
        guard let current, gtk_widget_get_mapped(parent.widget) != 0 else { return }
        openDialog(for: current)
    }

    /// The main window was mapped: a dialog waiting for it opens once GTK is idle, after
    /// `gtk_window_present` has finished with the main window (which, without a window manager,
    /// raises it), so the dialog opens over it.
    private func parentMapped() {
        g_idle_add(
            { data in
                MainActor.assumeIsolated { Unmanaged<GTKPresentation>.fromOpaque(data!).takeUnretainedValue().update() }
                return gboolean(0)  // G_SOURCE_REMOVE
            }, selfPointer)
    }

    /// Asks the engine to dismiss the presented controller, as the dialog's close button does.
    public func dismissPresented() {
        guard let presented else { return }
        presented.dismiss(animated: true)
        update()
    }

    private func openDialog(for controller: ViewController) {
        let window = cgtk_window(gtk_window_new())!
        dialog = window
        gtk_window_set_title(window, title(controller))
        gtk_window_set_modal(window, 1)
        gtk_window_set_transient_for(window, parent.pointer)
        gtk_window_set_destroy_with_parent(window, 1)
        // A window of the main window's application, so the application's shortcuts (`app.quit`'s
        // ctrl+q, say) work in it too.
        gtk_window_set_application(window, gtk_window_get_application(parent.pointer))
        gtk_window_set_default_size(window, Int32(defaultSize.width), Int32(defaultSize.height))
        let header = gtk_header_bar_new()
        gtk_window_set_titlebar(window, header)
        gtk_window_set_child(window, content(controller))
        // Escape closes it, as it closes a GtkDialog: the window's own `window.close` action,
        // which emits `close-request`.
        let shortcuts = gtk_shortcut_controller_new()!
        gtk_shortcut_controller_set_scope(shortcuts, GTK_SHORTCUT_SCOPE_GLOBAL)
        gtk_shortcut_controller_add_shortcut(
            shortcuts,
            gtk_shortcut_new(
                gtk_keyval_trigger_new(guint(GDK_KEY_Escape), GdkModifierType(0)), gtk_named_action_new("window.close"))
        )
        gtk_widget_add_controller(cgtk_widget(window), shortcuts)
        cgtk_connect_boolean(
            UnsafeMutableRawPointer(window), "close-request",
            { _, data in
                MainActor.assumeIsolated {
                    Unmanaged<GTKPresentation>.fromOpaque(data!).takeUnretainedValue().dismissPresented()
                }
                return gboolean(1)  // the engine's dismissal closes it
            }, selfPointer)
        cgtk_connect(
            UnsafeMutableRawPointer(window), "destroy",
            { window, data in
                MainActor.assumeIsolated {
                    let presentation = Unmanaged<GTKPresentation>.fromOpaque(data!).takeUnretainedValue()
                    // Destroyed with its parent (the app quitting): nothing to close any more.
                    if UnsafeMutableRawPointer(presentation.dialog) == window { presentation.dialog = nil }
                }
            }, selfPointer)
        gtk_window_present(window)
    }

    private func closeDialog() {
        guard let window = dialog else { return }
        dialog = nil
        g_signal_handlers_disconnect_matched(
            UnsafeMutableRawPointer(window), G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, selfPointer)
        gtk_window_destroy(window)
    }

    private func observeApplication() {
        guard observer == nil else { return }
        observer = HierarchyChangeObserver.attach(to: presenter.application, owner: self) { [unowned self] in update() }
    }
}
