/// A width or height class, as UIKit's `UIUserInterfaceSizeClass`.
public enum UserInterfaceSizeClass: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Not known: the controller is not in a window.
    case unspecified
    /// Constrained space: a phone's width, or a phone's height in landscape.
    case compact
    /// Expansive space.
    case regular

    public var description: String { rawValue }
}

/// The environment a controller lays out for, as UIKit's `UITraitCollection`: its size
/// classes, derived from its window's size.
///
/// A dimension is regular when it is at least ``regularHeight`` points (height) or when
/// the width is at least ``regularWidth`` points and the height is regular too; otherwise
/// compact. That gives UIKit's classes for phones in portrait (compact width, regular
/// height), phones in landscape (compact, compact) and tablets (regular, regular). Unlike
/// UIKit, a large phone in landscape is compact × compact (UIKit gives it a regular width),
/// and a window's classes depend on its size alone.
public struct TraitCollection: Sendable, Hashable, CustomStringConvertible {
    /// The width class.
    public var horizontalSizeClass: UserInterfaceSizeClass
    /// The height class.
    public var verticalSizeClass: UserInterfaceSizeClass

    /// The height from which the vertical class is regular.
    public static let regularHeight = 500.0
    /// The width from which the horizontal class is regular (when the height is regular too).
    public static let regularWidth = 700.0

    /// Traits with both classes unspecified: a controller outside any window.
    public static let unspecified = TraitCollection(horizontalSizeClass: .unspecified, verticalSizeClass: .unspecified)

    /// Creates traits with the given classes.
    public init(horizontalSizeClass: UserInterfaceSizeClass, verticalSizeClass: UserInterfaceSizeClass) {
        self.horizontalSizeClass = horizontalSizeClass
        self.verticalSizeClass = verticalSizeClass
    }

    /// The traits of a window of `windowSize`.
    public init(windowSize: Size) {
        let tall = windowSize.height >= Self.regularHeight
        verticalSizeClass = tall ? .regular : .compact
        horizontalSizeClass = tall && windowSize.width >= Self.regularWidth ? .regular : .compact
    }

    public var description: String { "\(horizontalSizeClass)×\(verticalSizeClass)" }

    /// One trait, for ``ViewController/registerForTraitChanges(_:handler:)``.
    public enum Trait: Sendable, Hashable, CaseIterable {
        /// ``TraitCollection/horizontalSizeClass``.
        case horizontalSizeClass
        /// ``TraitCollection/verticalSizeClass``.
        case verticalSizeClass
    }

    /// The traits whose values differ between this collection and `other`.
    public func changedTraits(comparedTo other: TraitCollection) -> Set<Trait> {
        var changed: Set<Trait> = []
        if horizontalSizeClass != other.horizontalSizeClass { changed.insert(.horizontalSizeClass) }
        if verticalSizeClass != other.verticalSizeClass { changed.insert(.verticalSizeClass) }
        return changed
    }
}

/// A handler registered with ``ViewController/registerForTraitChanges(_:handler:)``; pass it
/// to ``ViewController/unregisterForTraitChanges(_:)`` to stop it.
@MainActor
public final class TraitChangeRegistration {
    let traits: Set<TraitCollection.Trait>
    let handler: @MainActor (ViewController, TraitCollection) -> Void

    init(traits: Set<TraitCollection.Trait>, handler: @escaping @MainActor (ViewController, TraitCollection) -> Void) {
        self.traits = traits
        self.handler = handler
    }
}

extension ViewController {
    /// The controller's traits: its window's (see ``TraitCollection/init(windowSize:)``),
    /// or ``TraitCollection/unspecified`` outside a window.
    public var traitCollection: TraitCollection {
        guard let window else { return .unspecified }
        return TraitCollection(windowSize: window.size)
    }

    /// Runs `handler` with this controller and its previous traits whenever one of `traits`
    /// changes, right after ``traitCollectionDidChange(_:)`` (UIKit's
    /// `registerForTraitChanges(_:handler:)`). The handler is held until
    /// ``unregisterForTraitChanges(_:)``; it should not capture the controller strongly.
    @discardableResult
    public func registerForTraitChanges(
        _ traits: [TraitCollection.Trait],
        handler: @escaping @MainActor (ViewController, TraitCollection) -> Void
    ) -> TraitChangeRegistration {
        let registration = TraitChangeRegistration(traits: Set(traits), handler: handler)
        traitChangeRegistrations.append(registration)
        return registration
    }

    /// Stops a handler registered with ``registerForTraitChanges(_:handler:)``.
    public func unregisterForTraitChanges(_ registration: TraitChangeRegistration) {
        traitChangeRegistrations.removeAll { $0 === registration }
    }

    /// Sends ``traitCollectionDidChange(_:)`` if the traits changed since the controller last
    /// had them on screen, then the registered handlers of the traits that changed; records
    /// the traits either way.
    func updateTraitsIfChanged() {
        let current = traitCollection
        guard current != .unspecified else { return }
        let previous = lastTraitCollection
        lastTraitCollection = current
        guard let previous, previous != current else { return }
        deliver(.traitCollectionDidChange, "traitCollectionDidChange(from: \(previous))") {
            traitCollectionDidChange(previous)
        }
        let changed = current.changedTraits(comparedTo: previous)
        for registration in traitChangeRegistrations where !registration.traits.isDisjoint(with: changed) {
            registration.handler(self, previous)
        }
    }
}
