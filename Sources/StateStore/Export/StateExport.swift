import Foundation

/// Every state of a store as one JSON document, to back up, move or inspect, and to import
/// again into the same or another store.
///
/// ```swift
/// let data = try StateExport(store: store).encoded()
/// // … later, or elsewhere:
/// let export = try StateExport(decoding: data)
/// try otherStore.importStates(export)
/// ```
///
/// The document, as ``encoded()`` writes it (and `statectl export` prints it):
///
/// ```json
/// {
///   "schema": 1,
///   "kind": "export",
///   "database_schema_version": 1,
///   "exported_at": "2026-01-02T03:04:05.678Z",
///   "state_count": 1,
///   "states": [
///     {
///       "path": "root/inbox",
///       "type_name": "Mail.Inbox",
///       "version": 1,
///       "generation": 3,
///       "encoding": "json",
///       "updated_at": "2026-01-02T03:04:05.678Z",
///       "checksum": "9a3c0b6e5d4f2a11",
///       "byte_count": 42,
///       "value": {"unread": 2}
///     }
///   ]
/// }
/// ```
///
/// A state whose bytes are compact JSON that the encoder writes back byte for byte is embedded
/// as `"value"`; any other bytes as `"base64"`. `checksum` is the state's XXH64 as 16 hex
/// digits; times are ISO 8601 in UTC with milliseconds. When read, a state's `generation`,
/// `updated_at`, `checksum` and `byte_count` may be left out (1, the time of reading, and the
/// values its bytes give); when present they must be right.
///
/// What ``encoded()`` writes, ``init(decoding:maximumStateSize:)`` reads back: the encoder checks
/// each part of its output as the decoder checks a whole document (each state parsed back from
/// its own bytes and decoded), and throws rather than return a document the decoder would
/// refuse. The decoder is strict, and checks the whole document before returning anything: see
/// ``DocumentError/Problem`` for what it refuses.
public struct StateExport: Sendable, Hashable {
    /// The version of the document format this build writes, and the newest it reads (the
    /// document's `"schema"`). It rises only when the format changes incompatibly.
    public static let currentFormat = 1

    /// The largest document, in bytes, that ``encoded()`` writes and
    /// ``init(decoding:maximumStateSize:)`` reads: 256 MiB.
    public static let maximumByteCount = 256 << 20

    /// The deepest JSON nesting a document may have, its own three levels (the document,
    /// `states` and the state) included: 64. A state nested deeper is embedded as base64.
    public static let maximumDepth = 64

    /// Levels the document itself uses above a state's value: the document, `states`, the state.
    static let documentLevels = 3

    /// The states, in the order they were read or given (``init(store:maximumStateSize:exportedAt:unsealed:)``
    /// sorts them by path). In a document the decoder accepts, no two have the same path.
    public var states: [StoredState]

    /// The schema version of the database the states were read from
    /// (``StateStore/StateStore/schemaVersion``); informational, since the states themselves do
    /// not depend on it. A decoded document's is at most ``StateStore/StateStore/latestSchemaVersion``.
    public var databaseSchemaVersion: Int

    /// A row the store set aside in quarantine, carried by an export for the record: an import
    /// does not bring it back (the decoder reads ``states``, and counts these in
    /// ``quarantineCarried``).
    public struct QuarantineEntry: Sendable, Hashable {
        /// The quarantined row: its metadata, reason, and bytes (see ``byteCount``).
        public var state: StateStore.QuarantinedState
        /// The row's length in bytes; `state.bytes` is empty when it was over the export's
        /// state size limit (the document then gives the length alone).
        public var byteCount: Int
    }

    /// The quarantined rows of the exported store, newest first: the bytes a failed decode,
    /// a hostile row or a changed type set aside. Written as `quarantine` when not empty.
    public var quarantine: [QuarantineEntry] = []

    /// How many quarantined rows a decoded document carries for the record (its `quarantine`
    /// array, which the decoder does not read into ``quarantine``): what an import leaves out,
    /// so a tool can say so. The length of ``quarantine`` for an export made here.
    public var quarantineCarried: Int { decodedQuarantineCount ?? quarantine.count }
    var decodedQuarantineCount: Int?

    /// When the export was made. `nil` when a decoded document does not say, or says it in a
    /// form other than ISO 8601 in UTC: it is informational, so it is not a reason to refuse a
    /// document. ``encoded()`` leaves it out when `nil`.
    public var exportedAt: Date?

    /// An export of the given states.
    ///
    /// Nothing is checked here; ``encoded()`` refuses what a decoder would refuse.
    ///
    /// - Parameters:
    ///   - states: the states, in the order the document lists them.
    ///   - databaseSchemaVersion: the schema version of the database they come from.
    ///   - exportedAt: when the export was made; `nil` leaves `exported_at` out of the document.
    public init(
        states: [StoredState], databaseSchemaVersion: Int = StateStore.latestSchemaVersion, exportedAt: Date? = Date()
    ) {
        self.states = states
        self.databaseSchemaVersion = databaseSchemaVersion
        self.exportedAt = exportedAt
    }

    /// Every state in `store`, sorted by path, and its quarantined rows, read in one snapshot.
    ///
    /// Rows the document could not carry, or that a decoder would refuse, are named before any
    /// bytes are read: rows whose path is not a valid ``RestorationPath`` (written outside the
    /// store; see ``StateStore/StateStore/invalidRows()``) and states over `maximumStateSize`.
    ///
    /// - Parameters:
    ///   - store: the store to read; it may be open read-only.
    ///   - maximumStateSize: the largest state exported, in bytes. Give the limit the
    ///     importing side will use: the default is the default of
    ///     ``StateStore/StateStore/Options/maximumStateSize`` (1 MiB).
    ///   - exportedAt: the time written as `exported_at`.
    ///   - unsealed: write sealed states clear, opened with the store's
    ///     ``StateStore/StateStore/Options/sealer``. By default they are written as stored: sealed,
    ///     as base64 beside their `"key_id"`, so the document is no more readable than the file.
    /// - Throws: ``ExportError/invalidRows(_:)`` or ``ExportError/statesTooLarge(_:limit:)``
    ///   for rows an import would refuse, ``ExportError/store(_:)`` when the store cannot be read.
    public init(
        store: StateStore,
        maximumStateSize: Int = StateStore.Options().maximumStateSize,
        exportedAt: Date = Date(),
        unsealed: Bool = false
    ) throws(ExportError) {
        var states: [StoredState] = []
        let quarantine = try Self.read(
            store, maximumStateSize: maximumStateSize, unsealed: unsealed, documentLimit: nil,
            begin: { states.reserveCapacity($0) },
            visit: {
                states.append($0)
                return true
            }
        )
        self.init(states: states, databaseSchemaVersion: store.schemaVersion, exportedAt: exportedAt)
        self.quarantine = quarantine
    }

    /// The document as UTF-8 JSON, pretty-printed with two-space indents and ending in a newline.
    ///
    /// Each part of it is checked as it is written, as ``init(decoding:maximumStateSize:)``
    /// (with a state size limit as large as the document's) checks a whole document, so what
    /// this returns is a document a decoder accepts.
    ///
    /// - Throws: ``ExportError/timesOutOfRange(_:)`` for update times ISO 8601 cannot write with
    ///   a four-digit year, ``ExportError/documentTooLarge(byteCount:limit:)`` over
    ///   ``maximumByteCount``, and ``ExportError/notImportable(_:)`` for anything else a
    ///   decoder would refuse (a checksum that does not match, a duplicate path, a type name
    ///   with a control character, a version or generation out of range).
    public func encoded() throws(ExportError) -> Data {
        try encoded(limit: Self.maximumByteCount)
    }

    /// ``encoded()`` with a document limit of `limit` bytes. A document over it is counted to
    /// its end, not held: ``ExportError/documentTooLarge(byteCount:limit:)`` gives its length.
    package func encoded(limit: Int) throws(ExportError) -> Data {
        let undated = states.filter { !TextFormat.isRepresentable($0.updatedAt) }
        if !undated.isEmpty { throw .timesOutOfRange(undated.map(\.path)) }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, 64 + states.reduce(0) { $0 + 320 + $1.bytes.count }))
        func sink(_ bytes: borrowing [UInt8]) { bytes.withUnsafeBufferPointer { output.append(contentsOf: $0) } }
        var document = try DocumentWriter(
            databaseSchemaVersion: databaseSchemaVersion, exportedAt: exportedAt, stateCount: states.count,
            limit: limit, to: sink
        )
        for state in states { try document.add(state, to: sink) }
        try document.finish(quarantine: quarantine, to: sink)
        if document.isOverLimit { throw .documentTooLarge(byteCount: document.byteCount, limit: limit) }
        return Data(output)
    }

    /// A lower bound on the bytes ``encoded()`` would write for `entries`, from their listing
    /// alone (no state read): each state's object takes at least 240 bytes besides its path and
    /// type name (its keys, indents, an ISO 8601 time, a checksum), a sealed state written as
    /// stored at least its base64, and a clear state at least its bytes: it is embedded as
    /// `value` only when its bytes are exactly that value's compact text, which the document
    /// writes indented, else as base64. A sealed state written clear (`unsealed`) counts none of
    /// its bytes: its plaintext is shorter by the seal, whose size this listing does not know.
    package static func minimumByteCount(of entries: [StateStore.Entry], unsealed: Bool) -> Int {
        entries.reduce(minimumDocumentByteCount) { $0 + minimumByteCount(of: $1, unsealed: unsealed) }
    }

    /// The least a document with no state takes.
    static let minimumDocumentByteCount = 128

    /// The least `entry`'s state adds to a document (``minimumByteCount(of:unsealed:)``).
    static func minimumByteCount(of entry: StateStore.Entry, unsealed: Bool) -> Int {
        let bytes =
            switch entry.keyID {
            case nil: entry.byteCount
            case let keyID? where !unsealed: keyID.utf8.count + 4 * ((entry.byteCount + 2) / 3)
            case _?: 0
            }
        return 240 + entry.path.rawValue.utf8.count + entry.typeName.utf8.count + bytes
    }

    /// The document's members before `states`, in the order ``encoded()`` writes them.
    static func headerMembers(
        databaseSchemaVersion: Int, exportedAt: Date?, stateCount: Int
    ) -> [(key: String, value: JSON)] {
        var members: [(key: String, value: JSON)] = [
            ("schema", .int(Self.currentFormat)),
            ("kind", .string("export")),
            ("database_schema_version", .int(databaseSchemaVersion)),
        ]
        if let exportedAt { members.append(("exported_at", .string(TextFormat.iso8601(exportedAt)))) }
        members.append(("state_count", .int(stateCount)))
        return members
    }

    /// The document as a JSON value, built whole: the bytes ``encoded()`` writes a piece at a
    /// time, without building any state's value, are this value's pretty form.
    package var json: JSON {
        var members = Self.headerMembers(
            databaseSchemaVersion: databaseSchemaVersion, exportedAt: exportedAt, stateCount: states.count)
        members.append(("states", .array(states.map(Self.json))))
        if !quarantine.isEmpty { members.append(("quarantine", .array(quarantine.map(Self.json)))) }
        return .object(members)
    }

    static func json(_ entry: QuarantineEntry) -> JSON {
        let row = entry.state
        var members: [(key: String, value: JSON)] = [
            ("path", .string(row.path.rawValue)),
            ("reason", .string(row.reason)),
            ("type_name", .string(row.typeName)),
            ("version", .int(row.version)),
            ("generation", .string(String(row.generation))),
            ("encoding", .string(row.encoding.rawValue)),
        ]
        for (key, date) in [("updated_at", row.updatedAt), ("quarantined_at", row.quarantinedAt)]
        where TextFormat.isRepresentable(date) {
            members.append((key, .string(TextFormat.iso8601(date))))
        }
        members.append(("checksum", .string(TextFormat.checksum(row.checksum))))
        members.append(("byte_count", .int(entry.byteCount)))
        if let keyID = row.keyID { members.append(("key_id", .string(keyID))) }
        if row.bytes.count != entry.byteCount {
            members.append(("bytes_omitted", .string("over the state size limit")))
        } else if row.keyID != nil {
            members.append(("base64", .string(row.bytes.base64EncodedString())))
        } else if let value = JSON.exactValue(of: row.bytes, maximumDepth: maximumDepth - documentLevels) {
            members.append(("value", value))
        } else {
            members.append(("base64", .string(row.bytes.base64EncodedString())))
        }
        return .object(members)
    }

    /// A state's element of `states`: its JSON bytes embedded as `value` when they are exactly
    /// the compact text of that value (``JSON/exactValue(of:maximumDepth:)``), else base64.
    static func json(_ state: StoredState) -> JSON {
        var members = leadingMembers(of: state)
        if let keyID = state.keyID {
            members.append(("key_id", .string(keyID)))
            members.append(("base64", .string(state.bytes.base64EncodedString())))
        } else if let value = JSON.exactValue(of: state.bytes, maximumDepth: maximumDepth - documentLevels) {
            members.append(("value", value))
        } else {
            members.append(("base64", .string(state.bytes.base64EncodedString())))
        }
        return .object(members)
    }

    /// Appends `state` as ``json(_:)-(StoredState)`` writes it pretty as element `index` of the
    /// document's `states` (after its `[` or `,`), its JSON value copied from its bytes, never built.
    static func writeElement(_ state: StoredState, after index: Int, to output: inout [UInt8]) {
        output.append(contentsOf: (index == 0 ? "[\n    {" : ",\n    {").utf8)
        // The element is at indent 2, its members at 3.
        let members = leadingMembers(of: state)
        for (index, member) in members.enumerated() {
            JSON.writeKey(member.key, after: index, pretty: true, indent: 2, to: &output)
            member.value.write(to: &output, pretty: true, indent: 3)
        }
        var last: [(key: String, value: JSON)] = []
        if let keyID = state.keyID {
            last = [("key_id", .string(keyID)), ("base64", .string(state.bytes.base64EncodedString()))]
        } else {
            let before = output.count
            JSON.writeKey("value", after: members.count, pretty: true, indent: 2, to: &output)
            let exact =
                (try? JSONParser.copy(
                    state.bytes, maximumDepth: maximumDepth - documentLevels, prettyIndent: 3, to: &output
                )) ?? false
            if !exact {
                output.removeSubrange(before...)
                last = [("base64", .string(state.bytes.base64EncodedString()))]
            }
        }
        for (offset, member) in last.enumerated() {
            JSON.writeKey(member.key, after: members.count + offset, pretty: true, indent: 2, to: &output)
            member.value.write(to: &output, pretty: true, indent: 3)
        }
        JSON.writeEnd(UInt8(ascii: "}"), pretty: true, indent: 2, to: &output)
    }

    /// A state's members before its bytes, as a document carries them.
    private static func leadingMembers(of state: StoredState) -> [(key: String, value: JSON)] {
        [
            ("path", .string(state.path.rawValue)),
            ("type_name", .string(state.typeName)),
            ("version", .int(state.version)),
            ("generation", .int(state.generation)),
            ("encoding", .string(state.encoding.rawValue)),
            ("updated_at", .string(TextFormat.iso8601(state.updatedAt))),
            ("checksum", .string(TextFormat.checksum(state.checksum))),
            ("byte_count", .int(state.bytes.count)),
        ]
    }
}

extension JSON {
    /// `bytes` as a JSON value only when writing that value compactly gives back exactly the
    /// same bytes, so a document can embed it and a decoder restore it byte for byte.
    static func exactValue(of bytes: Data, maximumDepth: Int) -> JSON? {
        guard let value = try? JSONParser.parse(bytes, maximumDepth: maximumDepth) else { return nil }
        return Data(value.serializedBytes()) == bytes ? value : nil
    }
}
