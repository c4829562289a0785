import Foundation

/// The saved shape of a window scene: which controllers, in which containers, and how each
/// is made again.
///
/// Stored as JSON in the `hierarchy` table (one row per scene, keyed by the window's
/// ``Window/sceneIdentifier``), so `sqlite3` and `statectl inspect --hierarchy` can read it.
///
/// ## What is archived, and how it is rebuilt
///
/// Each node records what finds its controller again, tried in this order at the next launch:
///
/// 1. ``Node/storyboardIdentifier``: the controller came from a ``Storyboard``; it is
///    instantiated again with that identifier.
/// 2. ``Node/restorationIdentifier``: a factory registered with
///    ``Storyboard/registerRestoration(identifier:_:)`` makes it.
/// 3. ``Node/restorationClass``: a factory registered for the controller's type with
///    ``Storyboard/registerRestoration(of:_:)`` makes it.
/// 4. A built-in container made in code — ``NavigationController``, ``TabBarController`` or a
///    plain ``ViewController`` that contains children — is made by the engine itself.
///
/// A controller without a restoration identifier is not archived, nor is anything it
/// contains or presents (as in UIKit). A controller that has a restoration identifier but
/// none of the above is not archived either; it is listed in ``unarchived`` with the reason,
/// and reported through ``RestorationCoordinator/errorHandler``.
public struct HierarchyArchive: Codable, Sendable, Hashable {
    /// The archive format's version; a newer one is set aside, not guessed at.
    ///
    /// Format 2 added ``Node/restorationClass``, nodes without a storyboard identifier, and
    /// ``unarchived``. Format 1 archives are read as they are.
    public static let currentFormat = 2

    /// The format the archive was written in: ``currentFormat`` for one made here.
    public var format: Int = HierarchyArchive.currentFormat
    /// The window's ``InterfaceOrientation`` (its raw value) when archived; a rebuilt window is
    /// rotated to it unless the rotation is refused. `nil`, or a value this build does not know,
    /// leaves the window as it is.
    public var orientation: String?
    /// The window's root controller; `nil` when nothing in the window was archived (there is
    /// then nothing to rebuild).
    public var root: Node?
    /// Controllers of the window that have a restoration identifier but could not be archived,
    /// with the reason (empty when everything was archived).
    public var unarchived: [Omission] = []

    /// A controller left out of an archive, or not rebuilt from one.
    public struct Omission: Codable, Sendable, Hashable, CustomStringConvertible {
        /// Its restoration identifiers from the scene's root, joined with `/` (a controller
        /// without one is shown by its type in angle brackets).
        public var path: String
        /// Its type, as `String(reflecting:)` spells it.
        public var typeName: String
        /// Why it was left out, and what to do about it.
        public var reason: String

        /// An omission with the given values.
        public init(path: String, typeName: String, reason: String) {
            self.path = path
            self.typeName = typeName
            self.reason = reason
        }

        public var description: String { "\(path) (\(typeName)): \(reason)" }
    }

    /// One controller and what it contains.
    public struct Node: Codable, Sendable, Hashable {
        /// What sort of container a node is, which says what its ``HierarchyArchive/Node/children`` are.
        public enum Kind: String, Codable, Sendable {
            /// A plain controller; `children` are contained children (`addChild`).
            case plain
            /// A `NavigationController`; `children` are its stack, bottom first.
            case navigation
            /// A `TabBarController`; `children` are its tabs, `selectedIndex` the selected one.
            case tabBar
        }

        /// The storyboard identifier that instantiates it; `nil` for a controller built in code.
        public var storyboardIdentifier: String?
        /// Its restoration identifier, when it differs from the storyboard identifier.
        public var restorationIdentifier: String?
        /// For a controller built in code: its type, as `String(reflecting:)` spells it
        /// (`StateStore.NavigationController` for the built-in navigation controller).
        public var restorationClass: String?
        /// What sort of container it is, and so what ``children`` are.
        public var kind: Kind
        /// The archived controllers it contains, in order (see ``Kind``); those without a
        /// restoration identifier are left out.
        public var children: [Node] = []
        /// For a ``Kind/tabBar`` node, the index in ``children`` of the selected tab; `nil` otherwise.
        public var selectedIndex: Int?
        /// The controller it presents modally, if any.
        public var presented: Box?

        /// A node with the given values. Nothing is checked here: ``HierarchyArchive/validate(limits:)``
        /// does that.
        public init(
            storyboardIdentifier: String?, restorationIdentifier: String? = nil, restorationClass: String? = nil,
            kind: Kind, children: [Node] = [], selectedIndex: Int? = nil, presented: Node? = nil
        ) {
            self.storyboardIdentifier = storyboardIdentifier
            self.restorationIdentifier = restorationIdentifier
            self.restorationClass = restorationClass
            self.kind = kind
            self.children = children
            self.selectedIndex = selectedIndex
            self.presented = presented.map(Box.init)
        }

        /// The identifier the controller's state is saved under: its restoration identifier,
        /// else its storyboard identifier.
        public var effectiveRestorationIdentifier: String? { restorationIdentifier ?? storyboardIdentifier }

        /// A short name for messages and trees: the restoration identifier, else the
        /// storyboard identifier, else the type.
        public var displayName: String {
            effectiveRestorationIdentifier ?? restorationClass.map { "<\($0)>" } ?? "<unnamed>"
        }

        /// Breaks the recursion of `presented` (a struct cannot contain itself directly).
        public final class Box: Codable, Sendable, Hashable {
            /// The presented controller's node.
            public let node: Node
            /// A box holding `node`.
            public init(_ node: Node) { self.node = node }
            public init(from decoder: any Decoder) throws { node = try Node(from: decoder) }
            public func encode(to encoder: any Encoder) throws { try node.encode(to: encoder) }
            public static func == (lhs: Box, rhs: Box) -> Bool { lhs.node == rhs.node }
            public func hash(into hasher: inout Hasher) { hasher.combine(node) }
        }
    }

    /// An archive in the ``currentFormat`` with the given values.
    public init(orientation: String? = nil, root: Node?, unarchived: [Omission] = []) {
        self.orientation = orientation
        self.root = root
        self.unarchived = unarchived
    }

    private enum CodingKeys: String, CodingKey { case format, orientation, root, unarchived }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(Int.self, forKey: .format)
        orientation = try container.decodeIfPresent(String.self, forKey: .orientation)
        root = try container.decodeIfPresent(Node.self, forKey: .root)
        unarchived = try container.decodeIfPresent([Omission].self, forKey: .unarchived) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encodeIfPresent(orientation, forKey: .orientation)
        try container.encodeIfPresent(root, forKey: .root)
        if !unarchived.isEmpty { try container.encode(unarchived, forKey: .unarchived) }
    }

    /// Decodes an archive as the library stores it (for instance the bytes of
    /// ``StateStore/hierarchyArchive(scene:setAside:)``), for tools that show it.
    ///
    /// Decoding does not check ``format``: compare it with ``currentFormat`` to know whether
    /// this build could rebuild the hierarchy. The bytes are first checked against
    /// ``Limits/standard``'s nesting depth, so an archive nested too deeply to decode is
    /// named as such rather than as invalid JSON; ``validate(limits:)`` checks the rest.
    ///
    /// - Throws: ``StateStoreError/decodingFailed(path:reason:)`` (with the path `hierarchy`)
    ///   when the bytes are not an archive, or nest deeper than the limit.
    public init(decoding data: Data) throws(StateStoreError) {
        self = try Self.decode(data)
    }

    /// The archive as JSON, as the library stores it (sorted keys).
    public func encodedJSON() throws(StateStoreError) -> Data {
        try encoded()
    }

    func encoded() throws(StateStoreError) -> Data {
        var writer = ArchiveJSONWriter()
        writer.write(self)
        return Data(writer.bytes)
    }

    static func decode(_ data: Data, limits: Limits = .standard) throws(StateStoreError) -> HierarchyArchive {
        if let problem = ArchiveScan.scan(data, limits: limits) {
            throw .decodingFailed(path: "hierarchy", reason: problem.description)
        }
        // The archive as this library writes it, read directly; anything else through JSONDecoder.
        if let archive = ArchiveReader.read(data) { return archive }
        do {
            return try StateCoding.decode(HierarchyArchive.self, from: data, at: "hierarchy")
        } catch {
            // Foundation calls a number out of range "not valid JSON": say what it is when the
            // bytes do parse as JSON.
            if case .decodingFailed(_, let reason) = error, reason.contains("not valid JSON"),
                (try? JSONParser.parse(data, maximumDepth: limits.maximumJSONDepth)) != nil
            {
                throw .decodingFailed(
                    path: "hierarchy",
                    reason: "a field has the wrong type or a number out of range (the JSON itself is well formed)")
            }
            throw error
        }
    }
}

/// Writes an archive as JSON, byte for byte as `JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes` (``StateCoding``'s encoder) writes it: keys in order, `nil` members
/// left out, strings escaped by `JSON.writeString(_:to:)`, whose escapes are that encoder's
/// (`"`, `\\` and control characters; `/` and non-ASCII as they are). The write-behind writer
/// encodes an archive at every structural change; through the encoder's boxes that cost
/// several times the rest of the archive's handling. Equal archives give equal bytes either
/// way, so the writer's unchanged-archive check and archives already stored are unaffected.
struct ArchiveJSONWriter {
    private(set) var bytes: [UInt8] = []

    mutating func write(_ archive: HierarchyArchive) {
        bytes.reserveCapacity(256)
        append(#"{"format":"#)
        append(String(archive.format))
        member("orientation", archive.orientation)
        if let root = archive.root {
            key("root")
            node(root)
        }
        if !archive.unarchived.isEmpty {
            key("unarchived")
            bytes.append(UInt8(ascii: "["))
            for (index, omission) in archive.unarchived.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                append(#"{"path":"#)
                JSON.writeString(omission.path, to: &bytes)
                member("reason", omission.reason)
                member("typeName", omission.typeName)
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "]"))
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private mutating func node(_ node: HierarchyArchive.Node) {
        append(#"{"children":["#)
        for (index, child) in node.children.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            self.node(child)
        }
        bytes.append(UInt8(ascii: "]"))
        member("kind", node.kind.rawValue)
        if let presented = node.presented {
            key("presented")
            self.node(presented.node)
        }
        member("restorationClass", node.restorationClass)
        member("restorationIdentifier", node.restorationIdentifier)
        if let selectedIndex = node.selectedIndex {
            key("selectedIndex")
            append(String(selectedIndex))
        }
        member("storyboardIdentifier", node.storyboardIdentifier)
        bytes.append(UInt8(ascii: "}"))
    }

    /// `,"name":"value"`, or nothing for `nil` (as the encoder leaves `nil` members out).
    private mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        JSON.writeString(value, to: &bytes)
    }

    /// `,"name":` (every key but an object's first).
    private mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: ","))
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }
}
