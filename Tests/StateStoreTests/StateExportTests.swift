import Foundation
import StateStore
import StateStoreCrypto
import Testing

/// ``StateExport`` and ``StateStore/importStates(_:replace:)`` through the public API only, on
/// real database files.
@Suite("Export and import") struct StateExportTests {
    let folder = TemporaryFolder()

    /// A store with states that stress the document: non-canonical JSON, floats, escapes, binary
    /// bytes that happen to be JSON, empty bytes, nesting deeper than a document embeds, and a
    /// path with Unicode and SQL in it.
    func populatedStore(_ name: String = "source.sqlite") throws -> StateStore {
        let store = try StateStore(path: folder.file(name))
        try store.save(["selected": "m-42", "unread": "2"], for: "root/inbox")
        try store.save(
            encoded: Data(#"{ "a" : 1.50, "b":[1,2] }"#.utf8), encoding: .json, typeName: "Loose", version: 1,
            for: "tricky/loose")
        try store.save(["x": 0.1, "y": 1e300, "z": -0.0], for: "tricky/floats")
        try store.save(["tab\t": "\u{1}\u{7F}é😀/\\\""], for: "tricky/escapes")
        try store.save(
            encoded: Data("[1,2,3]".utf8), encoding: .binary, typeName: "Raw", version: 4, for: "tricky/binary-json")
        try store.save(encoded: Data(), encoding: .binary, typeName: "Empty", version: 0, for: "tricky/empty")
        try store.save(
            encoded: Data((0..<256).map { UInt8($0) }), encoding: .binary, typeName: "Bytes", version: 2,
            for: "tricky/bytes")
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        try store.save(encoded: Data(deep.utf8), encoding: .json, typeName: "Deep", version: 1, for: "tricky/deep")
        try store.save("unicode ✓", for: try RestorationPath(validating: "ünï/'; DROP TABLE states; --"))
        for _ in 0..<4 { try store.save(UUID().uuidString, for: "root/busy") }  // generation 4
        return store
    }

    // MARK: Round trip

    @Test func exportThenImportIntoAFreshStoreReproducesEveryState() throws {
        let source = try populatedStore()
        let exportedAt = Date(timeIntervalSince1970: 1_767_323_045.678)
        let export = try StateExport(store: source, exportedAt: exportedAt)
        #expect(export.states.map(\.path) == (try source.entries()).map(\.path))
        #expect(export.databaseSchemaVersion == source.schemaVersion)
        let data = try export.encoded()

        let decoded = try StateExport(decoding: data)
        #expect(decoded == export)
        #expect(decoded.exportedAt == exportedAt)

        let target = try StateStore(path: folder.file("target/state.sqlite"))
        let result = try target.importStates(decoded)
        #expect(result == StateStore.ImportResult(created: 10, replaced: 0, removed: 0))
        #expect(result.imported == 10)
        #expect(try target.states() == (try source.states()))
        #expect(try target.states().first { $0.path == "root/busy" }?.generation == 4)
        #expect(try target.check().isHealthy)

        // The same document again from the copy: the round trip is stable.
        #expect(try StateExport(store: target, exportedAt: exportedAt).encoded() == data)
    }

    @Test func theDocumentEmbedsExactJSONAndBase64sTheRest() throws {
        let source = try populatedStore()
        let text = String(decoding: try StateExport(store: source).encoded(), as: UTF8.self)
        #expect(
            text.hasPrefix(
                "{\n  \"schema\": 1,\n  \"kind\": \"export\",\n  \"database_schema_version\": \(source.schemaVersion),\n  \"exported_at\": \""
            ))
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\"state_count\": 10,"))
        // Compact JSON is embedded, even in a binary row; anything else is base64.
        #expect(text.contains(#""base64": "\#(Data("[1,2,3]".utf8).base64EncodedString())""#) == false)
        #expect(text.contains(#""base64": "\#(Data(#"{ "a" : 1.50, "b":[1,2] }"#.utf8).base64EncodedString())""#))
        #expect(text.contains(#""base64": """#))  // the empty state
        // Nested deeper than a document embeds: base64, not a refusal.
        #expect(
            text.contains(
                #""base64": "\#(Data((String(repeating: "[", count: 70) + String(repeating: "]", count: 70)).utf8).base64EncodedString())""#
            ))
    }

    /// `encoded()` writes the document a state at a time, so that one over the limit is refused
    /// without being held whole: byte for byte what the document's JSON value pretty-prints, with
    /// and without quarantined rows, sealed states and an export time, and with no state at all.
    @Test func theDocumentWrittenAStateAtATimeIsTheOneItsJSONValuePrints() throws {
        let clear = try populatedStore()
        #expect(try clear.quarantine("tricky/floats", reason: "for the record"))
        let sealed = try StateStore(
            path: folder.file("sealed.sqlite"), options: .init(sealer: StateKeyring(testKey(3))))
        try sealed.save(["secret": "s3cret"], for: "vault/note")
        try sealed.save("clear as sealed", for: "vault/other")
        let documents = [
            try StateExport(store: clear),
            try StateExport(store: clear, exportedAt: Date(timeIntervalSince1970: 0)),
            try StateExport(store: sealed),
            try StateExport(store: StateStore.inMemory()),
            StateExport(states: try clear.states(), databaseSchemaVersion: clear.schemaVersion, exportedAt: nil),
        ]
        for document in documents {
            let written = try document.encoded()
            #expect(written == Data(document.json.serializedBytes(pretty: true) + [UInt8(ascii: "\n")]))
            #expect(try document.encoded(limit: written.count) == written)
            // Over the limit, the whole document is still counted.
            for limit in [written.count - 1, 10] {
                #expect(throws: StateExport.ExportError.documentTooLarge(byteCount: written.count, limit: limit)) {
                    try document.encoded(limit: limit)
                }
            }
        }
    }

    /// What `statectl export` writes: the document read from the store a state at a time,
    /// byte for byte what the export's value encodes, and counted as it is written.
    @Test func theDocumentWrittenFromTheStoreIsTheOneTheExportEncodes() throws {
        let clear = try populatedStore()
        #expect(try clear.quarantine("tricky/floats", reason: "for the record"))
        let keyring = StateKeyring(try testKey(5))
        let sealed = try StateStore(path: folder.file("sealed.sqlite"), options: .init(sealer: keyring))
        try sealed.save(["secret": "s3cret"], for: "vault/note")
        try sealed.save(
            encoded: Data(repeating: 9, count: 100), encoding: .binary, typeName: "B", version: 0, for: "vault/binary")
        let exportedAt = Date(timeIntervalSince1970: 1_767_323_045.678)
        for (store, unsealed) in [(clear, false), (sealed, false), (sealed, true), (try StateStore.inMemory(), false)] {
            let export = try StateExport(store: store, exportedAt: exportedAt, unsealed: unsealed)
            let expected = try export.encoded()
            var pieces: [[UInt8]] = []
            let written = try StateExport.write(
                store: store, maximumStateSize: StateStore.Options().maximumStateSize, exportedAt: exportedAt,
                unsealed: unsealed
            ) { pieces.append(Array($0)) }
            #expect(Data(pieces.joined()) == expected)
            // A piece per state, besides the header's, the end's and the quarantine's.
            #expect(pieces.count >= export.states.count + 2)
            #expect(written.stateCount == export.states.count)
            #expect(written.stateBytes == export.states.reduce(0) { $0 + $1.bytes.count })
            #expect(written.sealedCount == export.states.filter(\.isSealed).count)
            #expect(written.byteCount == expected.count)
        }

        // Over the limit once written: refused with the bytes written until then, and no more
        // handed on than the limit.
        let full = try StateExport(store: clear).encoded().count
        var handedOn = 0
        do {
            _ = try StateExport.write(store: clear, maximumStateSize: 1 << 20, unsealed: false, limit: full - 200) {
                handedOn += $0.count
            }
            Issue.record("a document over its limit was written")
        } catch {
            guard case .documentTooLarge(let byteCount, let limit) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(limit == full - 200)
            #expect(byteCount > limit && byteCount <= full)
            #expect(handedOn <= limit)
        }
        // Over it by the rows' listing alone: refused before a state is read.
        let smallest = StateExport.minimumByteCount(of: try clear.entries(), unsealed: false)
        #expect(throws: StateExport.ExportError.documentTooLarge(byteCount: smallest, limit: smallest - 1)) {
            try StateExport.write(store: clear, maximumStateSize: 1 << 20, unsealed: false, limit: smallest - 1) { _ in
            }
        }

        // The piece that takes the document over its limit is counted, not checked (a state of
        // hundreds of MiB is not parsed back to be refused): a damaged last state over the limit
        // is refused as too large.
        var sizes: [Int] = []
        _ = try StateExport.write(store: clear, maximumStateSize: 1 << 20, unsealed: false) { sizes.append($0.count) }
        let lastPath = try #require(try clear.entries().last?.path)
        try rawSQL(
            folder.file("source.sqlite"),
            "UPDATE states SET checksum = checksum + 1 WHERE path = '\(lastPath.rawValue.replacingOccurrences(of: "'", with: "''"))'"
        )
        // The pieces: the header, one per state, the quarantine's opening, its row, the end.
        let beforeLast = sizes.prefix(sizes.count - 4).reduce(0, +)
        #expect(beforeLast + 1 >= smallest)
        #expect(
            throws: StateExport.ExportError.documentTooLarge(
                byteCount: beforeLast + sizes[sizes.count - 4], limit: beforeLast + 1)
        ) {
            try StateExport.write(store: clear, maximumStateSize: 1 << 20, unsealed: false, limit: beforeLast + 1) {
                _ in
            }
        }
        #expect(
            throws: StateExport.ExportError.notImportable(
                .init(.checksumMismatch, stateIndex: 8, statePath: lastPath.rawValue))
        ) {
            try StateExport.write(store: clear, maximumStateSize: 1 << 20, unsealed: false) { _ in }
        }
        try rawSQL(
            folder.file("source.sqlite"),
            "UPDATE states SET checksum = checksum - 1 WHERE path = '\(lastPath.rawValue.replacingOccurrences(of: "'", with: "''"))'"
        )

        // A row whose checksum fails is named, as the decoder names it.
        try rawSQL(
            folder.file("source.sqlite"), "UPDATE states SET checksum = checksum + 1 WHERE path = 'tricky/loose'")
        #expect(
            throws: StateExport.ExportError.notImportable(
                .init(.checksumMismatch, stateIndex: 7, statePath: "tricky/loose"))
        ) {
            try StateExport.write(store: clear, maximumStateSize: 1 << 20, unsealed: false) { _ in }
        }
        // An update time the document cannot carry: every such row named, none read.
        try rawSQL(
            folder.file("source.sqlite"),
            "UPDATE states SET updated_at = -100000000000000 WHERE path IN ('root/inbox', 'tricky/deep')")
        #expect(throws: StateExport.ExportError.timesOutOfRange(["root/inbox", "tricky/deep"])) {
            try StateExport.write(store: clear, maximumStateSize: 1 << 20, unsealed: false) { _ in }
        }
    }

    /// `statectl export` refuses a document over the limit from the rows' listing when even its
    /// smallest form is over: that form is never more than what is written.
    @Test func theSmallestDocumentTheListingAllowsIsNeverLargerThanTheDocument() throws {
        let clear = try populatedStore()
        // JSON with room to shrink once embedded, the worst case for a bound.
        try clear.save(
            encoded: Data(#"[ "\u0041"  ,   1   ,  "\u0042" ]"#.utf8), encoding: .json, typeName: "S", version: 1,
            for: "s")
        let sealed = try StateStore(
            path: folder.file("sealed.sqlite"), options: .init(sealer: StateKeyring(testKey(4))))
        try sealed.save(String(repeating: "x", count: 3000), for: "vault/long")
        try sealed.save(encoded: Data(), encoding: .binary, typeName: "E", version: 0, for: "vault/empty")
        try sealed.save(
            encoded: Data(repeating: 7, count: 3000), encoding: .binary, typeName: "B", version: 0, for: "vault/binary")
        for store in [clear, sealed, try StateStore.inMemory()] {
            // Written clear, a sealed state is its plaintext: no key id, no base64 of the sealed bytes.
            let clearBound = StateExport.minimumByteCount(of: try store.entries(), unsealed: true)
            let writtenClear = try StateExport(store: store, unsealed: true).encoded().count
            #expect(clearBound <= writtenClear, "\(clearBound) > \(writtenClear)")
            let bound = StateExport.minimumByteCount(of: try store.entries(), unsealed: false)
            let written = try StateExport(store: store).encoded().count
            #expect(bound <= written, "\(bound) > \(written)")
            // And not a loose one: more than half of what is written.
            #expect(bound * 2 > written, "\(bound) vs \(written)")
        }
    }

    @Test func importMergesByPathAndReplaceRemovesTheRest() throws {
        let source = try populatedStore()
        let export = try StateExport(decoding: try StateExport(store: source).encoded())

        let target = try StateStore(path: folder.file("target.sqlite"))
        for _ in 0..<10 { try target.save(UUID().uuidString, for: "root/inbox") }  // generation 10
        try target.save("kept", for: "other/state")

        let merged = try target.importStates(export)
        #expect(merged == StateStore.ImportResult(created: 9, replaced: 1, removed: 0))
        // The replaced row's generation moves past what a running app has seen.
        let inbox = try #require(try target.state(at: "root/inbox"))
        #expect(inbox.generation == 11)
        #expect(inbox.bytes == (try source.state(at: "root/inbox"))?.bytes)
        #expect(try target.state(at: "other/state") != nil)

        let replaced = try target.importStates(export, replace: true)
        #expect(replaced == StateStore.ImportResult(created: 0, replaced: 10, removed: 1))
        #expect(try target.entries().map(\.path) == (try source.entries()).map(\.path))
    }

    @Test func anExportBuiltByHandIsCheckedBeforeItIsWritten() throws {
        let state = StoredState(
            path: "root/a", typeName: "T", version: 1, generation: 1, encoding: .json,
            updatedAt: Date(timeIntervalSince1970: 0), bytes: Data("{}".utf8)
        )
        let store = try StateStore(path: folder.file("state.sqlite"))
        try store.save("before", for: "root/b")
        let twice = StateExport(states: [state, state])
        #expect(throws: StateStoreError.invalidState(path: "root/a", reason: "the export holds it more than once")) {
            try store.importStates(twice, replace: true)
        }
        #expect(throws: StateExport.ExportError.notImportable(.init(.duplicatePath("root/a"), stateIndex: 1))) {
            try twice.encoded()
        }
        #expect(try store.entries().map(\.path) == ["root/b"])

        var damaged = state
        damaged.checksum &+= 1
        #expect(
            throws: StateExport.ExportError.notImportable(.init(.checksumMismatch, stateIndex: 0, statePath: "root/a"))
        ) {
            try StateExport(states: [damaged]).encoded()
        }
        var ancient = state
        ancient.updatedAt = Date(timeIntervalSince1970: -1e12)
        #expect(throws: StateExport.ExportError.timesOutOfRange(["root/a"])) {
            try StateExport(states: [ancient]).encoded()
        }
    }

    // MARK: Export refusals

    @Test func exportNamesRowsADecoderWouldRefuse() throws {
        let path = folder.file("state.sqlite")
        let store = try populatedStore("state.sqlite")
        #expect(throws: StateExport.ExportError.self) { try StateExport(store: store, maximumStateSize: 200) }
        do {
            _ = try StateExport(store: store, maximumStateSize: 200)
        } catch {
            guard case .statesTooLarge(let entries, let limit) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(limit == 200)
            #expect(entries.map(\.path) == ["tricky/bytes"])
        }

        try rawSQL(path, "UPDATE states SET checksum = checksum + 1 WHERE path = 'root/inbox'")
        do {
            _ = try StateExport(store: store).encoded()
            Issue.record("a row whose checksum fails was exported")
        } catch {
            guard case .notImportable(let refusal) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(refusal.problem == .checksumMismatch)
            #expect(refusal.statePath == "root/inbox")
            #expect(error.description.contains("the checksum does not match the state's bytes"))
        }

        try rawSQL(
            path,
            "INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes) VALUES ('root//x', 'T', 1, 1, 'json', 0, 0, x'7b7d')"
        )
        do {
            _ = try StateExport(store: store)
            Issue.record("a row with an invalid path was exported")
        } catch {
            guard case .invalidRows(let rows) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(rows.map(\.path) == ["root//x"])
        }
    }

    // MARK: Malformed documents

    /// A valid document with `states` spliced in after a first, valid state.
    static func document(
        states: String, schema: Int = 1, databaseSchema: Int = StateStore.latestSchemaVersion, extra: String = ""
    ) -> String {
        """
        {"schema": \(schema), "kind": "export", "database_schema_version": \(databaseSchema),\(extra)
         "exported_at": "2026-01-02T03:04:05.678Z", "states": [
          {"path": "root/valid", "type_name": "T", "version": 1, "generation": 1, "encoding": "json",
           "updated_at": "2026-01-02T03:04:05.678Z", "value": {"ok": true}}\(states.isEmpty ? "" : ",")
          \(states)
        ]}
        """
    }

    static let malformed: [(name: String, text: String, refusal: StateExport.DocumentError)] = [
        (
            "duplicate key", #"{"schema": 1, "schema": 1, "kind": "export"}"#,
            .init(.malformedJSON(reason: #"the key "schema" appears twice in one object"#, line: 1, column: 15))
        ),
        (
            "duplicate key in a state",
            document(
                states:
                    #"{"path": "root/a", "path": "root/b", "type_name": "T", "version": 1, "encoding": "json", "value": 1}"#
            ),
            .init(.malformedJSON(reason: #"the key "path" appears twice in one object"#, line: 5, column: 22))
        ),
        (
            "trailing text", #"{} {}"#,
            .init(.malformedJSON(reason: "unexpected text after the JSON value", line: 1, column: 4))
        ),
        (
            "too deep", String(repeating: "[", count: 100_000),
            .init(.malformedJSON(reason: "nesting deeper than 64 levels", line: 1, column: 65))
        ),
        ("not an object", "[1, 2, 3]", .init(.topLevelNotAnObject(kind: "an array"))),
        ("another kind", #"{"schema": 1, "kind": "entries"}"#, .init(.notAnExport)),
        ("format zero", document(states: "", schema: 0), .init(.invalidFormat(0))),
        ("newer format", document(states: "", schema: 2), .init(.formatTooNew(found: 2, supported: 1))),
        (
            "newer database", document(states: "", databaseSchema: StateStore.latestSchemaVersion + 1),
            .init(
                .databaseSchemaTooNew(
                    found: StateStore.latestSchemaVersion + 1, supported: StateStore.latestSchemaVersion))
        ),
        (
            "incomplete", document(states: "", extra: #" "state_count": 2,"#),
            .init(.stateCountMismatch(declared: 2, actual: 1))
        ),
        (
            "duplicate path",
            document(
                states: #"{"path": "root/valid", "type_name": "T", "version": 1, "encoding": "json", "value": 2}"#),
            .init(.duplicatePath("root/valid"), stateIndex: 1)
        ),
        (
            "impossible date",
            document(
                states:
                    #"{"path": "root/t", "type_name": "T", "version": 1, "encoding": "json", "updated_at": "2026-02-30T00:00:00.000Z", "value": 1}"#
            ),
            .init(.invalidUpdateTime, stateIndex: 1, statePath: "root/t")
        ),
        (
            "control character in a type",
            document(
                states: #"{"path": "root/c", "type_name": "T\u001B[31m", "version": 1, "encoding": "json", "value": 1}"#
            ),
            .init(.invalidTypeName, stateIndex: 1, statePath: "root/c")
        ),
        (
            "control character in a path",
            document(
                states: #"{"path": "root/a\u0000b", "type_name": "T", "version": 1, "encoding": "json", "value": 1}"#),
            .init(
                .invalidPath(
                    "root/a\u{0}b", reason: "the component \("a\u{0}b".debugDescription) contains a control character"),
                stateIndex: 1, statePath: "root/a\u{0}b")
        ),
        (
            "version out of range",
            document(
                states: #"{"path": "root/v", "type_name": "T", "version": 99999999999, "encoding": "json", "value": 1}"#
            ),
            .init(.invalidVersion, stateIndex: 1, statePath: "root/v")
        ),
        (
            "generation out of range",
            document(
                states:
                    #"{"path": "root/g", "type_name": "T", "version": 1, "generation": 9223372036854775807, "encoding": "json", "value": 1}"#
            ),
            .init(.invalidGeneration, stateIndex: 1, statePath: "root/g")
        ),
        (
            "wrong checksum",
            document(
                states:
                    #"{"path": "root/k", "type_name": "T", "version": 1, "encoding": "json", "checksum": "0000000000000001", "value": 1}"#
            ),
            .init(.checksumMismatch, stateIndex: 1, statePath: "root/k")
        ),
        (
            "wrong byte count",
            document(
                states:
                    #"{"path": "root/n", "type_name": "T", "version": 1, "encoding": "json", "byte_count": 2, "value": 1}"#
            ),
            .init(.byteCountMismatch(actual: 1), stateIndex: 1, statePath: "root/n")
        ),
        (
            "both value and base64",
            document(
                states:
                    #"{"path": "root/b", "type_name": "T", "version": 1, "encoding": "json", "value": 1, "base64": "MQ=="}"#
            ),
            .init(.valueAndBase64, stateIndex: 1, statePath: "root/b")
        ),
        (
            "over the state size",
            document(
                states:
                    #"{"path": "root/big", "type_name": "T", "version": 1, "encoding": "binary", "base64": "\#(Data(count: 101).base64EncodedString())"}"#
            ),
            .init(.stateTooLarge(byteCount: 101, limit: 100), stateIndex: 1, statePath: "root/big")
        ),
        (
            "base64 longer than any state",
            document(
                states:
                    #"{"path": "root/big", "type_name": "T", "version": 1, "encoding": "binary", "base64": "\#(Data(count: 300).base64EncodedString())"}"#
            ),
            .init(.invalidBase64(limit: 100), stateIndex: 1, statePath: "root/big")
        ),
        (
            "a state that is not an object", document(states: "42"),
            .init(.stateNotAnObject(kind: "a number"), stateIndex: 1)
        ),
        // The states are read as they come, and the first problem in the decoder's order is the
        // one named, wherever the members are: JSON that is not well formed anywhere, then the
        // document's own members, then the first state at fault.
        (
            "a newer format after a state at fault",
            #"{"kind": "export", "database_schema_version": 1, "states": [42], "schema": 2}"#,
            .init(.formatTooNew(found: 2, supported: 1))
        ),
        (
            "broken JSON after a state at fault",
            #"{"schema": 1, "kind": "export", "database_schema_version": 1, "states": [42], "x": tru}"#,
            .init(.malformedJSON(reason: "invalid literal", line: 1, column: 84))
        ),
        (
            "states twice",
            #"{"schema": 1, "kind": "export", "database_schema_version": 1, "states": [], "states": [42]}"#,
            .init(.malformedJSON(reason: #"the key "states" appears twice in one object"#, line: 1, column: 77))
        ),
        (
            "states not an array",
            #"{"schema": 1, "kind": "export", "database_schema_version": 1, "states": {"0": 42}}"#,
            .init(.missingStates)
        ),
        ("two states at fault", document(states: "42, 43"), .init(.stateNotAnObject(kind: "a number"), stateIndex: 1)),
        (
            "a count after the states",
            #"{"states": [], "state_count": 1, "schema": 1, "kind": "export", "database_schema_version": 1}"#,
            .init(.stateCountMismatch(declared: 1, actual: 0))
        ),
    ]

    /// Quarantined rows are counted wherever they are, and states after them are read.
    @Test func quarantinedRowsAreCountedWhereverTheyAre() throws {
        let text =
            #"{"quarantine": [{"path": "q"}, 7, [[]]], "states": [{"path": "root/a", "type_name": "T", "version": 1, "encoding": "json", "value": {"quarantine": [1]}}], "schema": 1, "kind": "export", "database_schema_version": 1}"#
        let decoded = try StateExport(decoding: Data(text.utf8))
        #expect(decoded.quarantineCarried == 3)
        #expect(decoded.states.map(\.path) == ["root/a"])
        #expect(decoded.states.first?.bytes == Data(#"{"quarantine":[1]}"#.utf8))
        let none = try StateExport(
            decoding: Data(
                #"{"schema": 1, "kind": "export", "database_schema_version": 1, "states": [], "quarantine": {}}"#.utf8))
        #expect(none.quarantineCarried == 0 && none.states.isEmpty)
    }

    @Test(arguments: malformed.indices)
    func aMalformedDocumentIsRefusedWhole(_ index: Int) throws {
        let (name, text, refusal) = Self.malformed[index]
        #expect(throws: refusal, "\(name)") {
            try StateExport(decoding: Data(text.utf8), maximumStateSize: 100)
        }
    }

    @Test func refusalsSayWhereAndWhat() throws {
        let text = Self.document(
            states: #"{"path": "root//x", "type_name": "T", "version": 1, "encoding": "json", "value": 1}"#)
        do {
            _ = try StateExport(decoding: Data(text.utf8))
            Issue.record("an invalid path was accepted")
        } catch {
            #expect(error.location == #"states[1] ("root//x")"#)
            #expect(
                error.description
                    == #"states[1] ("root//x"): "root//x" is not a valid restoration path: a component is empty"#)
            #expect(!error.isFromNewerBuild)
        }
        #expect(StateExport.DocumentError(.formatTooNew(found: 2, supported: 1)).isFromNewerBuild)
        #expect(StateExport.DocumentError(.missingStates).description == #""states" is missing or not an array"#)
    }

    @Test func oversizedDocumentsAndLimitsNeverTrap() throws {
        #expect(
            throws: StateExport.DocumentError(
                .documentTooLarge(byteCount: StateExport.maximumByteCount + 1, limit: StateExport.maximumByteCount))
        ) {
            try StateExport(decoding: Data(count: StateExport.maximumByteCount + 1))
        }
        // Extreme limits are taken as they are.
        let text = Self.document(
            states: #"{"path": "root/b", "type_name": "T", "version": 1, "encoding": "binary", "base64": "AAEC"}"#)
        for limit in [Int.max, Int.min, 0] {
            let decoded = try? StateExport(decoding: Data(text.utf8), maximumStateSize: limit)
            #expect((decoded != nil) == (limit == .max), "\(limit)")
        }
    }

    @Test func aRefusedDocumentLeavesTheStoreAsItWas() throws {
        let path = folder.file("state.sqlite")
        let store = try populatedStore("state.sqlite")
        let before = FileSnapshot(path)
        let rows = try store.states()
        let text = Self.document(
            states: #"{"path": "root/inbox", "type_name": "T", "version": -1, "encoding": "json", "value": 1}"#)
        #expect(throws: StateExport.DocumentError(.invalidVersion, stateIndex: 1, statePath: "root/inbox")) {
            let export = try StateExport(decoding: Data(text.utf8))
            try store.importStates(export, replace: true)
        }
        #expect(try store.states() == rows)
        #expect(FileSnapshot(path) == before)
    }
}

extension StateExportTests {
    /// A clear state's bytes count toward the smallest document: a store holding a state whose
    /// bytes alone are over the document limit is refused from its listing, nothing handed on
    /// and no state read (a 300 MiB row was read, then refused, at 1.4 GB of memory).
    @Test func aStateLargerThanTheDocumentLimitIsRefusedBeforeAnyStateIsRead() throws {
        let store = try StateStore(
            path: folder.file("large.sqlite"), options: .init(maximumStateSize: 4 << 20))
        try store.save(
            encoded: Data(repeating: 1, count: 3 << 20), encoding: .binary, typeName: "B", version: 1, for: "big")
        try store.save(["small": 1], for: "small")
        let limit = 2 << 20
        var handedOn = 0
        #expect {
            try StateExport.write(store: store, maximumStateSize: 4 << 20, unsealed: false, limit: limit) {
                handedOn += $0.count
            }
        } throws: { error in
            guard case StateExport.ExportError.documentTooLarge(let byteCount, limit) = error else { return false }
            return byteCount == StateExport.minimumByteCount(of: try store.entries(), unsealed: false)
                && byteCount > 3 << 20
        }
        #expect(handedOn == 0)
    }
}
