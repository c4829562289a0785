import Foundation
import StateStore

/// Reading stored bytes as JSON, for display.
enum StatePrinter {
    /// Nesting limit when showing a state; deeper states are shown as bytes.
    static let displayDepth = 256

    /// The bytes as a JSON value, or `nil` when they are not JSON.
    static func jsonValue(of bytes: Data, maximumDepth: Int = displayDepth) -> JSON? {
        try? JSONParser.parse(bytes, maximumDepth: maximumDepth)
    }
}
