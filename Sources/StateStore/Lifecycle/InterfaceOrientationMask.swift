/// A set of interface orientations, as in UIKit's `UIInterfaceOrientationMask`.
///
/// Used by ``ViewController/supportedInterfaceOrientations`` and
/// ``Application/supportedOrientations``; a ``Window`` rotates only to an orientation
/// that both allow (see ``Window/rotate(to:)``).
public struct InterfaceOrientationMask: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The mask holding exactly `orientation`.
    public init(_ orientation: InterfaceOrientation) {
        switch orientation {
        case .portrait: self = .portrait
        case .portraitUpsideDown: self = .portraitUpsideDown
        case .landscapeLeft: self = .landscapeLeft
        case .landscapeRight: self = .landscapeRight
        }
    }

    /// ``InterfaceOrientation/portrait``.
    public static let portrait = InterfaceOrientationMask(rawValue: 1 << 0)
    /// ``InterfaceOrientation/portraitUpsideDown``.
    public static let portraitUpsideDown = InterfaceOrientationMask(rawValue: 1 << 1)
    /// ``InterfaceOrientation/landscapeLeft``.
    public static let landscapeLeft = InterfaceOrientationMask(rawValue: 1 << 2)
    /// ``InterfaceOrientation/landscapeRight``.
    public static let landscapeRight = InterfaceOrientationMask(rawValue: 1 << 3)
    /// Both landscape orientations.
    public static let landscape: InterfaceOrientationMask = [.landscapeLeft, .landscapeRight]
    /// Every orientation.
    public static let all: InterfaceOrientationMask = [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight]
    /// Every orientation but ``InterfaceOrientation/portraitUpsideDown``.
    public static let allButUpsideDown: InterfaceOrientationMask = [.portrait, .landscapeLeft, .landscapeRight]

    /// Whether the mask includes `orientation`.
    public func includes(_ orientation: InterfaceOrientation) -> Bool {
        contains(InterfaceOrientationMask(orientation))
    }
}
