import Logging

/// An illegal lifecycle transition or structural misuse: a programmer error.
///
/// Reported to ``Application/violationHandler`` and recorded in
/// ``Application/lifecycleViolations``, naming the controller, the state it was in and the
/// callback that was attempted. The offending callback is not delivered, so the
/// controller's state stays consistent.
public struct LifecycleViolation: Sendable, CustomStringConvertible {
    /// The controller, while it is alive.
    public private(set) weak var controller: ViewController?
    /// The controller's name, as written in a ``LifecycleTrace``.
    public let controllerName: String
    /// The controller's type name.
    public let controllerType: String
    /// The controller's state when the violation happened.
    public let state: LifecycleState
    /// The callback that was attempted, or `nil` for structural misuse
    /// (presenting twice, pushing a controller that is already in a stack…).
    public let callback: LifecycleCallback?
    /// What was wrong.
    public let reason: String

    public var description: String {
        if let callback {
            return "Lifecycle violation: \(controllerName) (\(controllerType)) is \(state) and cannot receive \(callback): \(reason)"
        }
        return "Lifecycle violation: \(controllerName) (\(controllerType), \(state)): \(reason)"
    }

    init(controller: ViewController, name: String, state: LifecycleState, callback: LifecycleCallback?, reason: String) {
        self.controller = controller
        self.controllerName = name
        self.controllerType = String(describing: type(of: controller))
        self.state = state
        self.callback = callback
        self.reason = reason
    }

    /// The handler an ``Application`` starts with: logs the violation at `info`, with the
    /// controller, its state, the callback and the reason as metadata (a library logs no
    /// higher: what a violation means is the application's call), then stops a debug build
    /// with `assertionFailure`.
    @MainActor
    public static func defaultHandler(_ violation: LifecycleViolation) {
        lifecycleLogger.info("lifecycle violation", metadata: [
            "statestore.controller": "\(violation.controllerName)", "statestore.type": "\(violation.controllerType)", "statestore.state": "\(violation.state)",
            "statestore.callback": "\(violation.callback.map { "\($0)" } ?? "none")", "statestore.reason": "\(violation.reason)",
        ])
        assertionFailure(violation.description)
    }
}

let lifecycleLogger = Logger(label: "StateStore.Lifecycle")
