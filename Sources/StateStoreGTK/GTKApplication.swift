import Foundation
import StateStore
import StateStoreGTK4

/// A `GtkApplication` that drives an `Application`: GTK's `activate` launches it, GTK's
/// `shutdown` terminates it.
///
/// ```swift
/// let gtk = GTKApplication(identifier: "org.example.Mail") { gtk in
///     let application = Application(store: try StateStore(path: path), storyboard: storyboard)
///     let window = Window(size: Size(width: 640, height: 480), application: application)
///     let gtkWindow = gtk.makeWindow(for: window)  // the size the last launch saved, if any
///     if try !application.restoreHierarchy(in: window) { window.rootViewController = FirstController() }
///     // build the window's widgets from the controllers, then:
///     gtkWindow.present()
///     return application
/// }
/// exit(gtk.run())
/// ```
///
/// - `activate` (the first time): the main dispatch queue is served from GLib's loop (see
///   ``GTKMainQueue``), then `launch` runs: it creates the `Application` and its windows and
///   restores the hierarchy the store holds. A later `activate` (the app launched again while it
///   runs, for a unique application) presents the windows it has.
/// - GLib's own low-memory warnings (`GMemoryMonitor`) feed the application's memory monitors:
///   see ``GLibMemoryWarnings``.
/// - `shutdown` (the last window closed, `g_application_quit`, the session ending):
///   `Application.terminate()`, so everything visible is written before ``run(arguments:)``
///   returns.
///
/// Everything runs on the main thread, GTK's, which is also the main actor's.
@MainActor
public final class GTKApplication {
    /// What creates the `Application` when GTK activates the app the first time.
    public typealias Launch = @MainActor (GTKApplication) throws -> Application

    /// The `GtkApplication`.
    public let pointer: UnsafeMutablePointer<GtkApplication>

    /// The application `launch` created, from GTK's first `activate` on.
    public private(set) var application: Application?

    /// The windows made with ``makeWindow(for:title:)`` that GTK has not destroyed yet.
    public private(set) var windows: [GTKWindow] = []

    /// Whether GLib's own low-memory warnings feed the application's memory monitors: when
    /// `true` (the default), the first `activate` makes a ``GLibMemoryWarnings`` for each
    /// monitor the launched application observes. Set it before ``run(arguments:)``.
    public var feedsGLibMemoryWarnings = true

    /// What feeds GLib's low-memory warnings to the application's monitors, from the first
    /// `activate` on (empty when ``feedsGLibMemoryWarnings`` is `false` or the application
    /// observes no monitor).
    public private(set) var glibMemoryWarnings: [GLibMemoryWarnings] = []

    /// The error `launch` threw, if it did: GTK's loop was then quit and ``run(arguments:)``
    /// returns 1.
    public private(set) var launchError: (any Error)?

    private let launch: Launch

    /// Creates the `GtkApplication`.
    ///
    /// - Parameters:
    ///   - identifier: The application's D-Bus name (`org.example.Mail`), or `nil`.
    ///   - flags: GIO's application flags. The default, `G_APPLICATION_NON_UNIQUE`, starts an
    ///     instance of its own at each launch, with or without a session bus; the store's scene
    ///     claims keep two instances on one database from showing, and saving over, the same
    ///     window.
    ///   - launch: Creates the `Application` on GTK's first `activate`.
    public init(
        identifier: String?, flags: GApplicationFlags = G_APPLICATION_NON_UNIQUE, launch: @escaping Launch
    ) {
        pointer = gtk_application_new(identifier, flags)
        self.launch = launch
        let data = Unmanaged.passUnretained(self).toOpaque()
        cgtk_connect(
            pointer, "activate",
            { _, data in
                MainActor.assumeIsolated {
                    Unmanaged<GTKApplication>.fromOpaque(data!).takeUnretainedValue().activate()
                }
            }, data)
        cgtk_connect(
            pointer, "shutdown",
            { _, data in
                MainActor.assumeIsolated {
                    Unmanaged<GTKApplication>.fromOpaque(data!).takeUnretainedValue().shutdown()
                }
            }, data)
    }

    isolated deinit { g_object_unref(pointer) }

    /// Runs GTK's main loop until the application quits (`g_application_run`); returns its
    /// exit status. `Application.terminate()` has run by then.
    public func run(arguments: [String] = CommandLine.arguments) -> Int32 {
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let status = g_application_run(cgtk_application(pointer), Int32(arguments.count), &argv)
        return launchError == nil ? status : 1
    }

    /// Creates a `GtkApplicationWindow` of this application that shows `window`: see ``GTKWindow``.
    ///
    /// When the store holds the size this window's scene had at the last launch, `window` takes
    /// it (`Window.resize(to:)`) and the GTK window opens at it; otherwise it opens at
    /// `window`'s size.
    public func makeWindow(for window: Window, title: String? = nil) -> GTKWindow {
        let made = GTKWindow(window: window, application: self, title: title)
        windows.append(made)
        return made
    }

    func windowDestroyed(_ window: GTKWindow) {
        windows.removeAll { $0 === window }
    }

    private func activate() {
        if application != nil {
            for window in windows { window.present() }
            return
        }
        GTKMainQueue.install()
        do {
            let launched = try launch(self)
            application = launched
            if feedsGLibMemoryWarnings {
                glibMemoryWarnings = launched.observedMemoryMonitors.map { GLibMemoryWarnings(feeding: $0) }
            }
        } catch {
            launchError = error
            g_application_quit(cgtk_application(pointer))
        }
    }

    private func shutdown() {
        // Each window's size is written with the states, in the same flush.
        for window in windows { window.saveSize() }
        for warnings in glibMemoryWarnings { warnings.stop() }
        application?.terminate()
    }
}
