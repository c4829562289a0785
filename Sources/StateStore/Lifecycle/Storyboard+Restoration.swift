/// Restoration factories: how controllers built in code come back after a relaunch
/// (UIKit's restoration classes, in Swift form).
///
/// Relaunch restoration rebuilds each archived controller in the first of these ways that applies:
///
/// 1. It was instantiated from this storyboard: it is instantiated again with the same
///    storyboard identifier.
/// 2. A factory is registered for its restoration identifier with
///    ``registerRestoration(identifier:_:)``.
/// 3. A factory is registered for its type with ``registerRestoration(of:_:)``.
/// 4. It is a built-in container made in code: a ``NavigationController``, a
///    ``TabBarController`` or a plain ``ViewController`` (exactly those classes, not
///    subclasses), made by the engine.
///
/// A controller with a restoration identifier that fits none of them is not archived; it is
/// reported (path, type, reason) and listed by `statectl inspect --hierarchy`. A controller
/// without a restoration identifier is never archived, nor is anything below it.
///
/// ```swift
/// storyboard.registerRestoration(identifier: "compose") { ComposeController() }
/// storyboard.registerRestoration(of: MessageController.self) { MessageController() }
/// ```
///
/// The factory's controller keeps the restoration identifier it sets for itself (the code's
/// current name wins over an archived one); one that sets none gets the archived identifier.
extension Storyboard {
    /// Registers (or replaces) the factory that rebuilds a code-built controller whose
    /// restoration identifier is `identifier`.
    public func registerRestoration(identifier: String, _ make: @escaping @MainActor () -> ViewController) {
        restorationFactories[identifier] = make
    }

    /// Registers (or replaces) the factory that rebuilds a code-built controller of type
    /// `type`, whatever its restoration identifier. The archive records the type by
    /// `String(reflecting:)`, so renaming or moving the type breaks the link.
    public func registerRestoration<Controller: ViewController>(
        of type: Controller.Type, _ make: @escaping @MainActor () -> Controller
    ) {
        restorationClassFactories[String(reflecting: type)] = { make() }
    }

    /// Whether a factory is registered for the restoration identifier `identifier`.
    public func hasRestorationFactory(identifier: String) -> Bool { restorationFactories[identifier] != nil }

    /// Whether a factory is registered for the type named `typeName` (`String(reflecting:)`).
    public func hasRestorationFactory(typeName: String) -> Bool { classFactory(named: typeName) != nil }

    /// Makes a code-built controller with the factory for `identifier`, else the one for
    /// `typeName`. Returns `nil` when neither is registered.
    func makeForRestoration(identifier: String?, typeName: String?) -> ViewController? {
        // `if let`, not `Optional.flatMap`: a main-actor closure checks its executor when called.
        var make: (@MainActor () -> ViewController)?
        if let identifier, !restorationFactories.isEmpty { make = restorationFactories[identifier] }
        if make == nil, let typeName { make = classFactory(named: typeName) }
        guard let make else { return nil }
        let controller = make()
        if let application, controller.registeredApplication !== application {
            application.register(controller)
        }
        return controller
    }

    /// The factory registered for the type named `typeName`, if any. The last name looked up
    /// is kept with what it found, a factory or none (a built-in container's name usually has
    /// none): a rebuild's siblings are mostly of one type, and the archive reader gives them
    /// one string, which compares equal without reading its bytes.
    private func classFactory(named typeName: String) -> (@MainActor () -> ViewController)? {
        if let last = lastClassFactory, last.typeName == typeName { return last.make }
        let make = restorationClassFactories[typeName]
        lastClassFactory = (typeName, make)
        return make
    }
}
