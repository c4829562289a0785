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
}

extension ViewController {
    /// The controller's traits: its window's (see ``TraitCollection/init(windowSize:)``),
    /// or ``TraitCollection/unspecified`` outside a window.
    public var traitCollection: TraitCollection {
        guard let window else { return .unspecified }
        return TraitCollection(windowSize: window.size)
    }

    /// Sends ``traitCollectionDidChange(_:)`` if the traits changed since the controller last
    /// had them on screen; records them either way.
    func updateTraitsIfChanged() {
        let current = traitCollection
        guard current != .unspecified else { return }
        let previous = lastTraitCollection
        lastTraitCollection = current
        guard let previous, previous != current else { return }
        deliver(.traitCollectionDidChange, "traitCollectionDidChange(from: \(previous))") {
            traitCollectionDidChange(previous)
        }
    }
}
