import Foundation

/// How a state's bytes are encoded.
public enum StateEncoding: String, Sendable, Codable, CaseIterable {
    /// UTF-8 JSON with sorted keys: readable with `sqlite3` and `statectl`, and byte-stable,
    /// so an unchanged value is recognised and not rewritten.
    case json
    /// Opaque bytes written by the application.
    case binary
}

/// A state row as stored: metadata and the encoded bytes.
public struct StoredState: Sendable, Hashable {
    /// Where the state is stored: the restoration path of the controller it belongs to.
    public var path: RestorationPath
    /// The Swift type that was saved (`String(reflecting:)`), for diagnostics.
    public var typeName: String
    /// The application's version of the state's format.
    public var version: Int
    /// Rises by one every time the row's contents change.
    public var generation: Int64
    /// How the state is encoded: the encoding of ``bytes``, or of what they open to when sealed.
    public var encoding: StateEncoding
    /// The XXH64 (seed 0) of ``bytes`` as stored, its 64 bits read as a signed integer.
    public var checksum: Int64
    /// When the row was last written, to the millisecond; a save that changes nothing leaves it.
    public var updatedAt: Date
    /// The bytes as stored: sealed when ``keyID`` is set (``StateStore/plaintext(of:)`` opens them).
    public var bytes: Data
    /// The identifier of the key the bytes are sealed with, or `nil` for clear bytes.
    public var keyID: String? = nil

    /// Whether ``bytes`` still match ``checksum``.
    public var checksumIsValid: Bool { Checksum.stored(bytes) == checksum }

    /// The largest generation the store accepts from outside (``StateStore/WriteTransaction/insert(verbatim:)``):
    /// 2⁵³, the largest integer a JSON document carries exactly, and far from `Int64.max`, where
    /// the next save could no longer raise it.
    public static let maximumGeneration: Int64 = 1 << 53

    /// The largest version the store accepts from outside: `Int32.max`.
    public static let maximumVersion = Int(Int32.max)

    /// The longest type name, in bytes of UTF-8, an export document carries.
    static let maximumTypeNameLength = 4096

    /// Whether an export document carries `typeName`: no control character, and at most
    /// ``maximumTypeNameLength`` bytes. A Swift type name has neither; only another tool
    /// writes such a row.
    static func isCarried(typeName: String) -> Bool {
        guard typeName.utf8.count <= maximumTypeNameLength else { return false }
        // Printable ASCII (a Swift type name) needs no Unicode property lookup.
        let printable =
            typeName.utf8.withContiguousStorageIfAvailable { $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } } ?? false
        return printable || !typeName.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

extension StateStore {
    /// A row whose path is not a valid ``RestorationPath`` — an empty component, a control
    /// character such as NUL, bytes that are not UTF-8 — which only an edit outside the store
    /// makes. Listed by ``StateStore/invalidRows()`` and ``StateStore/check()``, never hidden,
    /// and removed only by ``StateStore/WriteTransaction/removeInvalidRows()``.
    public struct InvalidRow: Sendable, Hashable, Codable {
        /// The row's `rowid`: the one handle such a row has.
        public var rowID: Int64
        /// The stored path, readable: bytes that are not UTF-8 become U+FFFD.
        public var path: String
        /// Why it is not a valid restoration path.
        public var reason: String
        /// The length of the row's bytes.
        public var byteCount: Int
        /// When the row was last written, as its `updated_at` column gives it (to the millisecond).
        public var updatedAt: Date
    }

    /// One row of ``StateStore/entries(under:)``: what is stored at a path, without the bytes.
    public struct Entry: Sendable, Hashable {
        /// Where the state is stored.
        public var path: RestorationPath
        /// The application's version of the state's format.
        public var version: Int
        /// The length of the bytes as stored (sealed, when ``keyID`` is set).
        public var byteCount: Int
        /// When the row was last written, to the millisecond.
        public var updatedAt: Date
        /// The Swift type that was saved (`String(reflecting:)`), for diagnostics.
        public var typeName: String
        /// Rises by one every time the row's contents change.
        public var generation: Int64
        /// How the state is encoded.
        public var encoding: StateEncoding
        /// The key the state is sealed with, or `nil` when it is clear.
        public var keyID: String? = nil
    }

    /// What ``StateStore/save(_:for:version:)`` did.
    public struct SaveResult: Sendable, Hashable {
        /// The row's generation after the save.
        public var generation: Int64
        /// `false` when the stored bytes, version and type were already the same and nothing was written.
        public var wrote: Bool
        /// Why the row stored before was moved to quarantine instead of being replaced (its
        /// generation could no longer rise), or `nil` when it was not.
        public var setAside: String?

        /// A result with the given values; `setAside` is `nil` when nothing was moved to quarantine.
        public init(generation: Int64, wrote: Bool, setAside: String? = nil) {
            self.generation = generation
            self.wrote = wrote
            self.setAside = setAside
        }
    }
}

extension StoredState {
    /// The columns ``init(path:row:from:)`` reads, in its order. `?9` is the largest state
    /// loaded: a longer one reads as NULL, with its length beside it, so a row written outside
    /// the store (500 MB, say) is refused without being read into memory.
    static let columns =
        "type_name, version, generation, encoding, checksum, updated_at, CASE WHEN length(bytes) <= ?9 THEN bytes END, length(bytes), key_id"

    /// The row `statement` is on, its ``columns`` starting at column `first`. Throws
    /// ``StateStoreError/stateTooLarge(path:byteCount:limit:)`` for a row over `limit` bytes.
    init(path: RestorationPath, row statement: Statement, from first: Int32, limit: Int) throws(StateStoreError) {
        if statement.isNull(first + 6) {
            throw .stateTooLarge(path: path, byteCount: statement.int(first + 7), limit: limit)
        }
        let bytes = try statement.data(first + 6)
        guard let typeName = statement.validText(first) else {
            throw .invalidState(
                path: path,
                reason:
                    "its type name is not valid UTF-8 (it was written outside StateStore); save it again from the app, or remove it (`statectl prune --path`)"
            )
        }
        self.init(
            path: path,
            typeName: typeName,
            version: statement.int(first + 1),
            generation: statement.int64(first + 2),
            encoding: StateEncoding(rawValue: statement.string(first + 3)) ?? .binary,
            checksum: statement.int64(first + 4),
            updatedAt: Date(storedMilliseconds: statement.int64(first + 5)),
            bytes: bytes,
            keyID: statement.isNull(first + 8) ? nil : statement.string(first + 8)
        )
    }
}

extension StateStore.Entry {
    /// The columns ``all(from:)`` reads, in its order, path first.
    static let columns = "path, version, length(bytes), updated_at, type_name, generation, encoding, key_id"

    /// Every row `statement` returns, reading ``columns``; resets the statement. Rows whose
    /// path is not a valid restoration path are left to ``StateStore/invalidRows()``.
    static func all(from statement: Statement) throws(StateStoreError) -> [StateStore.Entry] {
        var entries: [StateStore.Entry] = []
        try forEach(in: statement) { entries.append($0) }
        return entries
    }

    /// ``all(from:)`` one entry at a time, ``columns`` from column `first`; resets the statement.
    static func forEach(
        in statement: Statement, from first: Int32 = 0, _ visit: (StateStore.Entry) -> Void
    ) throws(StateStoreError) {
        defer { statement.reset() }
        while try statement.step() {
            if let entry = StateStore.Entry(row: statement, from: first) { visit(entry) }
        }
    }

    /// The entry `statement` is on, ``columns`` from column `first`; `nil` for an invalid path.
    init?(row statement: Statement, from first: Int32) {
        guard case .success(let path) = RestorationPath.stored(in: statement, column: first) else { return nil }
        self.init(path: path, row: statement, from: first)
    }

    /// The entry `statement` is on, ``columns`` from column `first`, whose path is `path`.
    init(path: RestorationPath, row statement: Statement, from first: Int32) {
        self.init(
            path: path,
            version: statement.int(first + 1),
            byteCount: statement.int(first + 2),
            updatedAt: Date(storedMilliseconds: statement.int64(first + 3)),
            typeName: statement.string(first + 4),
            generation: statement.int64(first + 5),
            encoding: StateEncoding(rawValue: statement.string(first + 6)) ?? .binary,
            keyID: statement.isNull(first + 7) ? nil : statement.string(first + 7)
        )
    }
}

extension StateStore.InvalidRow {
    /// The row `statement` is on, whose path (column `path`) is not valid for `error`; its rowid,
    /// length and update time in the columns given.
    init(
        row statement: Statement, rowID: Int32, path: Int32, byteCount: Int32, updatedAt: Int32, error: StateStoreError
    ) {
        var reason = error.description
        if case .invalidPath(_, let why) = error { reason = why }
        self.init(
            rowID: statement.int64(rowID), path: statement.string(path), reason: reason,
            byteCount: statement.int(byteCount), updatedAt: Date(storedMilliseconds: statement.int64(updatedAt))
        )
    }
}

extension RestorationPath {
    /// The path stored in `column`, or why its bytes are not a valid path. Read with its length
    /// (a NUL inside does not end it) and validated as UTF-8, so a damaged path never reads as
    /// another row's path.
    static func stored(in statement: Statement, column: Int32) -> Result<RestorationPath, StateStoreError> {
        guard let text = statement.validText(column) else {
            return .failure(.invalidPath(statement.string(column), reason: "its bytes are not valid UTF-8"))
        }
        return Result { () throws(StateStoreError) in try RestorationPath(validating: text) }
    }
}

/// Milliseconds since 1970, as the schema stores times.
extension Date {
    /// Saturates instead of trapping: a date from outside (an import, a tool) may be anywhere.
    var storedMilliseconds: Int64 {
        let value = (timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return value > 0 ? .max : .min }
        return value >= 0x1p63 ? .max : value < -0x1p63 ? .min : Int64(value)
    }
    init(storedMilliseconds: Int64) { self.init(timeIntervalSince1970: Double(storedMilliseconds) / 1000) }
}
