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
    public var path: RestorationPath
    /// The Swift type that was saved (`String(reflecting:)`), for diagnostics.
    public var typeName: String
    /// The application's version of the state's format.
    public var version: Int
    /// Rises by one every time the row's contents change.
    public var generation: Int64
    public var encoding: StateEncoding
    public var checksum: Int64
    public var updatedAt: Date
    public var bytes: Data

    /// Whether ``bytes`` still match ``checksum``.
    public var checksumIsValid: Bool { Checksum.stored(bytes) == checksum }
}

extension StateStore {
    /// One row of ``StateStore/entries(under:)``: what is stored at a path, without the bytes.
    public struct Entry: Sendable, Hashable {
        public var path: RestorationPath
        public var version: Int
        public var byteCount: Int
        public var updatedAt: Date
        public var typeName: String
        public var generation: Int64
        public var encoding: StateEncoding
    }

    /// What ``StateStore/save(_:for:version:)`` did.
    public struct SaveResult: Sendable, Hashable {
        /// The row's generation after the save.
        public var generation: Int64
        /// `false` when the stored bytes, version and type were already the same and nothing was written.
        public var wrote: Bool
    }
}

extension StoredState {
    /// The columns ``init(path:row:from:)`` reads, in its order.
    static let columns = "type_name, version, generation, encoding, checksum, updated_at, bytes"

    /// The row `statement` is on, its ``columns`` starting at column `first`.
    init(path: RestorationPath, row statement: Statement, from first: Int32) throws(StateStoreError) {
        let bytes = try statement.data(first + 6)
        self.init(
            path: path,
            typeName: statement.string(first),
            version: statement.int(first + 1),
            generation: statement.int64(first + 2),
            encoding: StateEncoding(rawValue: statement.string(first + 3)) ?? .binary,
            checksum: statement.int64(first + 4),
            updatedAt: Date(storedMilliseconds: statement.int64(first + 5)),
            bytes: bytes
        )
    }
}

extension StateStore.Entry {
    /// The columns ``all(from:)`` reads, in its order, path first.
    static let columns = "path, version, length(bytes), updated_at, type_name, generation, encoding"

    /// Every row `statement` returns, reading ``columns``; resets the statement. Rows whose
    /// path is not a valid restoration path (only an outside edit makes one) are skipped.
    static func all(from statement: Statement) throws(StateStoreError) -> [StateStore.Entry] {
        defer { statement.reset() }
        var entries: [StateStore.Entry] = []
        while try statement.step() {
            guard let path = try? RestorationPath(validating: statement.string(0)) else { continue }
            entries.append(StateStore.Entry(
                path: path,
                version: statement.int(1),
                byteCount: statement.int(2),
                updatedAt: Date(storedMilliseconds: statement.int64(3)),
                typeName: statement.string(4),
                generation: statement.int64(5),
                encoding: StateEncoding(rawValue: statement.string(6)) ?? .binary
            ))
        }
        return entries
    }
}

/// Milliseconds since 1970, as the schema stores times.
extension Date {
    var storedMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
    init(storedMilliseconds: Int64) { self.init(timeIntervalSince1970: Double(storedMilliseconds) / 1000) }
}
