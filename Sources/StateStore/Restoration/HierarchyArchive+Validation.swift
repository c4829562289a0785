import Foundation

extension HierarchyArchive {
    /// The most a stored archive may hold before it is set aside unread.
    ///
    /// An archive over a limit is never rebuilt: it is moved aside (kept for
    /// `statectl inspect --hierarchy --set-aside`), the reason is reported, and the app starts
    /// with an empty window. Every saved state is kept. The checks cost time linear in the
    /// archive's size, and the byte limit is checked before the archive is read at all.
    public struct Limits: Sendable, Hashable {
        /// The largest archive read, in bytes. Default 16 MiB.
        public var maximumByteCount: Int
        /// The most controllers rebuilt. Default 100,000.
        public var maximumNodeCount: Int
        /// The deepest nesting of controllers (children and presentations) rebuilt. Default 64.
        public var maximumDepth: Int

        /// Limits with the given values; each default is the one its property names.
        public init(maximumByteCount: Int = 16 << 20, maximumNodeCount: Int = 100_000, maximumDepth: Int = 64) {
            self.maximumByteCount = maximumByteCount
            self.maximumNodeCount = maximumNodeCount
            self.maximumDepth = maximumDepth
        }

        /// The defaults.
        public static let standard = Limits()

        /// JSON nesting an archive of ``maximumDepth`` controllers needs: the archive and its
        /// root object, then an array and an object per level, and room for the omission list.
        var maximumJSONDepth: Int { 2 * maximumDepth + 4 }
        /// JSON objects an archive within the limits can hold: its nodes, itself, and omissions.
        var maximumJSONObjects: Int { maximumNodeCount + 1 + HierarchyArchive.maximumOmissions }
    }

    /// The most ``unarchived`` entries an archive records.
    static let maximumOmissions = 1_000

    /// Why an archive cannot be rebuilt, found before anything is instantiated.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// Where in the archive: the display names of the nodes from the root (empty for the archive itself).
        public var location: String
        /// What is wrong, in words (such as `selected tab 3 is out of range (2 tabs)`).
        public var reason: String

        public var description: String { location.isEmpty ? reason : "at \(location): \(reason)" }
    }

    /// Checks the whole archive before any of it is applied, in time linear in its nodes and
    /// without recursion: node count and depth within `limits`, every node naming a way to
    /// make its controller, valid restoration identifiers whose whole path fits in
    /// ``RestorationPath/maximumLength``, tab selections in range, kinds that match their built-in class, and at
    /// most one presentation per containment tree.
    public func validate(limits: Limits = .standard) throws(Problem) {
        guard let root else { return }
        // Where each node met is, for messages: its name and its parent's step. A location is
        // joined only for a problem, so a healthy archive joins no location strings.
        struct Step {
            var parent: Int
            var presented: Bool
            var name: String
        }
        var steps: [Step] = []
        func location(_ step: Int) -> String {
            var names: [(presented: Bool, name: String)] = []
            var index = step
            while index >= 0 {
                names.append((steps[index].presented, steps[index].name))
                index = steps[index].parent
            }
            var text = ""
            for (offset, part) in names.reversed().enumerated() {
                if offset > 0 { text += part.presented ? " ⤷ " : "/" }
                text += part.name
            }
            return text
        }
        // `pathBytes`: the UTF-8 length of the node's restoration path, `nil` below a node
        // without an identifier (nothing there is saved).
        struct Item {
            var node: Node
            var tree: Int
            var depth: Int
            var parent: Int
            var presented: Bool
            var pathBytes: Int?
        }
        var stack = [
            Item(
                node: root, tree: 0, depth: 1, parent: -1, presented: false,
                pathBytes: root.effectiveRestorationIdentifier.map { $0.utf8.count })
        ]
        var presenters: [Int: Int] = [:]
        var trees = 1
        var count = 0
        while let item = stack.popLast() {
            let node = item.node
            count += 1
            if count > limits.maximumNodeCount {
                throw Problem(
                    location: "",
                    reason: "the archive holds more than \(limits.maximumNodeCount) controllers, the most rebuilt")
            }
            if item.depth > limits.maximumDepth {
                throw Problem(
                    location: "",
                    reason: "controllers nest more than \(limits.maximumDepth) levels deep, the most rebuilt")
            }
            steps.append(Step(parent: item.parent, presented: item.presented, name: node.displayName))
            let here = steps.count - 1
            func fail(_ reason: String) -> Problem { Problem(location: location(here), reason: reason) }
            if node.storyboardIdentifier == nil, node.restorationIdentifier == nil, node.restorationClass == nil {
                throw fail("the node names no storyboard identifier, restoration identifier or class")
            }
            if let identifier = node.effectiveRestorationIdentifier,
                let problem = RestorationPath.problem(with: identifier)
            {
                throw fail("its restoration identifier cannot be a path component: \(problem)")
            }
            if let bytes = item.pathBytes, bytes > RestorationPath.maximumLength {
                throw fail(
                    "its restoration path is longer than \(RestorationPath.maximumLength) UTF-8 bytes, so its state could never be saved"
                )
            }

            if let builtIn = node.restorationClass.flatMap(BuiltInContainer.init(typeName:)), builtIn.kind != node.kind
            {
                throw fail("a \(node.kind.rawValue) node cannot be a \(builtIn.typeName)")
            }
            if let index = node.selectedIndex {
                guard node.kind == .tabBar else { throw fail("a \(node.kind.rawValue) node has no selected tab") }
                guard node.children.indices.contains(index) else {
                    throw fail("selected tab \(index) is out of range (\(node.children.count) tabs)")
                }
            }
            if let presented = node.presented?.node {
                if let other = presenters[item.tree] {
                    throw fail(
                        "two controllers of one containment tree present (\(location(other)) too); only one presentation per tree is possible"
                    )
                }
                presenters[item.tree] = here
                stack.append(
                    Item(
                        node: presented, tree: trees, depth: item.depth + 1, parent: here, presented: true,
                        pathBytes: Self.extend(item.pathBytes, with: presented)))
                trees += 1
            }
            for child in node.children.reversed() {
                stack.append(
                    Item(
                        node: child, tree: item.tree, depth: item.depth + 1, parent: here, presented: false,
                        pathBytes: Self.extend(item.pathBytes, with: child)))
            }
        }
    }
}

extension HierarchyArchive {
    /// The path length of `node` below a parent whose path is `bytes` long.
    fileprivate static func extend(_ bytes: Int?, with node: Node) -> Int? {
        guard let bytes, let identifier = node.effectiveRestorationIdentifier else { return nil }
        return bytes + 1 + identifier.utf8.count
    }
}

/// The built-in containers the engine makes itself when they were built in code.
enum BuiltInContainer: CaseIterable {
    case plain, navigation, tabBar

    init?(typeName: String) {
        // The byte counts first: a class name of another length (an app's own) is compared
        // with none of the three.
        let count = typeName.utf8.count
        guard
            count == Self.plainName.utf8.count || count == Self.navigationName.utf8.count
                || count == Self.tabBarName.utf8.count
        else { return nil }
        switch typeName {
        case Self.plainName: self = .plain
        case Self.navigationName: self = .navigation
        case Self.tabBarName: self = .tabBar
        default: return nil
        }
    }

    // Made once: `String(reflecting:)` per archived node was a twentieth of a large rebuild.
    private static let plainName = String(reflecting: ViewController.self)
    private static let navigationName = String(reflecting: NavigationController.self)
    private static let tabBarName = String(reflecting: TabBarController.self)

    init?(_ controller: ViewController) {
        switch ObjectIdentifier(type(of: controller)) {
        case ObjectIdentifier(ViewController.self): self = .plain
        case ObjectIdentifier(NavigationController.self): self = .navigation
        case ObjectIdentifier(TabBarController.self): self = .tabBar
        default: return nil
        }
    }

    var typeName: String {
        switch self {
        case .plain: Self.plainName
        case .navigation: Self.navigationName
        case .tabBar: Self.tabBarName
        }
    }

    var kind: HierarchyArchive.Node.Kind {
        switch self {
        case .plain: .plain
        case .navigation: .navigation
        case .tabBar: .tabBar
        }
    }

    @MainActor func make() -> ViewController {
        switch self {
        case .plain: ViewController()
        case .navigation: NavigationController()
        case .tabBar: TabBarController()
        }
    }
}

/// A single pass over an archive's bytes, before decoding: JSON nesting depth and object
/// count, so an archive too deep for the decoder or too large to rebuild is named as such.
enum ArchiveScan {
    enum Problem: Sendable, CustomStringConvertible {
        case tooDeep(limit: Int)
        case tooManyNodes(limit: Int)

        var description: String {
            switch self {
            case .tooDeep(let limit):
                "the archive nests more than \(limit) controllers deep (its JSON nesting exceeds what this build reads); it is not invalid JSON, only too deep to rebuild"
            case .tooManyNodes(let limit):
                "the archive holds more than \(limit) controllers, the most rebuilt"
            }
        }
    }

    /// The first limit the bytes exceed, or `nil`. Strings (with their escapes) are skipped.
    static func scan(_ data: Data, limits: HierarchyArchive.Limits) -> Problem? {
        let maximumDepth = limits.maximumJSONDepth
        let maximumObjects = limits.maximumJSONObjects
        return data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Problem? in
            var depth = 0
            var objects = 0
            var index = 0
            while index < raw.count {
                let byte = raw[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    // Past the string, eight bytes at a time while none is a quote or a
                    // backslash, then to the first that is; an escape's next byte is skipped,
                    // whatever it is.
                    while true {
                        while index + 8 <= raw.count {
                            let word = ByteWord.load(raw, at: index)
                            let stops =
                                ByteWord.matches(UInt8(ascii: "\""), in: word)
                                | ByteWord.matches(UInt8(ascii: "\\"), in: word)
                            if stops == 0 {
                                index += 8
                                continue
                            }
                            index += ByteWord.firstFlagged(stops)
                            break
                        }
                        guard index < raw.count else { return nil }
                        let inString = raw[index]
                        index += 1
                        if inString == UInt8(ascii: "\"") { break }
                        if inString == UInt8(ascii: "\\") { index += 1 }
                    }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    if depth > maximumDepth { return .tooDeep(limit: limits.maximumDepth) }
                    if byte == UInt8(ascii: "{") {
                        objects += 1
                        if objects > maximumObjects { return .tooManyNodes(limit: limits.maximumNodeCount) }
                    }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                default:
                    break
                }
            }
            return nil
        }
    }
}
