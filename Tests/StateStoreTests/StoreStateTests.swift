import Foundation
import Testing

@testable import StateStore

@Suite("Saving and restoring")
struct StoreStateTests {
    let folder = TemporaryFolder()
    var path: String { folder.file("state.sqlite") }

    /// A cached statement whose step failed is ready for the next caller, and runs with that
    /// caller's bindings: left halted, it refused them and ran again with the failed caller's
    /// (a save's lookup after a failed one read another path's row).
    @Test func aCachedStatementThatFailedRunsWithTheNextCallersBindings() throws {
        let connection = try Connection(path: path, options: .init())
        let statement = try connection.cached("SELECT json(?1)")
        statement.bind("{not json", at: 1)
        #expect(throws: StateStoreError.self) { _ = try statement.step() }
        statement.bind("[1]", at: 1)
        #expect(try statement.step())
        #expect(statement.string(0) == "[1]")
        statement.reset()
    }

    /// The one query that reads many paths' rows (before a rebuilt hierarchy appears): each
    /// path stored is found once however often it is asked for, paths with no row are
    /// absent, and paths that need escaping in the query's JSON list are found as they are.
    @Test func manyPathsAreReadInOneQuery() throws {
        let store = try StateStore(path: path)
        let unusual: [RestorationPath] = [
            try RestorationPath(components: ["a\"quote", "back\\slash"]),
            try RestorationPath(components: ["caf\u{E9}"]), try RestorationPath(components: ["cafe\u{301}"]),
            try RestorationPath(components: ["sp ace", "[bracket]", "{\"key\": 1}"]),
        ]
        let stored = unusual + (0..<2_000).map { RestorationPath(stringLiteral: "root/c\($0)") }
        try store.write { (transaction) throws(StateStoreError) in
            for (index, path) in stored.enumerated() { _ = try transaction.save(Numbered(index: index), for: path) }
        }
        let missing = (0..<500).map { RestorationPath(stringLiteral: "root/missing\($0)") }
        let asked = stored + missing + stored.prefix(10) + [stored[0], stored[0]]
        let (rows, present) = try store.states(at: asked.shuffled())
        #expect(present == Set(stored))
        #expect(Set(rows.keys) == Set(stored))
        for (index, path) in stored.enumerated() {
            let bytes = try #require(rows[path]).bytes
            #expect(try JSONDecoder().decode(Numbered.self, from: bytes) == Numbered(index: index))
        }
    }

    /// The query's JSON list quotes any text as a JSON parser reads it back: every ASCII
    /// character (control characters, quotes and backslashes included) alone and among
    /// others, and UTF-8 beyond ASCII, as JSONDecoder and SQLite's own JSON functions read it.
    @Test func theQuerysListQuotesAnyTextAsJSONReadsItBack() throws {
        var texts = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        texts += [
            "", "plain/path", "a\"b\\c\nd\u{1}e\u{1F}f\u{7F}", "caf\u{E9}/\u{1F600}",
            String(repeating: "\\\"", count: 40),
        ]
        texts.append(texts.joined())
        func list(of texts: [String]) -> [UInt8] {
            var list: [UInt8] = [UInt8(ascii: "[")]
            for (index, text) in texts.enumerated() {
                if index > 0 { list.append(UInt8(ascii: ",")) }
                JSON.writeString(text, to: &list)
            }
            list.append(UInt8(ascii: "]"))
            return list
        }
        #expect(try JSONDecoder().decode([String].self, from: Data(list(of: texts))) == texts)
        // SQLite's JSON functions end a string's text at an escaped NUL (no path holds one:
        // control characters are refused in identifiers).
        let withoutNUL = texts.filter { !$0.utf8.contains(0) }
        let connection = try Connection(path: path, options: .init())
        let statement = try connection.cached("SELECT value FROM json_each(?1) ORDER BY key")
        statement.bind(String(decoding: list(of: withoutNUL), as: UTF8.self), at: 1)
        var read: [String] = []
        while try statement.step() { read.append(statement.string(0)) }
        statement.reset()
        #expect(read == withoutNUL)
    }

    struct Numbered: Codable, Sendable, Equatable { var index: Int }

    @Test func roundTripsACodableStruct() throws {
        let store = try StateStore(path: path)
        let draft = Draft(
            to: ["ada@example.org", "grace@example.org"], subject: "Lunch?", body: "Thursday\nat noon",
            attachments: ["menu.pdf": 2048, "map.png": 512], sentAt: Date(timeIntervalSince1970: 1_700_000_000.123)
        )
        let result = try store.save(draft, for: "root/inbox/compose", version: 3)
        #expect(result == .init(generation: 1, wrote: true))
        #expect(try store.restore(Draft.self, for: "root/inbox/compose") == draft)
        let reopened = try StateStore(path: path)
        #expect(try reopened.restore(Draft.self, for: "root/inbox/compose") == draft)
        let entry = try #require(try reopened.entries().first)
        #expect(entry.path == "root/inbox/compose")
        #expect(entry.version == 3)
        #expect(entry.generation == 1)
        #expect(entry.typeName == String(reflecting: Draft.self))
        #expect(entry.encoding == .json)
    }

    /// Given the version it saved with, `restore` refuses a row of another version rather than
    /// decoding its bytes: here version 1's shape decodes as version 2 with a member lost.
    @Test func restoreWithAVersionRefusesARowOfAnotherVersion() throws {
        struct Version1: Codable, Sendable {
            var text = "kept"
            var words = 2
        }
        struct Version2: Codable, Sendable, Equatable { var text = "" }
        let store = try StateStore(path: path)
        try store.save(Version1(), for: "root/note", version: 1)
        #expect(try store.restore(Version2.self, for: "root/note") == Version2(text: "kept"))
        #expect(try store.restore(Version2.self, for: "root/note", version: 1) == Version2(text: "kept"))
        #expect(
            throws: StateStoreError.decodingFailed(
                path: "root/note",
                reason: "it was saved as version 1 of \(String(reflecting: Version1.self)), not version 2"
            )
        ) {
            try store.restore(Version2.self, for: "root/note", version: 2)
        }
        #expect(try store.entries().map(\.version) == [1])
    }

    @Test func restoresNilWhenNothingIsStored() throws {
        #expect(try StateStore(path: path).restore(Draft.self, for: "root/nothing") == nil)
    }

    @Test func roundTripsAOneMegabyteState() throws {
        let store = try StateStore(path: path)
        let big = String((0..<1_000_000).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
        try store.save(big, for: "root/big")
        #expect(try store.restore(String.self, for: "root/big") == big)
        #expect(try store.entries().first?.byteCount == 1_000_002)
    }

    @Test func refusesAStateOverTheSizeBudget() throws {
        let store = try StateStore(path: path, options: .init(maximumStateSize: 1000))
        try store.save(String(repeating: "a", count: 10), for: "root/small")
        #expect(throws: StateStoreError.stateTooLarge(path: "root/small", byteCount: 2002, limit: 1000)) {
            try store.save(String(repeating: "b", count: 2000), for: "root/small")
        }
        #expect(try store.restore(String.self, for: "root/small") == String(repeating: "a", count: 10))
    }

    @Test func pathsWithUnicodeAndSQLMetacharactersRoundTrip() throws {
        let store = try StateStore(path: path)
        let paths: [RestorationPath] = [
            "root/naïve café/日本語/😀",
            "root/'; DROP TABLE states; --",
            "root/\"quoted\"/back\\slash/%_like",
            "root/a b/semi;colon/*",
            "root/?1/:name/@p/$x/' OR '1'='1",
            "root/x');DELETE FROM states;--/\"\"\"/''",
            "root/👩‍👩‍👧‍👦/\u{202E}gnp.exe/\u{FEFF}bom/\u{200B}zero width",
            "root/Ελληνικά/עברית/العربية/한국어",
            "root/\u{10FFFF}/\u{E000}/\u{FFFD}",
        ]
        for (index, path) in paths.enumerated() { try store.save(index, for: path) }
        for (index, path) in paths.enumerated() { #expect(try store.restore(Int.self, for: path) == index) }
        #expect(try store.entries().map(\.path) == paths.sorted())
        #expect(
            try store.entries().map { Array($0.path.rawValue.utf8) } == paths.sorted().map { Array($0.rawValue.utf8) })
        let reopened = try StateStore(path: path)
        for (index, path) in paths.enumerated() { #expect(try reopened.restore(Int.self, for: path) == index) }
        #expect(try store.entries().count == paths.count)
    }

    /// Paths are bytes to SQLite. Two spellings of "café" (U+00E9, and e + U+0301) are equal
    /// Swift Strings but two rows; a "/" followed by a combining mark is one Swift Character
    /// but still the separator. RestorationPath follows the bytes in both cases.
    @Test func pathsAreTheirBytesNotTheirCharacters() throws {
        let store = try StateStore(path: path)
        let composed = try RestorationPath(validating: "root/caf\u{E9}")
        let decomposed = try RestorationPath(validating: "root/cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        try store.save("composed", for: composed)
        try store.save("decomposed", for: decomposed)
        #expect(try store.restore(String.self, for: composed) == "composed")
        #expect(try store.restore(String.self, for: decomposed) == "decomposed")
        #expect(try store.entries().map(\.path) == [composed, decomposed].sorted())
        #expect([composed, decomposed].sorted() == [decomposed, composed].sorted())

        let marked = try RestorationPath(validating: "root/\u{301}mark")
        #expect(marked.components == ["root", "\u{301}mark"])
        #expect(marked.parent == "root")
        #expect(marked.hasPrefix("root"))
        #expect(marked.hasPrefix(marked) && !marked.hasPrefix("roo") && !RestorationPath("ab").hasPrefix("a"))
        // Bytes, not characters: a composed é is not the prefix its decomposed spelling starts.
        #expect(
            !(try RestorationPath(validating: "caf\u{E9}/x")).hasPrefix(try RestorationPath(validating: "cafe\u{301}")))
        #expect(
            (try RestorationPath(validating: "caf\u{E9}/x")).hasPrefix(try RestorationPath(validating: "caf\u{E9}")))
        #expect(marked == (try RestorationPath(components: ["root", "\u{301}mark"])))
        #expect(throws: StateStoreError.self) { try RestorationPath(components: ["root/\u{301}mark"]) }
        try store.save(1, for: marked)
        #expect(try store.entries(under: "root").map(\.path).contains(marked))

        // Equal paths held in separate strings, short (inline) and long (on the heap), and the
        // same path copied: equal; one byte apart: not.
        for text in ["nav/page", "navigation/settings/account/security/sessions"] {
            let one = try RestorationPath(validating: text)
            let other = try RestorationPath(components: text.split(separator: "/").map(String.init))
            let copy = one
            #expect(one == other && one == copy && Set([one, other, copy]).count == 1)
            #expect(one != (try RestorationPath(validating: String(text.dropLast()) + "x")))
        }
        let short = try RestorationPath(validating: "nav/caf\u{E9}")
        #expect(short != (try RestorationPath(validating: "nav/cafe\u{301}")))
    }

    @Test func invalidPathsAreRejected() {
        for bad in [
            "", "root//x", "/root", "root/", "root/nul\u{0}", "root/tab\tx", String(repeating: "a", count: 1025),
        ] {
            #expect(throws: StateStoreError.self) { try RestorationPath(validating: bad) }
        }
        #expect(throws: StateStoreError.self) { try RestorationPath(components: ["a", "b/c"]) }
    }

    /// A path of printable ASCII is taken in one pass; every string gets the verdict (and the
    /// error) its components get one by one.
    @Test func aPathValidatedWholeIsItsComponentsValidated() {
        var generator = SplitMix(seed: 0x9A7)
        let pieces = [
            "a", "/", "//", " ", "~", "\u{1F}", "\u{7F}", "\u{85}", "é", "e\u{301}", "\u{0}",
            String(repeating: "b", count: 300),
        ]
        for _ in 0..<5_000 {
            let text = (0..<Int(generator.next() % 9)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }
                .joined()
            let whole = Result { () throws(StateStoreError) in try RestorationPath(validating: text) }
            let split = Result { () throws(StateStoreError) in
                try RestorationPath(
                    components: text.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map {
                        String($0)
                    })
            }
            switch (whole, split) {
            case (.success(let path), .success(let expected)):
                #expect(path == expected && path.hashValue == expected.hashValue)
            case (.failure(let error), .failure(let expected)): #expect(error.description == expected.description)
            default: Issue.record("\(text.debugDescription): \(whole) against \(split)")
            }
        }
    }

    @Test func aPathFoundLeafFirstIsItsIdentifiersFromTheRoot() throws {
        // Built from the identifiers a walk up meets (the leaf first), below a scene's prefix.
        let accepted: [(String?, [String], String)] = [
            (nil, ["page"], "page"), (nil, ["page", "nav"], "nav/page"),
            ("window2", ["page", "nav"], "window2/nav/page"),
            (nil, ["\u{301}mark", "caf\u{E9}"], "caf\u{E9}/\u{301}mark"),
            (
                nil, [String(repeating: "b", count: 423), String(repeating: "a", count: 600)],
                String(repeating: "a", count: 600) + "/" + String(repeating: "b", count: 423)
            ),
        ]
        for (prefix, leafFirst, expected) in accepted {
            let path = try RestorationPath(prefix: prefix, leafFirst: leafFirst)
            #expect(path.rawValue == expected)
            #expect(path.components == (prefix.map { [$0] } ?? []) + leafFirst.reversed())
            let parsed = try RestorationPath(validating: expected)
            #expect(path == parsed && path.hashValue == parsed.hashValue)
        }
        // Rejected, each with the whole path and the reason.
        let rejected: [(String?, [String], String)] = [
            (nil, [], "it has no components"), (nil, ["a", "b/c"], "contains \"/\""),
            (nil, ["a", ""], "a component is empty"),
            (nil, [""], "a component is empty"), ("", ["a"], "a component is empty"), ("w/x", ["a"], "contains \"/\""),
            (nil, ["tab\tx"], "control character"), (nil, ["del\u{7F}"], "control character"),
            (nil, ["next\u{85}line"], "control character"),
            (
                nil, [String(repeating: "b", count: 424), String(repeating: "a", count: 600)],
                "longer than 1024 UTF-8 bytes"
            ),
        ]
        for (prefix, leafFirst, reason) in rejected {
            #expect {
                try RestorationPath(prefix: prefix, leafFirst: leafFirst)
            } throws: { error in
                guard case StateStoreError.invalidPath(let joined, let found) = error else { return false }
                return found.contains(reason)
                    && joined == ((prefix.map { [$0] } ?? []) + leafFirst.reversed()).joined(separator: "/")
            }
        }
    }

    @Test func anUnchangedStateIsNotRewritten() throws {
        let store = try StateStore(path: path)
        let draft = Draft(to: ["x"], subject: "same", body: "", attachments: ["a": 1, "b": 2, "c": 3, "d": 4])
        #expect(try store.save(draft, for: "root/compose") == .init(generation: 1, wrote: true))
        let stamp = try #require(try store.entries().first?.updatedAt)
        #expect(try store.save(draft, for: "root/compose") == .init(generation: 1, wrote: false))
        #expect(try store.entries().first?.updatedAt == stamp)
        #expect(try store.save(draft, for: "root/compose", version: 2) == .init(generation: 2, wrote: true))
        var changed = draft
        changed.subject = "different"
        #expect(try store.save(changed, for: "root/compose", version: 2) == .init(generation: 3, wrote: true))
        #expect(try store.generation(at: "root/compose") == 3)
    }

    @Test func entriesFilterByPrefixAndRemoveWorks() throws {
        let store = try StateStore(path: path)
        for path: RestorationPath in ["root", "root/a", "root/a/b", "root/ab", "root/a0", "other"] {
            try store.save(path.rawValue, for: path)
        }
        #expect(try store.entries(under: "root/a").map(\.path.rawValue) == ["root/a", "root/a/b"])
        #expect(try store.removeAll(under: "root/a") == 2)
        #expect(try store.remove("other"))
        #expect(try !store.remove("other"))
        #expect(try store.entries().map(\.path.rawValue) == ["root", "root/a0", "root/ab"])
    }

    @Test func aWriteTransactionCommitsTogetherOrNotAtAll() throws {
        let store = try StateStore(path: path)
        try store.save("before", for: "root/one")
        #expect(throws: StateStoreError.self) {
            try store.write { (transaction) throws(StateStoreError) in
                try transaction.save("after", for: "root/one")
                try transaction.save(String(repeating: "z", count: 2 << 20), for: "root/two")
            }
        }
        #expect(try store.restore(String.self, for: "root/one") == "before")
        #expect(try store.restore(String.self, for: "root/two") == nil)
    }

    @Test func undecodableStatesThrowAndCanBeQuarantinedWithTheirBytes() throws {
        let store = try StateStore(path: path)
        try store.save(["not": "a draft"], for: "root/compose", version: 2)
        let original = try #require(try store.state(at: "root/compose"))
        #expect {
            try store.restore(Draft.self, for: "root/compose")
        } throws: { error in
            guard case StateStoreError.decodingFailed(let path, let reason) = error else { return false }
            return path == "root/compose" && reason.contains("to")
        }
        #expect(try store.quarantine("root/compose", reason: "decoding failed"))
        #expect(try store.restore(Draft.self, for: "root/compose") == nil)
        let moved = try #require(try store.quarantinedStates().first)
        #expect(moved.bytes == original.bytes)
        #expect(moved.checksum == original.checksum)
        #expect(moved.version == 2)
        #expect(moved.reason == "decoding failed")
        #expect(try store.check().quarantineCount == 1)
    }

    @Test func bytesEditedOutsideTheStoreFailTheirChecksum() throws {
        let store = try StateStore(path: path)
        try store.save(Draft(to: [], subject: "real", body: ""), for: "root/compose")
        try rawSQL(path, "UPDATE states SET bytes = CAST(replace(CAST(bytes AS TEXT), 'real', 'fake') AS BLOB)")
        #expect(throws: StateStoreError.checksumMismatch(path: "root/compose")) {
            try store.restore(Draft.self, for: "root/compose")
        }
        #expect(try store.check().checksumMismatches == ["root/compose"])
    }

    @Test func fourThreadsSaveAndRestoreWithoutErrors() async throws {
        let store = try StateStore(path: path)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    var verified = 0
                    for index in 0..<1000 {
                        let path = try RestorationPath(validating: "root/t\(thread)/c\(index)")
                        let draft = Draft(to: ["t\(thread)"], subject: "\(index)", body: "")
                        try store.save(draft, for: path)
                        if try store.restore(Draft.self, for: path) == draft { verified += 1 }
                    }
                    return verified
                }
            }
            var total = 0
            for try await verified in group { total += verified }
            #expect(total == 4000)
        }
        #expect(try store.check().stateCount == 4000)
    }

    @Test func pressureEventsAndMetadataPersist() throws {
        let store = try StateStore(path: path)
        let event = PressureEvent(
            occurredAt: Date(timeIntervalSince1970: 1_700_000_000), level: .critical,
            availableBytes: 123_456_789, rssBefore: 500_000_000, rssAfter: 100_000_000, duration: .microseconds(1500)
        )
        try store.recordPressureEvent(event)
        try store.setMetadata("app", to: "mail")
        let reopened = try StateStore(path: path)
        #expect(try reopened.pressureEvents(limit: 10) == [event])
        #expect(try reopened.pressureEvents(limit: 10).first?.bytesFreed == 400_000_000)
        #expect(try reopened.metadata("app") == "mail")
        try reopened.setMetadata("app", to: nil)
        #expect(try reopened.metadata("app") == nil)
    }

    /// The table keeps the newest `pressureEventLimit` events: recording one more removes the
    /// oldest, so an app under pressure for weeks does not grow its file with every warning.
    @Test func pressureEventsKeepTheNewestUpToTheLimit() throws {
        let store = try StateStore(path: path)
        let limit = StateStore.pressureEventLimit
        func event(_ index: Int) -> PressureEvent {
            PressureEvent(
                occurredAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), level: .warning,
                availableBytes: UInt64(index), rssBefore: 2, rssAfter: 1, duration: .microseconds(1))
        }
        try store.write { (transaction) throws(StateStoreError) in
            for index in 0..<(limit + 25) { try transaction.recordPressureEvent(event(index)) }
        }
        try store.recordPressureEvent(event(limit + 25))
        let kept = try store.pressureEvents(limit: limit + 100)
        #expect(kept.count == limit)
        #expect(kept.first == event(limit + 25))
        #expect(kept.last == event(26))
        #expect(try store.check().pressureEventCount == limit)
    }

    @Test func theChecksumIsXXH64() {
        // Reference values from the xxHash specification's test vectors.
        #expect(Checksum.xxh64(UnsafeRawBufferPointer(start: nil, count: 0)) == 0xEF46_DB37_51D8_E999)
        let abc = Data("abc".utf8)
        #expect(abc.withUnsafeBytes { Checksum.xxh64($0) } == 0x44BC_2CF5_AD77_0999)
        let long = Data("Nobody inspects the spammish repetition".utf8)
        #expect(long.withUnsafeBytes { Checksum.xxh64($0) } == 0xFBCE_A83C_8A37_8BF1)
    }

    /// The checksum given a part at a time equals the one-shot one, however the bytes are split.
    @Test func theIncrementalChecksumMatchesTheOneShotOne() {
        var generator = SystemRandomNumberGenerator()
        let lengths = [0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 65] + (0..<100).map { _ in Int.random(in: 0...100_000) }
        for length in lengths {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let expected = bytes.withUnsafeBytes { Checksum.xxh64($0) }
            // Random cut points, some of them close together (parts of a few bytes).
            var cuts = (0..<Int.random(in: 0...12)).map { _ in Int.random(in: 0...length) }
            if length > 40 { cuts += [5, 6, 37] }
            cuts = Array(Set(cuts)).sorted()
            var hasher = Checksum.Incremental()
            bytes.withUnsafeBytes { buffer in
                var start = 0
                for cut in cuts + [length] {
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[start..<cut]))
                    start = cut
                }
            }
            #expect(hasher.finalize() == expected, "\(length) bytes cut at \(cuts)")
        }
        #expect(Checksum.Incremental().finalize() == 0xEF46_DB37_51D8_E999)
    }
}
