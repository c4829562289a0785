import Foundation

/// The JSON coders shared by every store. Sorted keys make equal values encode to
/// equal bytes even for dictionaries (whose order is randomised per process).
enum StateCoding {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }

    /// `String(reflecting: T.self)`, the type name stored beside the bytes, computed once per type:
    /// it demangles the type's metadata on every call, 2–3 µs of each save otherwise.
    static func typeName<T>(_ type: T.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = typeNames.withLock({ $0[key] }) { return name }
        let name = String(reflecting: type)
        typeNames.withLock { $0[key] = name }
        return name
    }

    private static let typeNames = Lock<[ObjectIdentifier: String]>([:])

    static func encode<T: Encodable>(_ value: T, for path: RestorationPath) throws(StateStoreError) -> Data {
        do {
            return try encoder().encode(value)
        } catch {
            throw .encodingFailed(path: path, reason: String(describing: error))
        }
    }

    static func decode<T: Decodable>(
        _ type: T.Type, from bytes: Data, at path: RestorationPath
    ) throws(StateStoreError) -> T {
        do {
            return try decoder().decode(type, from: bytes)
        } catch {
            throw .decodingFailed(path: path, reason: Self.describe(error))
        }
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func at(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? context.debugDescription : "\(keys): \(context.debugDescription)"
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return at(context)
        case .keyNotFound(let key, let context):
            return "missing key \"\(key.stringValue)\"" + (context.codingPath.isEmpty ? "" : " in \(at(context))")
        @unknown default:
            return String(describing: error)
        }
    }
}

extension StateStore {
    // MARK: Saving

    /// Encodes `value` as JSON and stores it under `path`.
    ///
    /// When the stored row already holds the same bytes, version and type, nothing is
    /// written and the generation stays the same (`wrote == false`).
    @discardableResult
    public func save<T: Codable & Sendable>(
        _ value: T, for path: RestorationPath, version: Int = 1
    ) throws(StateStoreError) -> SaveResult {
        let bytes = try StateCoding.encode(value, for: path)
        return try save(
            encoded: bytes, encoding: .json, typeName: StateCoding.typeName(T.self), version: version, for: path)
    }

    /// Stores already-encoded bytes under `path`.
    @discardableResult
    public func save(
        encoded bytes: Data, encoding: StateEncoding, typeName: String, version: Int, for path: RestorationPath
    ) throws(StateStoreError) -> SaveResult {
        let start = ContinuousClock.now
        defer { metrics.directSave.recordSince(start) }
        let result = try write { (transaction) throws(StateStoreError) in
            try transaction.save(encoded: bytes, encoding: encoding, typeName: typeName, version: version, for: path)
        }
        if let reason = result.setAside {
            options.logger.info(
                "state quarantined",
                metadata: [
                    "statestore.path": "\(path)", "statestore.reason": "\(reason)",
                    "statestore.database": "\(self.path)",
                ])
        }
        return result
    }

    // MARK: Reading

    /// Decodes the state stored under `path`, or returns `nil` when there is none.
    ///
    /// Throws ``StateStoreError/checksumMismatch(path:)`` when the bytes were altered
    /// outside the store, and ``StateStoreError/decodingFailed(path:reason:)`` when they
    /// do not decode as `T`. Either way the row stays where it is; see ``quarantine(_:reason:)``.
    /// A sealed state is opened with ``Options/sealer``: ``StateStoreError/keyMismatch(path:found:configured:)``
    /// when it was sealed with a key the store was not given.
    ///
    /// With a `version` (the one ``save(_:for:version:)`` was given), a row saved under
    /// another version is not decoded: ``StateStoreError/decodingFailed(path:reason:)`` says
    /// which version it holds, so that a changed type is never read from bytes of its old
    /// shape that happen to decode. Without one, the row is decoded whatever its version.
    public func restore<T: Codable & Sendable>(
        _ type: T.Type, for path: RestorationPath, version: Int? = nil
    ) throws(StateStoreError) -> T? {
        let start = ContinuousClock.now
        defer { metrics.restore.recordSince(start) }
        guard let state = try state(at: path) else { return nil }
        guard state.checksumIsValid else { throw .checksumMismatch(path: path) }
        if let version, state.version != version {
            throw .decodingFailed(
                path: path,
                reason: "it was saved as version \(state.version) of \(state.typeName), not version \(version)")
        }
        return try StateCoding.decode(type, from: plaintext(of: state), at: path)
    }

    /// The row stored under `path`, bytes included, or `nil`.
    ///
    /// A row longer than ``Options/maximumStateSize`` (only another tool can write one) is not
    /// read: it throws ``StateStoreError/stateTooLarge(path:byteCount:limit:)``; ``quarantine(_:reason:)``
    /// moves it aside without loading it.
    public func state(at path: RestorationPath) throws(StateStoreError) -> StoredState? {
        try state(at: path, waitingForWrites: true)
    }

    func state(at path: RestorationPath, waitingForWrites: Bool) throws(StateStoreError) -> StoredState? {
        try withConnection(waitingForWrites: waitingForWrites) { (connection) throws(StateStoreError) -> StoredState? in
            let statement = try connection.cached(
                "SELECT \(StoredState.columns) FROM states WHERE path = ?1"
            )
            defer { statement.reset() }
            statement.bind(path.rawValue, at: 1)
            statement.bind(options.maximumStateSize, at: 9)
            guard try statement.step() else { return nil }
            return try StoredState(path: path, row: statement, from: 0, limit: options.maximumStateSize)
        }
    }

    /// The generation stored under `path`, or `nil`: a cheap way to ask whether a row changed.
    public func generation(at path: RestorationPath) throws(StateStoreError) -> Int64? {
        try generation(at: path, waitingForWrites: true)
    }

    func generation(at path: RestorationPath, waitingForWrites: Bool) throws(StateStoreError) -> Int64? {
        try withConnection(waitingForWrites: waitingForWrites) { (connection) throws(StateStoreError) -> Int64? in
            let statement = try connection.cached("SELECT generation FROM states WHERE path = ?1")
            defer { statement.reset() }
            statement.bind(path.rawValue, at: 1)
            return try statement.step() ? statement.int64(0) : nil
        }
    }

    /// Every row whose path is not a valid restoration path, in rowid order; see ``InvalidRow``.
    public func invalidRows() throws(StateStoreError) -> [InvalidRow] {
        try withConnection { (connection) throws(StateStoreError) -> [InvalidRow] in
            try connection.invalidRows()
        }
    }

    /// Every stored state at `prefix` or below it (all of them when `prefix` is `nil`), sorted by
    /// path. Rows whose path is not valid are listed by ``invalidRows()`` instead.
    public func entries(under prefix: RestorationPath? = nil) throws(StateStoreError) -> [Entry] {
        try withConnection { (connection) throws(StateStoreError) -> [Entry] in
            try Entry.all(from: connection.selectStates(Entry.columns, under: prefix, cached: true))
        }
    }

    /// Runs `body` in one read transaction: every scan it makes sees the same snapshot of the
    /// file, whatever other connections commit meanwhile. For listings too long to hold (a
    /// table's column widths found by one scan and its rows printed by a second). `body` must
    /// not call the store: it holds the store's connection.
    package func withSnapshot<T: Sendable>(
        _ body: (borrowing Snapshot) throws(StateStoreError) -> T
    ) throws(StateStoreError) -> T {
        try withConnection { (connection) throws(StateStoreError) -> T in
            try connection.readTransaction { () throws(StateStoreError) -> T in
                try body(Snapshot(connection: connection))
            }
        }
    }

    /// The file as one read transaction sees it (``withSnapshot(_:)``).
    package struct Snapshot: ~Copyable {
        fileprivate let connection: Connection

        /// Visits what ``StateStore/entries(under:)`` lists, in its order, one entry at a time:
        /// none is kept.
        package func forEachEntry(
            under prefix: RestorationPath?, _ visit: (StateStore.Entry) -> Void
        ) throws(StateStoreError) {
            try StateStore.Entry.forEach(
                in: connection.selectStates(StateStore.Entry.columns, under: prefix, cached: true), visit)
        }

        /// Visits what ``forEachEntry(under:_:)`` visits, and with no prefix returns what
        /// ``StateStore/invalidRows()`` lists, in its order, found by the same scan: the table is
        /// read once for both. (Under a prefix there are none: such a row has no valid path to
        /// be under it.)
        package func forEachEntryFindingInvalidRows(
            under prefix: RestorationPath?, _ visit: (StateStore.Entry) -> Void
        ) throws(StateStoreError) -> [StateStore.InvalidRow] {
            if prefix != nil {
                try forEachEntry(under: prefix, visit)
                return []
            }
            let statement = try connection.selectStates("rowid, " + StateStore.Entry.columns, under: nil, cached: true)
            defer { statement.reset() }
            var invalid: [StateStore.InvalidRow] = []
            while try statement.step() {
                switch RestorationPath.stored(in: statement, column: 1) {
                case .success(let path):
                    visit(StateStore.Entry(path: path, row: statement, from: 1))
                case .failure(let error):
                    // Entry.columns after the rowid: path, version, length(bytes), updated_at, …
                    invalid.append(
                        StateStore.InvalidRow(
                            row: statement, rowID: 0, path: 1, byteCount: 3, updatedAt: 4, error: error))
                }
            }
            return invalid.sorted { $0.rowID < $1.rowID }
        }

        /// Visits the states ``StateStore/states(under:maximumSize:)`` returns, in its order, one
        /// at a time, none kept; stops when `visit` returns `false`.
        package func forEachState(maximumSize: Int, _ visit: (StoredState) -> Bool) throws(StateStoreError) {
            try connection.forEachState(under: nil, maximumSize: maximumSize, visit)
        }

        /// What ``StateStore/quarantinedStates()`` lists, with each row's length; a row over
        /// `maximumSize` bytes comes without its bytes.
        package func quarantinedStates(
            maximumSize: Int
        ) throws(StateStoreError) -> [(state: StateStore.QuarantinedState, byteCount: Int)] {
            try connection.quarantinedStates(maximumSize: maximumSize)
        }
    }

    // MARK: Removing

    /// Removes the state stored exactly at `path`. Returns whether there was one.
    @discardableResult
    public func remove(_ path: RestorationPath) throws(StateStoreError) -> Bool {
        try write { (transaction) throws(StateStoreError) in try transaction.remove(path) }
    }

    /// Removes the states at `prefix` and below it. Returns how many were removed.
    @discardableResult
    public func removeAll(under prefix: RestorationPath) throws(StateStoreError) -> Int {
        try write { (transaction) throws(StateStoreError) in try transaction.removeAll(under: prefix) }
    }

    /// Removes every state last written before `date`. Returns how many were removed.
    @discardableResult
    public func removeAll(updatedBefore date: Date) throws(StateStoreError) -> Int {
        try write { (transaction) throws(StateStoreError) in try transaction.removeAll(updatedBefore: date) }
    }
}

extension Connection {
    /// Visits the states at `prefix` or below it (all of them when `nil`), bytes included, by
    /// path, until `visit` returns `false`; rows with invalid paths are skipped. A row over
    /// `maximumSize` bytes is not loaded: it throws ``StateStoreError/stateTooLarge(path:byteCount:limit:)``.
    func forEachState(
        under prefix: RestorationPath?, maximumSize: Int, _ visit: (StoredState) -> Bool
    ) throws(StateStoreError) {
        let statement = try selectStates("path, " + StoredState.columns, under: prefix, cached: true)
        defer { statement.reset() }
        statement.bind(maximumSize, at: 9)
        while try statement.step() {
            guard case .success(let path) = RestorationPath.stored(in: statement, column: 0) else { continue }
            guard visit(try StoredState(path: path, row: statement, from: 1, limit: maximumSize)) else { return }
        }
    }

    /// See ``StateStore/invalidRows()``. Reads paths and sizes, never the bytes.
    func invalidRows() throws(StateStoreError) -> [StateStore.InvalidRow] {
        let statement = try cached("SELECT rowid, path, length(bytes), updated_at FROM states ORDER BY rowid")
        defer { statement.reset() }
        var rows: [StateStore.InvalidRow] = []
        while try statement.step() {
            guard case .failure(let error) = RestorationPath.stored(in: statement, column: 1) else { continue }
            rows.append(
                StateStore.InvalidRow(row: statement, rowID: 0, path: 1, byteCount: 2, updatedAt: 3, error: error))
        }
        return rows
    }

    /// `SELECT columns FROM states` for the rows at `prefix` and below (all rows when `nil`),
    /// ordered by path, with the prefix bound. "a/b" and below is "a/b" plus the range
    /// ["a/b/", "a/b0"): "0" is the byte after "/", so the primary key's index serves it.
    func selectStates(
        _ columns: String, under prefix: RestorationPath?, cached: Bool
    ) throws(StateStoreError) -> Statement {
        let sql =
            prefix == nil
            ? "SELECT \(columns) FROM states ORDER BY path"
            : "SELECT \(columns) FROM states WHERE path = ?1 OR (path >= ?1 || '/' AND path < ?1 || '0') ORDER BY path"
        let statement = cached ? try self.cached(sql) : try Statement(connection: self, sql: sql, persistent: false)
        if let prefix { statement.bind(prefix.rawValue, at: 1) }
        return statement
    }
}
