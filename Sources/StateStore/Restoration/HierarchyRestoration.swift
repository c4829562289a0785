/// What ``Application/restoreHierarchyWithReport(in:)`` did with a window scene's archive.
public struct HierarchyRestoration: Sendable, Hashable {
    /// How the restoration ended.
    public enum Outcome: Sendable, Hashable {
        /// The store holds no archive for the scene (or an empty one): the app fills the window.
        case nothingToRestore
        /// The hierarchy was rebuilt and is on screen (perhaps without ``notRebuilt``).
        case restored
        /// The archive could not be rebuilt at all: it was set aside (kept for
        /// `statectl inspect --hierarchy --set-aside`) for `reason`, the window is empty, and
        /// every state is kept.
        case setAside(reason: String)
        /// The previous launches died while restoring; the archive was set aside.
        case crashLoopSkipped(interruptedAttempts: Int)
    }

    /// The window's scene identifier.
    public var scene: String
    /// How the restoration ended.
    public var outcome: Outcome
    /// Archived controllers that could not be rebuilt, with what they contained (their states
    /// are kept in the store).
    public var notRebuilt: [HierarchyArchive.Omission] = []
    /// Controllers the previous session could not archive at all (see ``HierarchyArchive/unarchived``).
    public var unarchived: [HierarchyArchive.Omission] = []
    /// States moved because a controller's code now gives it another restoration identifier
    /// than the archive knew: from the archived path to the current one.
    public var movedStates: [Move] = []

    /// One state that followed a changed restoration identifier.
    public struct Move: Sendable, Hashable {
        /// The state's path under the archived restoration identifier.
        public var from: RestorationPath
        /// The state's path under the controller's current restoration identifier, where it now is.
        public var to: RestorationPath
    }

    /// Whether a hierarchy was put in the window (what ``Application/restoreHierarchy(in:)`` returns).
    public var restored: Bool { outcome == .restored }
}
