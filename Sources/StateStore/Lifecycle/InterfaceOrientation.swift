/// The orientation of a window's content, as in UIKit's `UIInterfaceOrientation`.
public enum InterfaceOrientation: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Upright, taller than wide on a phone.
    case portrait
    /// Upside down.
    case portraitUpsideDown
    /// Landscape, content rotated so that its top faces left.
    case landscapeLeft
    /// Landscape, content rotated so that its top faces right.
    case landscapeRight

    /// `true` for the two landscape orientations.
    public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }

    /// `true` for the two portrait orientations.
    public var isPortrait: Bool { !isLandscape }

    public var description: String { rawValue }
}
