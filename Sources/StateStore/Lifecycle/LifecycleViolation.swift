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
            return
                "Lifecycle violation: \(controllerName) (\(controllerType)) is \(state) and cannot receive \(callback): \(reason)"
        }
        return "Lifecycle violation: \(controllerName) (\(controllerType), \(state)): \(reason)"
    }

    init(controller: ViewController, name: String, state: LifecycleState, callback: LifecycleCallback?, reason: String)
    {
        self.controller = controller
        self.controllerName = name
        self.controllerType = String(describing: type(of: controller))
        self.state = state
        self.callback = callback
        self.reason = reason
    }

    /// The handler an ``Application`` starts with: stops a debug build with `assertionFailure`
    /// (the application has already recorded the violation and logged it to its
    /// ``Application/logger``); does nothing in a release build.
    @MainActor
    public static func defaultHandler(_ violation: LifecycleViolation) {
        assertionFailure(violation.description)
    }

    /// Logs the violation at `info` (a library logs no higher: what a violation means is the
    /// application's call), with the controller, its state, the callback and the reason.
    func log(to logger: Logger) {
        logger.info(
            "lifecycle violation",
            metadata: [
                "statestore.controller": "\(controllerName)", "statestore.type": "\(controllerType)",
                "statestore.state": "\(state)",
                "statestore.callback": "\(callback.map { "\($0)" } ?? "none")", "statestore.reason": "\(reason)",
            ])
    }
}
