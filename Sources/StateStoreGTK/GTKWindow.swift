import Foundation
import StateStore
import StateStoreGTK4

/// A `GtkApplicationWindow` that shows a `Window`: what GTK says happens to the window becomes
/// the engine's calls.
///
/// | GTK | engine |
/// |---|---|
/// | `show` | `Window.makeKeyAndVisible()`: the first time, the root controller (or the top of its presentations) appears |
/// | `notify::is-active`, active | `Window.makeKeyAndVisible()`: the window becomes the application's key window |
/// | `hide`, or the surface minimized (`notify::state`) | `Application.saveVisibleState()`: a flush point. The controllers stay appeared, as a UIKit scene's do in the background |
/// | `close-request` | `Application.saveVisibleState()`, then, when another window of the app stays open, `Window.close()` (the scene is gone: a relaunch does not rebuild it). The last window's scene is kept: GTK's `shutdown` follows, and `Application.terminate()` closes it as the app quits |
/// | `notify::default-width`, `notify::default-height` (the user resized it) | `Window.resize(to:)`: `viewWillTransition(to:with:)`, size classes and layout; the size is saved once resizing pauses for 300 ms, and at `shutdown` |
///
/// What the engine does to the controllers inside the window, two adapters show:
///
/// | engine | GTK |
/// |---|---|
/// | a `NavigationController`'s push, pop and `setViewControllers` (and the stack a relaunch restored) | ``GTKNavigationStack``: a `GtkStack` with a page per controller, the top shown, sliding left going deeper and right going back; its back button pops |
/// | `present(_:animated:)`, `dismiss(animated:completion:)` (and a presentation a relaunch restored) | ``GTKPresentation``: a modal `GtkWindow` transient for this one, opened and destroyed with the presentation; closing it (its close button, Escape) dismisses the presented controller |
///
/// One point is one GTK logical pixel. Made by ``GTKApplication/makeWindow(for:title:)``.
@MainActor
public final class GTKWindow {
    /// The engine's window this GTK window shows.
    public let window: Window

    /// The `GtkApplicationWindow` (as a `GtkWindow`).
    public let pointer: UnsafeMutablePointer<GtkWindow>

    /// The GTK window as a widget, for `gtk_window_set_child` and the like.
    public var widget: UnsafeMutablePointer<GtkWidget> { cgtk_widget(pointer) }

    /// Whether the window's surface is minimized now.
    public private(set) var isMinimized = false

    /// How long resizing must pause before the window's size is saved.
    public var sizeSaveDelay: Duration = .milliseconds(300)

    private weak var owner: GTKApplication?
    private var surface: OpaquePointer?
    private var pendingSizeSave: guint = 0
    private var savedSize: SavedSize?

    /// The window's size as the store keeps it, under ``sizePath``.
    struct SavedSize: Codable, Sendable, Equatable {
        var width: Int
        var height: Int
    }

    init(window: Window, application: GTKApplication, title: String?) {
        self.window = window
        owner = application
        pointer = cgtk_window(gtk_application_window_new(application.pointer))
        if let title { gtk_window_set_title(pointer, title) }
        if let saved = try? window.application?.store?.restore(SavedSize.self, for: sizePath),
            saved.width > 0, saved.height > 0
        {
            savedSize = saved
            window.resize(to: Size(width: Double(saved.width), height: Double(saved.height)))
        }
        gtk_window_set_default_size(pointer, Int32(window.size.width.rounded()), Int32(window.size.height.rounded()))
        connectSignals()
    }

    /// Where the store keeps this window's size: `gtk-window-size/<scene identifier>`.
    public var sizePath: RestorationPath {
        (try? RestorationPath(components: ["gtk-window-size", window.sceneIdentifier])) ?? "gtk-window-size"
    }

    /// Shows the window and gives it the focus (`gtk_window_present`); `show` makes the engine's
    /// window key and visible.
    public func present() {
        gtk_window_present(pointer)
    }

    /// Writes the window's size to the store now, unless it is the size last written.
    public func saveSize() {
        if pendingSizeSave != 0 {
            g_source_remove(pendingSizeSave)
            pendingSizeSave = 0
        }
        guard !window.isClosed, let store = window.application?.store else { return }
        let size = SavedSize(width: Int(window.size.width.rounded()), height: Int(window.size.height.rounded()))
        guard size != savedSize else { return }
        do {
            try store.save(size, for: sizePath)
            savedSize = size
        } catch {
            window.application?.logger.info(
                "window size not saved",
                metadata: ["statestore.error": "\(error)", "statestore.scene": "\(window.sceneIdentifier)"])
        }
    }

    // MARK: Events

    func shown() {
        window.makeKeyAndVisible()
    }

    func activeChanged() {
        guard gtk_window_is_active(pointer) != 0, window.isVisible else { return }
        window.makeKeyAndVisible()
    }

    func hidden() {
        window.application?.saveVisibleState()
    }

    func surfaceStateChanged() {
        guard let surface else { return }
        let minimized = cgtk_state_is_minimized(gdk_toplevel_get_state(cgtk_toplevel(surface))) != 0
        guard minimized != isMinimized else { return }
        isMinimized = minimized
        if minimized { window.application?.saveVisibleState() }
    }

    func closeRequested() {
        saveSize()
        guard let application = window.application else { return }
        application.saveVisibleState()
        if let owner, owner.windows.contains(where: { $0 !== self && !$0.window.isClosed }) {
            if let store = application.store { _ = try? store.remove(sizePath) }
            window.close()
        }
    }

    func defaultSizeChanged() {
        var width: Int32 = 0, height: Int32 = 0
        gtk_window_get_default_size(pointer, &width, &height)
        guard width > 0, height > 0 else { return }
        window.resize(to: Size(width: Double(width), height: Double(height)))
        scheduleSizeSave()
    }

    func realized() {
        guard let made = gtk_native_get_surface(cgtk_native(pointer)), cgtk_is_toplevel(made) != 0 else { return }
        surface = made
        cgtk_connect_notify(
            UnsafeMutableRawPointer(made), "notify::state",
            { _, _, data in MainActor.assumeIsolated { GTKWindow.from(data).surfaceStateChanged() } }, selfPointer)
    }

    func destroyed() {
        if pendingSizeSave != 0 {
            g_source_remove(pendingSizeSave)
            pendingSizeSave = 0
        }
        if let surface {
            g_signal_handlers_disconnect_matched(
                UnsafeMutableRawPointer(surface), G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, selfPointer)
        }
        g_signal_handlers_disconnect_matched(
            UnsafeMutableRawPointer(pointer), G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, selfPointer)
        owner?.windowDestroyed(self)
    }

    private func scheduleSizeSave() {
        if pendingSizeSave != 0 { g_source_remove(pendingSizeSave) }
        let milliseconds =
            sizeSaveDelay.components.seconds * 1000 + sizeSaveDelay.components.attoseconds / 1_000_000_000_000_000
        pendingSizeSave = g_timeout_add(
            guint(max(0, milliseconds)),
            { data in
                MainActor.assumeIsolated {
                    let window = GTKWindow.from(data)
                    window.pendingSizeSave = 0
                    window.saveSize()
                }
                return gboolean(0)  // G_SOURCE_REMOVE
            }, selfPointer)
    }

    // MARK: Signals

    private var selfPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ data: UnsafeMutableRawPointer?) -> GTKWindow {
        Unmanaged<GTKWindow>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Held until GTK destroys the window: the signal handlers point at this object.
    private var retainedUntilDestroyed: GTKWindow?

    private func connectSignals() {
        let instance = UnsafeMutableRawPointer(pointer)
        let data = selfPointer
        retainedUntilDestroyed = self
        cgtk_connect(instance, "show", { _, data in MainActor.assumeIsolated { GTKWindow.from(data).shown() } }, data)
        cgtk_connect(instance, "hide", { _, data in MainActor.assumeIsolated { GTKWindow.from(data).hidden() } }, data)
        cgtk_connect(
            instance, "realize", { _, data in MainActor.assumeIsolated { GTKWindow.from(data).realized() } }, data)
        cgtk_connect(
            instance, "destroy",
            { _, data in
                MainActor.assumeIsolated {
                    let window = GTKWindow.from(data)
                    window.destroyed()
                    window.retainedUntilDestroyed = nil
                }
            }, data)
        cgtk_connect_boolean(
            instance, "close-request",
            { _, data in
                MainActor.assumeIsolated { GTKWindow.from(data).closeRequested() }
                return gboolean(0)  // GTK closes the window
            }, data)
        cgtk_connect_notify(
            instance, "notify::is-active",
            { _, _, data in MainActor.assumeIsolated { GTKWindow.from(data).activeChanged() } }, data)
        for property in ["notify::default-width", "notify::default-height"] {
            cgtk_connect_notify(
                instance, property,
                { _, _, data in MainActor.assumeIsolated { GTKWindow.from(data).defaultSizeChanged() } }, data)
        }
    }
}
