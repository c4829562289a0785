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
    public var outcome: Outcome
    /// The scenes the window would have shown and did not, because another live process held
    /// them, in the order they were tried; empty when it got the first it tried.
    public var passedOver: [SceneHolder]
    /// How long the window waited for a held scene (``SceneConflictPolicy/wait(timeout:)``).
    public var waited: Duration

    public init(requested: String?, identifier: String, outcome: Outcome, passedOver: [SceneHolder] = [], waited: Duration = .zero) {
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
        for holder in passedOver { text += "; \"\(holder.scene)\" is held by \(holder)" }
        return text + ")"
    }
}

/// What a window of an application with a store holds: its scene's assignment, and the claim,
/// until the window closes (its last batch is written first).
@MainActor
final class WindowScene {
    let assignment: SceneAssignment
    private(set) var claim: SceneClaim?

    init(_ assignment: SceneAssignment, claim: SceneClaim?) {
        self.assignment = assignment
        self.claim = claim
    }

    /// The claim, handed to whoever releases it.
    func takeClaim() -> SceneClaim? {
        defer { claim = nil }
        return claim
    }
}

extension Window {
    /// The scene this window shows and why (see ``SceneAssignment``); `nil` when its
    /// application saves into no store.
    public var sceneAssignment: SceneAssignment? { (sceneClaim as? WindowScene)?.assignment }
}

extension RestorationCoordinator: SceneAssigning {
    func assignScene(requested: String?, policy: SceneConflictPolicy, openHere: [String]) -> (identifier: String, claim: AnyObject?) {
        let (assignment, claim) = chooseScene(requested: requested, policy: policy, openHere: openHere)
        if case .readOnly = assignment.outcome { readOnlyScenes[assignment.identifier, default: 0] += 1 }
        if !assignment.passedOver.isEmpty || assignment.outcome != .claimed {
            var metadata: Logger.Metadata = [
                "statestore.scene": "\(assignment.identifier)", "statestore.assignment": "\(assignment)",
            ]
            if let requested { metadata["statestore.requested_scene"] = "\(requested)" }
            store.options.logger.info("window scene assigned", metadata: metadata)
        }
        if !assignment.passedOver.isEmpty {
            report(.sceneHeld(assignment))
        } else if case .readOnly = assignment.outcome {
            report(.sceneHeld(assignment))
        }
        return (assignment.identifier, WindowScene(assignment, claim: claim))
    }

    /// The scene a new window shows (see ``Window/init(size:orientation:sceneIdentifier:whenHeld:application:)``).
    private func chooseScene(
        requested: String?, policy: SceneConflictPolicy, openHere: [String]
    ) -> (SceneAssignment, SceneClaim?) {
        if store.options.readOnly || store.sceneClaimFolder == nil {
            let identifier = requested ?? Window.firstFreeSceneIdentifier(openHere: openHere) { _ in true }
            let reason = store.options.readOnly ? "the store is read-only" : "the store is in memory"
            return (SceneAssignment(requested: requested, identifier: identifier, outcome: .notClaimed(reason: reason)), nil)
        }
        var passedOver: [SceneHolder] = []
        var waited = Duration.zero
        /// The claim on `scene`, or `nil` with its holder added to `passedOver`.
        func claim(_ scene: String) throws(StateStoreError) -> SceneClaim? {
            switch try store.claimScene(scene) {
            case .claimed(let claim)?: return claim
            case .held(let holder)?:
                passedOver.append(holder)
                return nil
            case nil: return nil
            }
        }
        func claimed(_ scene: String, _ claim: SceneClaim) -> (SceneAssignment, SceneClaim?) {
            (SceneAssignment(requested: requested, identifier: scene, outcome: .claimed, passedOver: passedOver, waited: waited), claim)
        }
        let first = requested ?? (openHere.contains(Window.defaultSceneIdentifier) ? nil : Window.defaultSceneIdentifier)
        do {
            if let first {
                if let taken = try claim(first) { return claimed(first, taken) }
                switch policy {
                case .openAnotherScene:
                    break
                case .openReadOnly:
                    let holder = passedOver.removeLast()
                    return (SceneAssignment(requested: requested, identifier: first, outcome: .readOnly(heldBy: holder)), nil)
                case .wait(let timeout):
                    store.options.logger.info("waiting for a held scene", metadata: [
                        "statestore.scene": "\(first)", "statestore.holder": "\(passedOver[passedOver.count - 1])",
                        "statestore.timeout": "\(timeout)",
                    ])
                    let clock = ContinuousClock()
                    let start = clock.now
                    while clock.now - start < timeout {
                        // Polled: a blocking lock cannot be given up at a deadline.
                        usleep(10_000)
                        passedOver.removeLast()
                        let taken = try claim(first)
                        waited = clock.now - start
                        if let taken { return claimed(first, taken) }
                    }
                }
            }
            let saved = try store.savedSceneIdentifiers()
            if requested == nil {
                // A scene some instance that is gone left, before a new one.
                for scene in saved where scene != first && !openHere.contains(scene) {
                    if let taken = try claim(scene) { return claimed(scene, taken) }
                    passedOver.removeLast()
                }
            }
            var number = 1
            while true {
                let scene = "window\(number)"
                number += 1
                guard scene != first, !openHere.contains(scene), !saved.contains(scene) else { continue }
                if let taken = try claim(scene) { return claimed(scene, taken) }
                passedOver.removeLast()
            }
        } catch {
            // The scene goes unclaimed rather than the window failing: the app works as before
            // claims, and the reason is reported.
            report(.store(error))
            let identifier = first ?? requested ?? Window.firstFreeSceneIdentifier(openHere: openHere) { _ in true }
            return (SceneAssignment(requested: requested, identifier: identifier, outcome: .notClaimed(reason: error.description), passedOver: passedOver), nil)
        }
    }

    /// Whether `window` shows its scene read-only (``SceneConflictPolicy/openReadOnly``).
    func isReadOnly(_ window: Window) -> Bool {
        !readOnlyScenes.isEmpty && readOnlyScenes[window.sceneIdentifier] != nil
    }

    /// Whether `scene` is shown read-only by a window of this coordinator's application.
    func isReadOnly(scene: String?) -> Bool {
        guard !readOnlyScenes.isEmpty, let scene else { return false }
        return readOnlyScenes[scene] != nil
    }

    /// `window` closed: a read-only scene stops being read-only once no window shows it so;
    /// a claim is handed to the batch that removes the scene's archive, and goes once it is
    /// written (at once when terminating: that close flushed).
    func windowDidClose(_ window: Window) {
        guard let scene = window.sceneClaim as? WindowScene else { return }
        if case .readOnly = scene.assignment.outcome, let count = readOnlyScenes[window.sceneIdentifier] {
            readOnlyScenes[window.sceneIdentifier] = count > 1 ? count - 1 : nil
        }
        if let claim = scene.takeClaim(), !isTerminating { queuedReleases.append(claim) }
    }
}
