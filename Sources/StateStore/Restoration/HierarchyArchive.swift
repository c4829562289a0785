import Foundation

/// The saved shape of a window: which controllers, by storyboard identifier, in which containers.
///
/// Stored as JSON in the `hierarchy` table (one row per scene), so `sqlite3` and
/// `statectl inspect --hierarchy` can read it. Controllers without a storyboard identifier
/// cannot be rebuilt and are left out, with their descendants.
public struct HierarchyArchive: Codable, Sendable, Hashable {
    /// The archive format's version; a newer one is set aside, not guessed at.
    public static let currentFormat = 1

    public var format: Int = HierarchyArchive.currentFormat
    public var orientation: String?
    public var root: Node?

    /// One controller and what it contains.
    public struct Node: Codable, Sendable, Hashable {
        public enum Kind: String, Codable, Sendable {
            /// A plain controller; `children` are contained children (`addChild`).
            case plain
            /// A `NavigationController`; `children` are its stack, bottom first.
            case navigation
            /// A `TabBarController`; `children` are its tabs, `selectedIndex` the selected one.
            case tabBar
        }

        /// The storyboard identifier that instantiates it.
        public var storyboardIdentifier: String
        /// Its restoration identifier, when it differs from the storyboard identifier.
        public var restorationIdentifier: String?
        public var kind: Kind
        public var children: [Node] = []
        public var selectedIndex: Int?
        /// The controller it presents modally, if any.
        public var presented: Box?

        public init(
            storyboardIdentifier: String, restorationIdentifier: String? = nil, kind: Kind,
            children: [Node] = [], selectedIndex: Int? = nil, presented: Node? = nil
        ) {
            self.storyboardIdentifier = storyboardIdentifier
            self.restorationIdentifier = restorationIdentifier
            self.kind = kind
            self.children = children
            self.selectedIndex = selectedIndex
            self.presented = presented.map(Box.init)
        }

        /// Breaks the recursion of `presented` (a struct cannot contain itself directly).
        public final class Box: Codable, Sendable, Hashable {
            public let node: Node
            public init(_ node: Node) { self.node = node }
            public init(from decoder: any Decoder) throws { node = try Node(from: decoder) }
            public func encode(to encoder: any Encoder) throws { try node.encode(to: encoder) }
            public static func == (lhs: Box, rhs: Box) -> Bool { lhs.node == rhs.node }
            public func hash(into hasher: inout Hasher) { hasher.combine(node) }
        }
    }

    public init(orientation: String? = nil, root: Node?) {
        self.orientation = orientation
        self.root = root
    }

    /// Decodes an archive as the library stores it (for instance the bytes of
    /// ``StateStore/hierarchyArchive(scene:setAside:)``), for tools that show it.
    ///
    /// Decoding does not check ``format``: compare it with ``currentFormat`` to know whether
    /// this build could rebuild the hierarchy.
    ///
    /// - Throws: ``StateStoreError/decodingFailed(path:reason:)`` (with the path `hierarchy`)
    ///   when the bytes are not an archive.
    public init(decoding data: Data) throws(StateStoreError) {
        self = try Self.decode(data)
    }

    /// The archive as JSON, as the library stores it (sorted keys).
    public func encodedJSON() throws(StateStoreError) -> Data {
        try encoded()
    }

    func encoded() throws(StateStoreError) -> Data {
        try StateCoding.encode(self, for: "hierarchy")
    }

    static func decode(_ data: Data) throws(StateStoreError) -> HierarchyArchive {
        try StateCoding.decode(HierarchyArchive.self, from: data, at: "hierarchy")
    }
}
