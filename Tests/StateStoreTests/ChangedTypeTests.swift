import Foundation
import StateStoreCrypto
import Testing

@testable import StateStore

/// A screen whose state type is `S`: the app's newer build, reading what an older one stored.
final class ShapeController<S: Codable & Sendable & Equatable>: ViewController, StateRestoring {
    var restorableState: S
    init(_ initial: S) {
        restorableState = initial
        super.init()
    }
}

/// The newer builds' types, each dropping something the older one stored without a version bump.
enum NewerShapes {
    /// `draft` renamed `body`.
    struct Renamed: Codable, Sendable, Equatable {
        var subject = ""
        var body: String?
    }
    /// `draft` removed.
    struct Removed: Codable, Sendable, Equatable { var subject = "" }
    /// `meta.tags` removed.
    struct Nested: Codable, Sendable, Equatable {
        struct Meta: Codable, Sendable, Equatable { var author = "" }
        var subject = ""
        var meta = Meta()
    }
    /// The elements of `attachments` lose `size`.
    struct Elements: Codable, Sendable, Equatable {
        struct Attachment: Codable, Sendable, Equatable { var name = "" }
        var subject = ""
        var attachments: [Attachment] = []
    }
    /// Reads everything the old build stored: nothing is kept aside.
    struct Same: Codable, Sendable, Equatable {
        var subject = ""
        var draft = ""
    }
}

@MainActor
@Suite("A changed type does not eat the user's data")
struct ChangedTypeTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    /// What the older build stored at `nav/screen`, as its JSON.
    static let stored =
        #"{"attachments":[{"name":"a.txt","size":12}],"draft":"the user's text","meta":{"author":"ann","tags":["x"]},"subject":"hello"}"#

    /// Launches `nav/screen` showing a `ShapeController<S>` on the database holding ``stored``,
    /// lets it disappear with an edit, and relaunches; returns the errors of the first launch.
    func launchAndEdit<S: Codable & Sendable & Equatable>(
        _ initial: S, stored: String = Self.stored, options: StateStore.Options = .init(), edit: (inout S) -> Void
    ) throws -> (errors: [RestorationError], restored: S) {
        let seed = try StateStore(path: database, options: options)
        try seed.save(encoded: Data(stored.utf8), encoding: .json, typeName: "Old.Draft", version: 1, for: "nav/screen")
        let storyboard = Storyboard()
        storyboard.register("nav") { NavigationController() }
        storyboard.register("screen") { ShapeController(initial) }
        storyboard.register("other") { ViewController() }
        let store = try StateStore(path: database, options: options)
        let application = Application(store: store, storyboard: storyboard)
        let coordinator = try #require(application.restorationCoordinator)
        var errors: [RestorationError] = []
        coordinator.errorHandler = { errors.append($0) }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = try #require(
            try storyboard.instantiateViewController(withIdentifier: "nav") as? NavigationController)
        navigation.setViewControllers(
            [try storyboard.instantiateViewController(withIdentifier: "screen")], animated: false)
        navigation.restorationIdentifier = "nav"
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        let screen = try #require(navigation.topViewController as? ShapeController<S>)
        let restored = screen.restorableState
        edit(&screen.restorableState)
        navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "other"), animated: false)
        _ = navigation.popViewController(animated: false)
        edit(&screen.restorableState)
        navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "other"), animated: false)
        coordinator.flush()
        return (errors, restored)
    }

    func kept(_ errors: [RestorationError]) -> [[String]] {
        errors.compactMap { if case .supersededKept(_, let members) = $0 { return members } else { return nil } }
    }

    @Test func aRenamedFieldKeepsTheOldBytesBeforeTheSave() throws {
        let (errors, restored) = try launchAndEdit(NewerShapes.Renamed()) { $0.body = "typed in the new build" }
        #expect(restored == NewerShapes.Renamed(subject: "hello", body: nil))
        #expect(kept(errors) == [["attachments", "draft", "meta"]])
        try expectKept(reasonNaming: ["attachments", "draft", "meta"])
        // The new build's save landed over it.
        #expect(
            try StateStore(path: database).restore(NewerShapes.Renamed.self, for: "nav/screen")?.body
                == "typed in the new build")
    }

    @Test func aSealedStateOfAChangedTypeIsKeptSealed() throws {
        let keyring = StateKeyring(try testKey(9))
        let (errors, restored) = try launchAndEdit(NewerShapes.Renamed(), options: .init(sealer: keyring)) {
            $0.body = "typed in the new build"
        }
        #expect(restored == NewerShapes.Renamed(subject: "hello", body: nil))
        #expect(kept(errors) == [["attachments", "draft", "meta"]])
        // The superseded bytes are kept as they were stored: sealed, with their key id.
        let store = try StateStore(path: database, options: .init(readOnly: true, sealer: keyring))
        let row = try #require(try store.quarantinedStates().first)
        #expect(row.keyID == keyring.keyID)
        #expect(String(decoding: row.bytes, as: UTF8.self) != Self.stored)
        let opened = try keyring.open(
            row.bytes, keyID: keyring.keyID,
            identity: SealedRowIdentity(path: "nav/screen", typeName: "Old.Draft", version: 1))
        #expect(String(decoding: opened, as: UTF8.self) == Self.stored)
        #expect(try store.restore(NewerShapes.Renamed.self, for: "nav/screen")?.body == "typed in the new build")
        #expect(try store.state(at: "nav/screen")?.keyID == keyring.keyID)
    }

    @Test func aRemovedFieldIsKept() throws {
        let (errors, _) = try launchAndEdit(NewerShapes.Removed()) { $0.subject = "changed" }
        #expect(kept(errors) == [["attachments", "draft", "meta"]])
        try expectKept(reasonNaming: ["draft"])
    }

    @Test func aNestedMemberRemovedIsNamed() throws {
        let (errors, restored) = try launchAndEdit(NewerShapes.Nested()) { $0.subject = "changed" }
        #expect(restored.meta.author == "ann")
        #expect(kept(errors) == [["attachments", "draft", "meta.tags"]])
        try expectKept(reasonNaming: ["meta.tags"])
    }

    @Test func anArrayElementThatLostAMemberIsNamed() throws {
        let (errors, restored) = try launchAndEdit(NewerShapes.Elements()) { $0.subject = "changed" }
        #expect(restored.attachments == [.init(name: "a.txt")])
        #expect(kept(errors) == [["attachments[].size", "draft", "meta"]])
        try expectKept(reasonNaming: ["attachments[].size"])
    }

    @Test func aTypeThatReadsEverythingKeepsNothing() throws {
        let (errors, _) = try launchAndEdit(NewerShapes.Same(), stored: #"{"draft":"text","subject":"s"}"#) {
            $0.draft = "more"
        }
        #expect(errors.isEmpty)
        #expect(try StateStore(path: database).quarantinedStates().isEmpty)
        #expect(
            UnreadMembers.find(
                stored: Data(#"{"draft":"text","subject":"s","gone":null}"#.utf8),
                reencoded: Data(#"{"draft":"text","subject":"s"}"#.utf8)
            ).isEmpty)
        #expect(
            UnreadMembers.find(stored: Data(#"{"a":{"b":1}}"#.utf8), reencoded: Data(#"{"a":"flat"}"#.utf8)) == ["a"])
        #expect(
            UnreadMembers.find(stored: Data(#"{"a":[1,2,3]}"#.utf8), reencoded: Data(#"{"a":[1]}"#.utf8)) == ["a[]"])
    }

    /// Stored bytes in a form `JSONDecoder` takes and the package's reader does not (a trailing
    /// comma) cannot be compared member by member, so they are kept before a save replaces them.
    @Test func aStateInAFormOnlyTheDecoderReadsIsKeptBeforeItIsReplaced() throws {
        #expect(
            UnreadMembers.find(stored: Data(#"{"draft":"text",}"#.utf8), reencoded: Data(#"{"draft":"text"}"#.utf8))
                == [UnreadMembers.unreadForm])
        _ = try launchAndEdit(NewerShapes.Same(), stored: #"{"draft":"text","subject":"s",}"#) { $0.draft = "more" }
        let kept = try StateStore(path: database).quarantinedStates()
        #expect(kept.count == 1)
        #expect(kept.first.map { String(decoding: $0.bytes, as: UTF8.self) } == #"{"draft":"text","subject":"s",}"#)
    }

    @Test func theSameBytesAreKeptOnce() throws {
        let store = try StateStore(path: database)
        try store.save(encoded: Data(Self.stored.utf8), encoding: .json, typeName: "Old", version: 1, for: "root")
        for expected in [true, false, false] {
            #expect(
                try store.write { (transaction) throws(StateStoreError) in
                    try transaction.keepCopy(of: "root", reason: "r")
                } == expected)
        }
        #expect(try store.quarantinedStates().count == 1)
        #expect(try store.state(at: "root") != nil)
    }

    /// One quarantined copy of ``stored``, byte for byte, whose reason names `members`, shown by
    /// `statectl inspect --quarantine`.
    func expectKept(reasonNaming members: [String]) throws {
        let store = try StateStore(path: database, options: .init(readOnly: true))
        let quarantined = try store.quarantinedStates()
        #expect(quarantined.count == 1)
        let row = try #require(quarantined.first)
        #expect(row.path == "nav/screen")
        #expect(String(decoding: row.bytes, as: UTF8.self) == Self.stored)
        for member in members { #expect(row.reason.contains(member), "\(row.reason)") }
        let inspect = try CLI.run(["inspect", "--db", database, "--quarantine"])
        #expect(inspect.status == 0, "\(inspect)")
        #expect(inspect.stdout.contains("nav/screen") && inspect.stdout.contains("superseded"), "\(inspect)")
        // The export carries it, value and reason, beside the states an import brings back.
        let export = try CLI.run(["export", "--db", database])
        #expect(export.status == 0, "\(export)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as? [String: Any])
        let carried = try #require((document["quarantine"] as? [[String: Any]])?.first)
        #expect(carried["path"] as? String == "nav/screen")
        #expect((carried["reason"] as? String)?.contains("superseded") == true)
        let value = try #require(carried["value"])
        let bytes = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(String(decoding: bytes, as: UTF8.self) == Self.stored)
        // And an import of that document still reads (the quarantine is for the record).
        let copy = folder.file("copy.sqlite")
        let documentFile = folder.file("doc.json")
        try Data(export.stdout.utf8).write(to: URL(fileURLWithPath: documentFile))
        #expect(try CLI.run(["migrate", "--db", copy]).status == 0)
        let imported = try CLI.run(["import", "--db", copy, documentFile])
        #expect(imported.status == 0, "\(imported)")
    }
}
