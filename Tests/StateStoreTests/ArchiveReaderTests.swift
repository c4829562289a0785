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
                Node(storyboardIdentifier: "mail", kind: .navigation, children: [
                    Node(storyboardIdentifier: "inbox", restorationIdentifier: "inbox ✉︎ é", kind: .plain),
                    Node(storyboardIdentifier: "message", kind: .plain, presented: Node(storyboardIdentifier: "compose", kind: .plain)),
                ]),
                Node(storyboardIdentifier: "settings", kind: .plain),
            ],
            selectedIndex: 1
        )
        let archives = [
            HierarchyArchive(orientation: "landscapeLeft", root: tabs,
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
