import Foundation
import Testing

@testable import StateStore

/// The direct archive reader gives what JSONDecoder gives for every archive the library writes,
/// and declines (so JSONDecoder decides, and names the problem) anything outside that shape.
@Suite("Restoration: reading archives directly")
struct ArchiveReaderTests {
    typealias Node = HierarchyArchive.Node

    static func decoded(_ json: String) -> HierarchyArchive? {
        try? JSONDecoder().decode(HierarchyArchive.self, from: Data(json.utf8))
    }

    @Test func archivesTheLibraryWritesReadAsJSONDecoderReadsThem() throws {
        let tabs = Node(
            storyboardIdentifier: nil, restorationIdentifier: "tabs", restorationClass: "StateStore.TabBarController",
            kind: .tabBar,
            children: [
                Node(
                    storyboardIdentifier: "mail", kind: .navigation,
                    children: [
                        Node(storyboardIdentifier: "inbox", restorationIdentifier: "inbox ✉︎ é", kind: .plain),
                        Node(
                            storyboardIdentifier: "message", kind: .plain,
                            presented: Node(storyboardIdentifier: "compose", kind: .plain)),
                    ]),
                Node(storyboardIdentifier: "settings", kind: .plain),
            ],
            selectedIndex: 1
        )
        let archives = [
            HierarchyArchive(
                orientation: "landscapeLeft", root: tabs,
                unarchived: [.init(path: "tabs/loose", typeName: "App.Loose", reason: "no factory")]),
            HierarchyArchive(root: nil),
            HierarchyArchive(orientation: "portrait", root: Node(storyboardIdentifier: "only", kind: .plain)),
        ]
        for archive in archives {
            let bytes = try archive.encodedJSON()
            let direct = try #require(ArchiveReader.read(bytes))
            #expect(direct == archive)
            #expect(direct == (try JSONDecoder().decode(HierarchyArchive.self, from: bytes)))
            #expect(try HierarchyArchive(decoding: bytes) == archive)
        }
    }

    /// Siblings mostly share their class names and storyboard identifiers, and the reader takes
    /// a repeat from the last one read: names of the same length that differ, names that share
    /// a prefix, and non-ASCII ones, in random runs, must each read as themselves.
    @Test func repeatedAndNearlyRepeatedNamesReadAsThemselves() throws {
        var generator = SplitMix(seed: 0xC1A55)
        // "é" precomposed and decomposed are equal strings but different bytes.
        let names = [
            "a", "b", "ab", "ba", "\u{E9}", "e\u{301}", "e", "😀", "StateStore.ViewController",
            "StateStore.ViewControllex", "",
        ]
        func pick() -> String? {
            let index = Int(generator.next() % UInt64(names.count + 1))
            return index == names.count ? nil : names[index]
        }
        for _ in 0..<200 {
            let children = (0..<Int(generator.next() % 12)).map { _ in
                Node(
                    storyboardIdentifier: pick(), restorationIdentifier: pick(), restorationClass: pick(),
                    kind: [.plain, .navigation, .tabBar][Int(generator.next() % 3)])
            }
            let archive = HierarchyArchive(root: Node(storyboardIdentifier: pick(), kind: .plain, children: children))
            let bytes = try archive.encodedJSON()
            let direct = try #require(ArchiveReader.read(bytes))
            #expect(direct == archive)
            #expect(direct == (try JSONDecoder().decode(HierarchyArchive.self, from: bytes)))
            // `==` on strings is canonical equivalence: the bytes are compared too.
            let read = direct.root?.children ?? [], written = children
            #expect(
                read.map { $0.storyboardIdentifier.map { Array($0.utf8) } }
                    == written.map { $0.storyboardIdentifier.map { Array($0.utf8) } })
            #expect(
                read.map { $0.restorationClass.map { Array($0.utf8) } }
                    == written.map { $0.restorationClass.map { Array($0.utf8) } })
        }
    }

    /// Strings are scanned eight bytes at a time: a quote, a backslash, a control character,
    /// DEL or a non-ASCII byte at any offset of a long name, the string's last byte included,
    /// is read as JSONDecoder reads it (or left to it).
    @Test func everyKindOfByteAtEveryOffsetOfALongName() throws {
        let specials: [[UInt8]] = [
            Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\u0041"#.utf8), [0x01], [0x1F], [0x20], [0x7F],
            Array("é".utf8), Array("😀".utf8), [0xFF], [0x22],
        ]
        for special in specials {
            for offset in 0...21 {
                var name = Array("abcdefghijklmnopqrstu".utf8)
                name.insert(contentsOf: special, at: offset)
                var json = Array(#"{"format":2,"root":{"children":[],"kind":"plain","storyboardIdentifier":""#.utf8)
                json += name
                json += Array(#""}}"#.utf8)
                let bytes = Data(json)
                let decoded = try? JSONDecoder().decode(HierarchyArchive.self, from: bytes)
                if let direct = ArchiveReader.read(bytes) {
                    #expect(direct == decoded, "byte \(special) at \(offset)")
                    #expect(
                        direct.root?.storyboardIdentifier.map { Array($0.utf8) }
                            == decoded?.root?.storyboardIdentifier.map { Array($0.utf8) })
                } else {
                    // Declined: escapes, raw control characters, invalid UTF-8 and a bare quote
                    // (which ends the string early) are JSONDecoder's to judge.
                    #expect(
                        special.first == UInt8(ascii: "\\") || special.first! < 0x20 || special == [0xFF]
                            || special == [0x22],
                        "byte \(special) at \(offset)")
                }
            }
        }
    }

    /// The word tests find the first byte that stops a scan exactly, whatever follows it: a
    /// quote, a backslash, a control character or a non-ASCII byte, alone or several in a word,
    /// at every offset, among random bytes (the bytes after the first may be flagged wrongly,
    /// and nothing may depend on them).
    @Test func theWordTestsFindTheFirstStoppingByteOfAnyWord() {
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [
            0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x5C, 0x5B, 0x5D, 0x7E, 0x7F, 0x80, 0xA0, 0xC3, 0xFF,
        ]
        var checked = 0
        for round in 0..<20_000 {
            var bytes = (0..<8).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
            // Up to three planted bytes, from the interesting ones or any value.
            for _ in 0..<(round % 4) {
                let value =
                    Bool.random(using: &generator)
                    ? interesting.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
                bytes[Int.random(in: 0..<8, using: &generator)] = value
            }
            let word = bytes.withUnsafeBytes { ByteWord.load($0, at: 0) }
            func first(_ stops: (UInt8) -> Bool) -> Int? { bytes.firstIndex(where: stops) }
            func found(_ flags: UInt64) -> Int? { flags == 0 ? nil : ByteWord.firstFlagged(flags) }
            let quote = ByteWord.matches(0x22, in: word), backslash = ByteWord.matches(0x5C, in: word)
            let controlOrNonASCII = ByteWord.controlOrNonASCII(in: word)
            #expect(found(quote) == first { $0 == 0x22 }, "\(bytes)")
            #expect(found(backslash) == first { $0 == 0x5C }, "\(bytes)")
            #expect(found(controlOrNonASCII) == first { $0 < 0x20 || $0 >= 0x80 }, "\(bytes)")
            #expect(found(quote | backslash) == first { $0 == 0x22 || $0 == 0x5C }, "\(bytes)")
            #expect(
                found(quote | backslash | controlOrNonASCII)
                    == first { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 || $0 >= 0x80 }, "\(bytes)")
            checked += 1
        }
        #expect(checked == 20_000)
    }

    @Test func whitespaceNullsAndAnyKeyOrderAreRead() throws {
        let json = """
            { "root" : { "presented" : null, "kind" : "plain", "children" : [ ], "storyboardIdentifier" : "a",
              "selectedIndex" : null } , "orientation" : null, "format" : 1, "unarchived" : null }
            """
        let direct = try #require(ArchiveReader.read(Data(json.utf8)))
        #expect(direct == Self.decoded(json))
        #expect(direct.format == 1)
    }

    @Test(arguments: [
        #"{"format":2,"root":{"kind":"plain","children":[],"storyboardIdentifier":"a\"b"}}"#,  // an escape
        #"{"format":2,"root":{"kind":"plain","children":[],"storyboardIdentifier":"a\u0062"}}"#,  // a \u escape
        #"{"format":2.0,"root":null}"#,  // a fraction
        #"{"format":2e0,"root":null}"#,  // an exponent
        #"{"format":02,"root":null}"#,  // a leading zero (not JSON)
        #"{"format":99999999999999999999,"root":null}"#,  // out of range
        #"{"format":2,"format":3}"#,  // a repeated key
        #"{"format":2,"extra":true}"#,  // an unknown key
        #"{"format":2,"root":{"kind":"plain","children":[]}} x"#,  // trailing bytes
        #"{"format":2,"root":{"kind":"sideways","children":[]}}"#,  // an unknown kind
        #"{"format":2,"root":{"kind":"plain"}}"#,  // no children
        #"{"root":null}"#,  // no format
        #"{"format":null}"#,  // a required member null
        #"{"format":"2"}"#,  // a string for a number
        #"{"format":2,"unarchived":[{"path":"a","typeName":"T"}]}"#,  // an omission without a reason
        #"[]"#,
        "",
    ])
    func anythingElseIsLeftToJSONDecoder(json: String) throws {
        #expect(ArchiveReader.read(Data(json.utf8)) == nil)
        // What the library then makes of it is JSONDecoder's verdict, as before.
        let viaLibrary = try? HierarchyArchive(decoding: Data(json.utf8))
        #expect(viaLibrary == Self.decoded(json))
    }

    @Test func invalidUTF8IsLeftToJSONDecoder() {
        var bytes = Data(#"{"format":2,"orientation":""#.utf8)
        bytes.append(contentsOf: [0xFF, 0xFE])
        bytes.append(contentsOf: Data(#""}"#.utf8))
        #expect(ArchiveReader.read(bytes) == nil)
        #expect((try? HierarchyArchive(decoding: bytes)) == nil)
    }
}

/// A relaunch compares the hierarchy it rebuilt with the archive it read without making an
/// archive of it: the comparison must agree with the archives' own `==`.
@Suite("Restoration: comparing a snapshot with a stored archive")
struct SnapshotComparisonTests {
    typealias Node = HierarchyArchive.Node

    /// The snapshot whose archive is `archive`, entries in the order the capture writes them.
    static func snapshot(of archive: HierarchyArchive) -> HierarchySnapshot {
        var snapshot = HierarchySnapshot(orientation: archive.orientation)
        func append(_ node: Node) {
            snapshot.entries.append(
                .init(
                    storyboardIdentifier: node.storyboardIdentifier, restorationIdentifier: node.restorationIdentifier,
                    restorationClass: node.restorationClass, kind: node.kind, childCount: Int32(node.children.count),
                    selectedIndex: Int32(node.selectedIndex ?? -1), presents: node.presented != nil
                ))
            for child in node.children { append(child) }
            if let presented = node.presented?.node { append(presented) }
        }
        if let root = archive.root { append(root) }
        snapshot.unarchived = archive.unarchived
        return snapshot
    }

    @Test func agreesWithEqualityOnRandomPairs() {
        var generator = SplitMix(seed: 0xC0FFEE)
        // Few values, so that random pairs are often equal or differ in one place only.
        let names: [String?] = [nil, "a", "b", "\u{E9}", "e\u{301}"]
        func pick() -> String? { names[Int(generator.next() % UInt64(names.count))] }
        func node(depth: Int) -> Node {
            let count = depth > 2 ? 0 : Int(generator.next() % 3)
            let children = (0..<count).map { _ in node(depth: depth + 1) }
            let selected = generator.next() % 3 == 0 ? Int(generator.next() % 2) : nil
            let presented = depth < 2 && generator.next() % 4 == 0 ? node(depth: depth + 1) : nil
            return Node(
                storyboardIdentifier: pick(), restorationIdentifier: pick(), restorationClass: pick(),
                kind: [.plain, .navigation][Int(generator.next() % 2)], children: children,
                selectedIndex: selected, presented: presented)
        }
        func archive() -> HierarchyArchive {
            var archive = HierarchyArchive(orientation: pick(), root: generator.next() % 8 == 0 ? nil : node(depth: 0))
            if generator.next() % 8 == 0 {
                archive.unarchived = [.init(path: "p", typeName: "T", reason: pick() ?? "")]
            }
            if generator.next() % 16 == 0 { archive.format = 1 }
            return archive
        }
        /// `node` with one member changed, in itself or in one of its descendants.
        func mutate(_ node: Node) -> Node {
            var node = node
            if !node.children.isEmpty, generator.next() % 2 == 0 {
                let index = Int(generator.next() % UInt64(node.children.count))
                node.children[index] = mutate(node.children[index])
                return node
            }
            switch generator.next() % 7 {
            case 0: node.storyboardIdentifier = node.storyboardIdentifier == "a" ? "b" : "a"
            case 1: node.restorationIdentifier = node.restorationIdentifier == nil ? "a" : nil
            case 2: node.restorationClass = node.restorationClass == "\u{E9}" ? "e\u{301}" : "\u{E9}"
            case 3: node.kind = node.kind == .plain ? .tabBar : .plain
            case 4: node.selectedIndex = node.selectedIndex == nil ? 0 : nil
            case 5: node.presented = node.presented == nil ? .init(Node(storyboardIdentifier: "a", kind: .plain)) : nil
            default: node.children.append(Node(storyboardIdentifier: nil, kind: .plain))
            }
            return node
        }
        /// `archive` with one member changed: of the archive itself, or of a node.
        func change(_ archive: HierarchyArchive) -> HierarchyArchive {
            var changed = archive
            switch generator.next() % 4 {
            case 0: changed.orientation = archive.orientation == "a" ? "b" : "a"
            case 1:
                changed.unarchived = archive.unarchived.isEmpty ? [.init(path: "p", typeName: "T", reason: "r")] : []
            default:
                if let root = archive.root { changed.root = mutate(root) } else { changed.format = 1 }
            }
            return changed
        }
        var (equal, unequal) = (0, 0)
        for _ in 0..<3000 {
            let (left, right) = (archive(), archive())
            let changed = change(left)
            for (a, b) in [(left, right), (left, left), (right, right), (left, changed)] {
                let snapshot = Self.snapshot(of: a)
                #expect(snapshot.describes(b) == (snapshot.archive == b))
            }
            // Both answers, asked of archives that are not the snapshot's own.
            for b in [right, changed] {
                if Self.snapshot(of: left).archive == b { equal += 1 } else { unequal += 1 }
            }
        }
        #expect(equal > 20 && unequal > 1000, "\(equal) equal, \(unequal) unequal")
    }
}

/// The archive writer gives, byte for byte, what `JSONEncoder` with the library's options gives,
/// so archives it writes compare equal to those stored before it (the writer skips an unchanged
/// archive by its bytes) and read back directly.
@Suite("Restoration: writing archives directly")
struct ArchiveWriterTests {
    typealias Node = HierarchyArchive.Node

    static func viaEncoder(_ archive: HierarchyArchive) throws -> Data {
        try StateCoding.encoder().encode(archive)
    }

    /// Every ASCII byte (each control character, quote, backslash, slash, DEL), and non-ASCII
    /// text from two-byte to four-byte UTF-8, line and paragraph separators and a BOM among it.
    static let awkward: String = {
        var text = ""
        for value in 0..<0x80 { text.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        return text + "é ✉︎ \u{2028}\u{2029}\u{FEFF} 😀 e\u{301} /a/b\\\""
    }()

    @Test func archivesOfEveryShapeAreTheEncodersBytes() throws {
        let tabs = Node(
            storyboardIdentifier: nil, restorationIdentifier: "tabs", restorationClass: "StateStore.TabBarController",
            kind: .tabBar,
            children: [
                Node(
                    storyboardIdentifier: "mail", kind: .navigation,
                    children: [
                        Node(storyboardIdentifier: "inbox", restorationIdentifier: Self.awkward, kind: .plain),
                        Node(
                            storyboardIdentifier: "message", kind: .plain,
                            presented: Node(storyboardIdentifier: "compose", kind: .plain)),
                    ]),
                Node(
                    storyboardIdentifier: Self.awkward, restorationClass: Self.awkward, kind: .plain, selectedIndex: -3),
            ],
            selectedIndex: Int.max
        )
        var old = HierarchyArchive(orientation: "portrait", root: Node(storyboardIdentifier: "a", kind: .plain))
        old.format = 1
        let archives = [
            HierarchyArchive(
                orientation: "landscapeLeft", root: tabs,
                unarchived: [
                    .init(path: "tabs/loose", typeName: "App.Loose", reason: "no factory"),
                    .init(path: Self.awkward, typeName: Self.awkward, reason: Self.awkward),
                ]),
            HierarchyArchive(root: nil),
            HierarchyArchive(orientation: "", root: Node(storyboardIdentifier: "", kind: .navigation)),
            HierarchyArchive(root: nil, unarchived: [.init(path: "x", typeName: "T", reason: "r")]),
            old,
        ]
        for archive in archives {
            let direct = try archive.encodedJSON()
            #expect(direct == (try Self.viaEncoder(archive)), "\(String(decoding: direct, as: UTF8.self))")
            #expect(try HierarchyArchive(decoding: direct) == archive)
        }
    }

    @Test func randomArchivesAreTheEncodersBytes() throws {
        var generator = SplitMix(seed: 0x5EED)
        let names = ["a", "nav", "tabs/x", "é", "q\"uote", "back\\slash", "tab\there", "\u{1}", "😀", ""]
        func pick() -> String? {
            let index = Int(generator.next() % UInt64(names.count + 1))
            return index == names.count ? nil : names[index]
        }
        func node(depth: Int) -> Node {
            let kinds: [Node.Kind] = [.plain, .navigation, .tabBar]
            let childCount = depth > 3 ? 0 : Int(generator.next() % 4)
            let presents = depth < 4 && generator.next() % 4 == 0
            let selected = generator.next() % 3 == 0 ? Int(Int64(bitPattern: generator.next()) >> 40) : nil
            return Node(
                storyboardIdentifier: pick(), restorationIdentifier: pick(), restorationClass: pick(),
                kind: kinds[Int(generator.next() % 3)],
                children: (0..<childCount).map { _ in node(depth: depth + 1) },
                selectedIndex: selected,
                presented: presents ? node(depth: depth + 1) : nil
            )
        }
        for _ in 0..<300 {
            let omissions = (0..<Int(generator.next() % 3)).map { _ in
                HierarchyArchive.Omission(path: pick() ?? "p", typeName: pick() ?? "T", reason: pick() ?? "r")
            }
            let archive = HierarchyArchive(
                orientation: pick(), root: generator.next() % 5 == 0 ? nil : node(depth: 1), unarchived: omissions
            )
            #expect(try archive.encodedJSON() == (try Self.viaEncoder(archive)))
        }
    }

    /// The write-behind writer's path: a captured hierarchy's archive, as stored.
    @Test @MainActor func aCapturedHierarchyIsStoredAsTheEncoderWritesIt() throws {
        let folder = TemporaryFolder()
        let store = try StateStore(path: folder.file("state.sqlite"))
        do {
            let storyboard = Storyboard()
            storyboard.register("root") { ViewController() }
            storyboard.register("nav") { NavigationController() }
            let application = Application(store: store, storyboard: storyboard)
            let window = Window(size: Size(width: 100, height: 100), orientation: .portrait, application: application)
            let navigation = try #require(
                try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
            let root = try storyboard.instantiateViewController(withIdentifier: "root")
            root.restorationIdentifier = "q\"uote é ✉︎ 😀 back\\slash"
            navigation.setViewControllers([root], animated: false)
            window.rootViewController = navigation
            window.makeKeyAndVisible()
            application.restorationCoordinator?.flush()
            let stored = try #require(try store.hierarchyArchive(scene: window.sceneIdentifier))
            let archive = try HierarchyArchive(decoding: stored)
            #expect(archive.root?.children.first?.restorationIdentifier == root.restorationIdentifier)
            #expect(stored == (try Self.viaEncoder(archive)))
            application.terminate()
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing case can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
