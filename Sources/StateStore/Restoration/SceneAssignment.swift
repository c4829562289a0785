import Foundation
import Logging

/// The scene a window of an application with a store shows, and why: whether this process holds
/// it, and which scenes it passed over because another live process held them.
///
/// Read it from ``Window/sceneAssignment`` after creating a window. A window that passed over a
/// held scene was also reported to ``RestorationCoordinator/errorHandler``
/// (``RestorationError/sceneHeld(_:)``) and logged.
public struct SceneAssignment: Sendable, Hashable, CustomStringConvertible {
    /// Whether the window's process holds its scene.
    public enum Outcome: Sendable, Hashable {
        /// This process holds the scene until the window closes or the process ends: no other
        /// process's window shows it meanwhile.
        case claimed
        /// The window shows a scene another live process holds, as
        /// ``SceneConflictPolicy/openReadOnly`` asked, and saves nothing of it.
        case readOnly(heldBy: SceneHolder)
        /// The scene is not claimed: the store is in memory or read-only, or its claim file
        /// could not be made or locked (the reason; also reported). Nothing stops another
        /// process from showing it.
        case notClaimed(reason: String)
    }

    /// The identifier the window was given, or `nil`.
    public var requested: String?
    /// The scene the window shows.
    public var identifier: String
    /// Whether the window's process holds the scene, and if not, why.
    public var outcome: Outcome
    /// The scene the window would have shown and did not, because another live process held
    /// it (the identifier it was given, or the default scene), with its holder; `nil` when the
    /// window shows the scene it would have. Saved scenes a window given no identifier passed
    /// over on its way to a free one are not listed.
    public var passedOver: SceneHolder?
    /// How long the window waited for a held scene (``SceneConflictPolicy/wait(timeout:)``).
    public var waited: Duration

    /// An assignment with the given values; by default nothing was passed over and nothing waited for.
    public init(
        requested: String?, identifier: String, outcome: Outcome, passedOver: SceneHolder? = nil,
        waited: Duration = .zero
    ) {
        self.requested = requested
        self.identifier = identifier
        self.outcome = outcome
        self.passedOver = passedOver
        self.waited = waited
    }

    /// `scene "window1" (claimed; "main" is held by process 4242 since …)`.
    public var description: String {
        var text = "scene \"\(identifier)\""
        switch outcome {
        case .claimed: text += " (claimed"
        case .readOnly(let holder): text += " (read-only: held by \(holder)"
        case .notClaimed(let reason): text += " (not claimed: \(reason)"
        }
        if let holder = passedOver { text += "; \"\(holder.scene)\" is held by \(holder)" }
        return text + ")"
    }
}

/// What a window of an application with a store keeps: its scene's assignment, and the claim
/// until the window closes or is released. Either way the claim goes only once everything the
/// window's process handed to the writer before is written (see
/// ``RestorationWriter/release(afterPendingWrites:)``).
final class WindowScene: Sendable {
    let assignment: SceneAssignment
    /// Whether the window shows its scene read-only.
    let isReadOnly: Bool
    /// The coordinator that chose the scene: only it lets the claim go.
    let owner: WeakCoordinator
    private let claim: Lock<SceneClaim?>
    private let writer: RestorationWriter

    @MainActor
    init(_ assignment: SceneAssignment, claim: SceneClaim?, owner: RestorationCoordinator) {
        self.assignment = assignment
        if case .readOnly = assignment.outcome { isReadOnly = true } else { isReadOnly = false }
        self.claim = Lock(claim)
        writer = owner.writer
        self.owner = WeakCoordinator()
        self.owner.coordinator = owner
    }

    /// The window closed: the claim goes once what was handed over before is written.
    func release() {
        guard let taken = claim.withLock({ $0.take() }) else { return }
        writer.release(afterPendingWrites: taken)
    }

    /// The window's process died: the claim goes now, whatever is still to be written (the
    /// kernel drops a dead process's locks).
    func dropClaim() {
        let taken = claim.withLock { $0.take() }
        withExtendedLifetime(taken) {}
    }

    deinit {
        // A window released without closing (its application let go): what its coordinator
        // still holds for it is handed over first, at the main actor's next turn.
        guard let taken = claim.withLock({ $0.take() }) else { return }
        let (owner, writer) = (owner, writer)
        Task { @MainActor in
            owner.coordinator?.submit()
            writer.release(afterPendingWrites: taken)
        }
    }
}

extension Window {
    /// The scene this window shows and why (see ``SceneAssignment``); `nil` when its
    /// application saves into no store.
    public var sceneAssignment: SceneAssignment? { (sceneClaim as? WindowScene)?.assignment }
}

extension RestorationCoordinator: SceneAssigning {
    func assignScene(
        requested: String?, policy: SceneConflictPolicy, openHere: [String]
    ) -> (identifier: String, claim: AnyObject?) {
        let (assignment, claim) = chooseScene(requested: requested, policy: policy, openHere: openHere)
        let scene = WindowScene(assignment, claim: claim, owner: self)
        if scene.isReadOnly { readOnlyWindows += 1 }
        if assignment.passedOver != nil || assignment.outcome != .claimed {
            var metadata: Logger.Metadata = [
                "statestore.scene": "\(assignment.identifier)", "statestore.assignment": "\(assignment)",
            ]
            if let requested { metadata["statestore.requested_scene"] = "\(requested)" }
            store.options.logger.info("window scene assigned", metadata: metadata)
        }
        if assignment.passedOver != nil || scene.isReadOnly { report(.sceneHeld(assignment)) }
        return (assignment.identifier, scene)
    }

    /// The scene a new window shows (see ``Window/init(size:orientation:sceneIdentifier:whenHeld:application:)``).
    /// A scene another live process holds is never the answer, unless read-only: when a claim
    /// cannot be taken for a reason of the file system (a claim file that is a folder or a
    /// link, a full disk), the next candidate is tried; only when none can be claimed does the
    /// window show, unclaimed and reported, a scene no live process was found holding.
    private func chooseScene(
        requested: String?, policy: SceneConflictPolicy, openHere: [String]
    ) -> (SceneAssignment, SceneClaim?) {
        if store.options.readOnly || store.sceneClaimFolder == nil {
            let identifier = requested ?? Window.firstFreeSceneIdentifier(openHere: openHere) { _ in true }
            let reason = store.options.readOnly ? "the store is read-only" : "the store is in memory"
            return (
                SceneAssignment(requested: requested, identifier: identifier, outcome: .notClaimed(reason: reason)), nil
            )
        }
        let first =
            requested ?? (openHere.contains(Window.defaultSceneIdentifier) ? nil : Window.defaultSceneIdentifier)
        var passedOver: SceneHolder?
        var waited = Duration.zero
        /// The first candidate that could not be claimed for a reason of the file system, not
        /// known to be held, and why.
        var unclaimable: (scene: String, error: StateStoreError)?
        enum Try {
            case claimed(SceneClaim)
            case held(SceneHolder)
            case failed
        }
        func claim(_ scene: String) -> Try {
            do {
                switch try store.claimScene(scene) {
                case .claimed(let claim)?: return .claimed(claim)
                case .held(let holder)?: return .held(holder)
                case nil: return .failed
                }
            } catch {
                if unclaimable == nil { unclaimable = (scene, error) }
                return .failed
            }
        }
        func claimed(_ scene: String, _ claim: SceneClaim) -> (SceneAssignment, SceneClaim?) {
            // A scene passed over because its claim file could not be used is said too: its
            // saved state is not restored into this window.
            if let unclaimable {
                report(.store(unclaimable.error))
                store.options.logger.info(
                    "scene passed over: its claim file cannot be used",
                    metadata: [
                        "statestore.scene": "\(unclaimable.scene)", "statestore.error": "\(unclaimable.error)",
                    ])
            }
            return (
                SceneAssignment(
                    requested: requested, identifier: scene, outcome: .claimed, passedOver: passedOver, waited: waited),
                claim
            )
        }
        if let first {
            switch claim(first) {
            case .claimed(let taken): return claimed(first, taken)
            case .failed: break
            case .held(var holder):
                switch policy {
                case .openAnotherScene:
                    break
                case .openReadOnly:
                    return (
                        SceneAssignment(requested: requested, identifier: first, outcome: .readOnly(heldBy: holder)),
                        nil
                    )
                case .wait(let timeout):
                    store.options.logger.info(
                        "waiting for a held scene",
                        metadata: [
                            "statestore.scene": "\(first)", "statestore.holder": "\(holder)",
                            "statestore.timeout": "\(timeout)",
                        ])
                    let clock = ContinuousClock()
                    let start = clock.now
                    while clock.now - start < timeout {
                        // Polled: a blocking lock cannot be given up at a deadline.
                        usleep(10_000)
                        let attempt = claim(first)
                        waited = clock.now - start
                        if case .claimed(let taken) = attempt { return claimed(first, taken) }
                        if case .held(let still) = attempt { holder = still } else { break }
                    }
                }
                passedOver = holder
            }
        }
        var storeError: StateStoreError?
        var saved: [String] = []
        var shared: Set<String> = []
        do {
            saved = try store.savedSceneIdentifiers()
            shared = Set(try store.scenes().filter { $0.pathPrefix == "" }.map(\.identifier))
        } catch {
            // The new scenes below are still tried.
            storeError = error
        }
        if requested == nil {
            // A scene some instance that is gone left, before a new one.
            for scene in saved where scene != first && !openHere.contains(scene) {
                if case .claimed(let taken) = claim(scene) { return claimed(scene, taken) }
            }
        }
        // A new scene: none a window has, none saved, and none that saves under the default
        // scene's paths (archived before scenes had identities; it shares the default's claim).
        var number = 1
        var failures = 0
        while failures < 16 {
            let scene = "window\(number)"
            number += 1
            guard scene != first, !openHere.contains(scene), !saved.contains(scene), !shared.contains(scene) else {
                continue
            }
            switch claim(scene) {
            case .claimed(let taken): return claimed(scene, taken)
            case .held: continue
            case .failed: failures += 1
            }
        }
        // Nothing could be claimed (the claim folder cannot be made or written, descriptors ran
        // out): reported, and the window shows, unclaimed, a scene no process can hold (its claim
        // file does not exist); else the one it would have, read-only.
        let error = unclaimable?.error ?? storeError
        if let error { report(.store(error)) }
        let reason = error.map { "\($0)" } ?? "no scene could be claimed"
        let fresh = Window.firstFreeSceneIdentifier(openHere: openHere) { !saved.contains($0) && !shared.contains($0) }
        for candidate in [first, unclaimable?.scene, fresh].compactMap({ $0 }) where passedOver?.scene != candidate {
            guard !store.sceneMayBeClaimed(candidate) else { continue }
            return (
                SceneAssignment(
                    requested: requested, identifier: candidate, outcome: .notClaimed(reason: reason),
                    passedOver: passedOver), nil
            )
        }
        let shown = first ?? fresh
        let holder = passedOver ?? SceneHolder(scene: shown, processIdentifier: nil, since: nil, isThisProcess: false)
        return (SceneAssignment(requested: requested, identifier: shown, outcome: .readOnly(heldBy: holder)), nil)
    }

    /// Whether `window` shows its scene read-only (``SceneConflictPolicy/openReadOnly``).
    func isReadOnly(_ window: Window) -> Bool {
        readOnlyWindows > 0 && (window.sceneClaim as? WindowScene)?.isReadOnly == true
    }

    /// `window` closed: its claim goes once what was handed over before is written.
    func windowDidClose(_ window: Window) {
        guard let scene = window.sceneClaim as? WindowScene, scene.owner.coordinator === self else { return }
        if scene.isReadOnly, readOnlyWindows > 0 { readOnlyWindows -= 1 }
        scene.release()
    }
}
