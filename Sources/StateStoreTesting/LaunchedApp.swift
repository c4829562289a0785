import StateStore

/// One launch of an app, as the app's own launch code makes it: the `Application` on the
/// store, and the window a test looks at.
///
/// An app whose launch type already has these two properties conforms in one line
/// (`extension MailApp: LaunchedApp {}`), and its tests then reach its screens through its
/// own accessors. A launch that needs no type of its own returns a ``LaunchedWindow``.
@MainActor
public protocol LaunchedApp {
    /// The application the launch made, on the store it was given.
    var application: Application { get }
    /// The window the test looks at: the one the launch restored or filled.
    var window: Window { get }
}

/// An application and its window: a ``LaunchedApp`` for a launch written inline in a test.
@MainActor
public final class LaunchedWindow: LaunchedApp {
    /// The application the launch made.
    public let application: Application
    /// The window the launch restored or filled.
    public let window: Window

    /// The launch's application and window.
    public init(application: Application, window: Window) {
        self.application = application
        self.window = window
    }
}
