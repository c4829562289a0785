/// A registry of controller factories by identifier, standing in for UIKit's storyboards.
///
/// Restoration rebuilds a saved window hierarchy by instantiating each controller from
/// its storyboard identifier, so every controller that should come back after a relaunch
/// must be registered here, or be rebuildable in one of the ways
/// `registerRestoration(identifier:_:)` describes.
///
/// ```swift
/// let storyboard = Storyboard()
/// storyboard.register("inbox") { InboxController() }
/// let inbox = try storyboard.instantiateViewController(withIdentifier: "inbox")
/// ```
@MainActor
public final class Storyboard {
    private var factories: [String: @MainActor () -> ViewController] = [:]
    /// Factories for controllers built in code, by restoration identifier (see `Storyboard+Restoration.swift`).
    var restorationFactories: [String: @MainActor () -> ViewController] = [:]
    /// Factories for controllers built in code, by type name (`String(reflecting:)`).
    var restorationClassFactories: [String: @MainActor () -> ViewController] = [:] {
        didSet { lastClassFactory = nil }
    }
    /// The type name looked up last in `restorationClassFactories` and what it found, `nil` for
    /// none (see `classFactory(named:)`); forgotten when a class factory is registered.
    var lastClassFactory: (typeName: String, make: (@MainActor () -> ViewController)?)?

    /// The application this storyboard belongs to; instantiated controllers register with it.
    /// Set by an application's initializer, by a plain assignment of a weak reference (which
    /// runs no `deinit`): no exclusivity check.
    @exclusivity(unchecked) weak var application: Application?

    /// Creates an empty storyboard.
    public init() {}

    /// Registers (or replaces) the factory for `identifier`.
    public func register(_ identifier: String, _ make: @escaping @MainActor () -> ViewController) {
        factories[identifier] = make
    }

    /// The registered identifiers, sorted.
    public var identifiers: [String] { factories.keys.sorted() }

    /// Whether a factory is registered for `identifier`.
    public func contains(_ identifier: String) -> Bool { factories[identifier] != nil }

    /// Makes a controller with the factory registered for `identifier`.
    ///
    /// Sets its ``ViewController/storyboardIdentifier`` (which its
    /// ``ViewController/restorationIdentifier`` defaults to), then sends
    /// ``ViewController/awakeFromNib()``.
    ///
    /// - Throws: ``StoryboardError/unknownIdentifier(_:known:)`` when nothing is registered
    ///   under `identifier`.
    public func instantiateViewController(withIdentifier identifier: String) throws(StoryboardError) -> ViewController {
        guard let make = factories[identifier] else {
            throw .unknownIdentifier(identifier, known: identifiers)
        }
        let controller = make()
        if let application, controller.registeredApplication !== application {
            application.register(controller)
        }
        controller.storyboardIdentifier = identifier
        controller.storyboard = self
        controller.deliver(.awakeFromNib, "awakeFromNib") { controller.awakeFromNib() }
        return controller
    }
}
