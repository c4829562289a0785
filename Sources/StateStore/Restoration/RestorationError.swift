/// Problems the restoration layer reports (through ``RestorationCoordinator/errorHandler``)
/// instead of crashing: each leaves the user's data where it was.
public enum RestorationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store failed; the state stays in memory and is saved again on the next disappearance.
    case store(StateStoreError)
    /// Two controllers under the same parent share a restoration identifier, so their states
    /// would overwrite each other. Neither is saved until one is renamed.
    case duplicateRestorationIdentifier(path: RestorationPath)
    /// A stored state was moved to quarantine (see `statectl inspect --quarantine`).
    case quarantined(path: RestorationPath, reason: String)
    /// ``StateRestoring/migrateRestorableState(from:data:)`` was not implemented for this version.
    case noMigration(type: String, from: Int, to: Int)
    /// The archived hierarchy names a storyboard identifier this build does not register,
    /// or cannot be read. The archive was set aside and the app starts fresh.
    case archiveUnusable(reason: String)
    /// The crash-loop guard skipped restoration after this many interrupted attempts.
    case crashLoopDetected(interruptedAttempts: Int)
    /// A controller with a restoration identifier cannot be archived (the omission says where,
    /// its type and why), so a relaunch will not rebuild it. Reported once per controller path,
    /// type and reason; `statectl inspect --hierarchy` lists it too. Its state is still saved.
    case notArchivable(HierarchyArchive.Omission)
    /// An archived controller (and what it contained) could not be rebuilt at relaunch; the
    /// rest of the hierarchy was. The archive as saved was set aside for inspection and the
    /// live archive now describes what is on screen. Its state is kept in the store.
    case notRebuilt(HierarchyArchive.Omission)
    /// The saved hierarchy was rebuilt, but a state could not follow a restoration identifier
    /// the code changed: `from` still holds it because `to` already held a state of its own.
    case stateNotMoved(from: RestorationPath, to: RestorationPath)

    /// The stored state decoded, but its JSON has members the current type no longer reads (a
    /// field renamed or removed without a version bump), which the next save would drop. The
    /// stored bytes were kept in quarantine first (`statectl inspect --quarantine`), once; the
    /// controller took what its type reads.
    case supersededKept(path: RestorationPath, members: [String])

    /// ``Application/installTerminationHandlers(signals:)`` was refused: another owner handles
    /// SIGTERM and SIGINT (see ``TerminationSignalClaim``).
    case terminationSignalsClaimed(TerminationSignalsClaimedError)

    /// A new window did not get the scene it would have shown: another live process holds it
    /// (a second instance of the app on the same database). The assignment says which scene
    /// the window shows instead, or that it shows the held one read-only.
    case sceneHeld(SceneAssignment)

    /// How the reason of an archive a read-only window could not rebuild ends: it is the
    /// holder's, and stays where it is.
    static let leftInPlace = "; left in place, as this window shows its scene read-only"

    public var description: String {
        switch self {
        case .store(let error):
            error.description
        case .duplicateRestorationIdentifier(let path):
            "Two sibling controllers share the restoration path \(path); neither is saved. Give each a distinct restorationIdentifier."
        case .quarantined(let path, let reason):
            "The state at \(path) was moved to quarantine (\(reason)); the controller starts from its default state. `statectl inspect --quarantine` shows it."
        case .noMigration(let type, let from, let to):
            "No migration of \(type) from version \(from) to \(to): implement migrateRestorableState(from:data:)."
        case .archiveUnusable(let reason):
            reason.hasSuffix(Self.leftInPlace)
                ? "The saved window hierarchy could not be rebuilt (\(reason)); the window starts fresh."
                : "The saved window hierarchy could not be rebuilt (\(reason)); it was set aside and the app starts fresh."
        case .crashLoopDetected(let attempts):
            "The last \(attempts) launches died while restoring; restoration was skipped and the archive set aside."
        case .notArchivable(let omission):
            "The controller \(omission.path) (\(omission.typeName)) cannot be archived, so a relaunch will not rebuild it: \(omission.reason). Its state is still saved."
        case .notRebuilt(let omission):
            "The archived controller \(omission.path) (\(omission.typeName)) was not rebuilt, with what it contained: \(omission.reason). The rest was restored; the archive as saved is set aside (`statectl inspect --hierarchy --set-aside`) and its states are kept."
        case .stateNotMoved(let from, let to):
            "The restoration identifier changed, but the state at \(from) was not moved to \(to), which already holds one; both are kept."
        case .supersededKept(let path, let members):
            "The state at \(path) has members its type no longer reads (\(members.joined(separator: ", "))): the stored bytes were kept in quarantine before the next save replaces them. `statectl inspect --quarantine` shows them."
        case .terminationSignalsClaimed(let error):
            error.description
        case .sceneHeld(let assignment):
            if case .readOnly(let holder) = assignment.outcome {
                "The scene \"\(assignment.identifier)\" is held by \(holder): this window shows it read-only and saves nothing of it."
            } else if let holder = assignment.passedOver {
                "The scene \"\(holder.scene)\" is held by \(holder): this window shows the scene \"\(assignment.identifier)\" instead, and restores nothing of the held one."
            } else {
                "This window shows \(assignment)."
            }
        }
    }
}
