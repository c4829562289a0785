/// What a new window does when the scene it would show is in use by another live process (a
/// second instance of the app on the same database), when its application saves into a store.
///
/// Two processes showing one scene would save over each other's states and hierarchy archive,
/// the last writer winning; so by default the second gets a scene of its own.
public enum SceneConflictPolicy: Sendable, Hashable {
    /// Show a scene of its own: a saved scene no live process holds, when the window was given
    /// no identifier, else a new one (see ``Window/init(size:orientation:sceneIdentifier:whenHeld:application:)``).
    /// Nothing of the held scene is restored into it. The default.
    case openAnotherScene
    /// Show the held scene as the holder last saved it, and save nothing of it: no state of
    /// its controllers, no hierarchy archive, nothing when the window closes.
    case openReadOnly
    /// Wait up to `timeout` for the holder to let go of the scene (it terminates, is killed, or
    /// closes its window), blocking the main actor meanwhile, and show the scene then, as the
    /// holder left it; when the time runs out, as ``openAnotherScene``.
    case wait(timeout: Duration)
}

/// Chooses the scene a new window shows; the restoration layer's coordinator, for an
/// application with a store. Without one, windows take the identifier they are given, or the
/// first free one in this application.
@MainActor
protocol SceneAssigning: AnyObject {
    /// The scene a window shows, and what to keep on the window (``Window/sceneClaim``); the
    /// assigner is told the window closed through `hierarchyDidChange(in:)`.
    /// - Parameters:
    ///   - requested: The identifier the window was given, `nil` for none.
    ///   - policy: What to do when the scene is held by another process.
    ///   - openHere: The scenes of the application's open windows.
    func assignScene(
        requested: String?, policy: SceneConflictPolicy, openHere: [String]
    ) -> (identifier: String, claim: AnyObject?)
}
