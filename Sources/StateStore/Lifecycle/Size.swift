/// A width and a height, in points.
public struct Size: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The horizontal extent.
    public var width: Double
    /// The vertical extent.
    public var height: Double

    /// A size of zero by zero.
    public static let zero = Size(width: 0, height: 0)

    /// Creates a size.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// The same size with width and height exchanged, as after a quarter turn.
    public var transposed: Size { Size(width: height, height: width) }

    public var description: String { "\(width)x\(height)" }
}
