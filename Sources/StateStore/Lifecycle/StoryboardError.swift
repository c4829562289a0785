/// Errors thrown by a ``Storyboard``.
public enum StoryboardError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No factory is registered under `identifier`; `known` lists the registered ones.
    case unknownIdentifier(String, known: [String])

    public var description: String {
        switch self {
        case let .unknownIdentifier(identifier, known):
            let list = known.isEmpty ? "none are registered" : "registered: " + known.joined(separator: ", ")
            return "No view controller is registered under the storyboard identifier \"\(identifier)\" (\(list)). "
                + "Register it with Storyboard.register(_:_:) before instantiating it."
        }
    }
}
