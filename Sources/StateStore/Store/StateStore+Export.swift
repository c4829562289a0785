import Foundation

// Bulk access for tools such as `statectl export`, `import` and `prune`: every row with
// its bytes, rows written back verbatim, and removals that report what they removed.

extension StoredState {
    /// A row as it should be stored, for ``StateStore/WriteTransaction/insert(verbatim:)``.
    /// `checksum` defaults to the checksum of `bytes`.
    public init(
        path: RestorationPath, typeName: String, version: Int, generation: Int64,
        encoding: StateEncoding, checksum: Int64? = nil, updatedAt: Date, bytes: Data
    ) {
        self.path = path
        self.typeName = typeName
        self.version = version
        self.generation = generation
        self.encoding = encoding
        self.checksum = checksum ?? Checksum.stored(bytes)
        self.updatedAt = updatedAt
        self.bytes = bytes
    }

    /// The checksum the store would write for `bytes` (XXH64, seed 0, as a signed 64-bit integer).
    public static func checksum(of bytes: Data) -> Int64 { Checksum.stored(bytes) }
}

extension StateStore {
    /// The schema steps this build knows, oldest first (`migrations/NNNN_name.sql`).
    public static var knownMigrations: [(version: Int, name: String)] {
        Migrator().migrations.map { ($0.version, $0.name) }
    }

    /// Every stored row at `prefix` or below it (all of them when `prefix` is `nil`), bytes
    /// included, sorted by path, read in one snapshot. Rows whose path is not a valid
    /// ``RestorationPath`` (written outside the store) are skipped.
    public func states(under prefix: RestorationPath? = nil) throws(StateStoreError) -> [StoredState] {
        try withConnection { (connection) throws(StateStoreError) -> [StoredState] in
            try connection.readTransaction { () throws(StateStoreError) -> [StoredState] in
                let columns = "path, " + StoredState.columns
                let statement = try connection.selectStates(columns, under: prefix, cached: false)
                var result: [StoredState] = []
                while try statement.step() {
                    guard let path = try? RestorationPath(validating: statement.string(0)) else { continue }
                    result.append(try StoredState(path: path, row: statement, from: 1))
                }
                return result
            }
        }
    }
}

extension StateStore.WriteTransaction {
    /// Writes `state` as given: type, version, encoding, checksum, update time and bytes.
    ///
    /// A new path keeps `state.generation`. An existing row is replaced and gets
    /// `max(state.generation, stored generation + 1)`, so a running instance that has seen the
    /// old row still notices the change. Throws ``StateStoreError/stateTooLarge(path:byteCount:limit:)``
    /// over the store's ``StateStore/Options/maximumStateSize`` and
    /// ``StateStoreError/checksumMismatch(path:)`` when `state.checksum` does not match its bytes.
    public func insert(verbatim state: StoredState) throws(StateStoreError) {
        let limit = store.options.maximumStateSize
        guard state.bytes.count <= limit else {
            throw .stateTooLarge(path: state.path, byteCount: state.bytes.count, limit: limit)
        }
        guard state.checksumIsValid else { throw .checksumMismatch(path: state.path) }
        let upsert = try connection.cached("""
            INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT(path) DO UPDATE SET
                type_name = excluded.type_name, version = excluded.version,
                generation = max(excluded.generation, states.generation + 1), encoding = excluded.encoding,
                checksum = excluded.checksum, updated_at = excluded.updated_at, bytes = excluded.bytes
            """)
        try state.bytes.withBorrowedBytes { (raw) throws(StateStoreError) in
            defer { upsert.reset() }
            upsert.bind(state.path.rawValue, at: 1)
            upsert.bind(state.typeName, at: 2)
            upsert.bind(state.version, at: 3)
            upsert.bind(max(1, state.generation), at: 4)
            upsert.bind(state.encoding.rawValue, at: 5)
            upsert.bind(state.checksum, at: 6)
            upsert.bind(state.updatedAt.storedMilliseconds, at: 7)
            upsert.bindBorrowed(raw, at: 8)
            try upsert.run()
        }
    }

    /// Every stored path, sorted (including ones that are not valid restoration paths).
    public func storedPaths() throws(StateStoreError) -> [String] {
        let statement = try connection.cached("SELECT path FROM states ORDER BY path")
        defer { statement.reset() }
        var paths: [String] = []
        while try statement.step() { paths.append(statement.string(0)) }
        return paths
    }

    /// Removes the row stored under exactly `rawPath`, valid restoration path or not.
    @discardableResult
    public func remove(rawPath: String) throws(StateStoreError) -> Bool {
        let statement = try connection.cached("DELETE FROM states WHERE path = ?1")
        statement.bind(rawPath, at: 1)
        try statement.run()
        return connection.changes > 0
    }

    /// Removes the states last written before `date` and returns them (without bytes), sorted by path.
    public func removeEntries(updatedBefore date: Date) throws(StateStoreError) -> [StateStore.Entry] {
        let statement = try connection.cached("""
            DELETE FROM states WHERE updated_at < ?1
            RETURNING \(StateStore.Entry.columns)
            """)
        statement.bind(date.storedMilliseconds, at: 1)
        return try collectEntries(statement)
    }

    /// Removes the states at `prefix` and below it and returns them (without bytes), sorted by path.
    public func removeEntries(under prefix: RestorationPath) throws(StateStoreError) -> [StateStore.Entry] {
        let statement = try connection.cached("""
            DELETE FROM states WHERE path = ?1 OR (path >= ?1 || '/' AND path < ?1 || '0')
            RETURNING \(StateStore.Entry.columns)
            """)
        statement.bind(prefix.rawValue, at: 1)
        return try collectEntries(statement)
    }

    /// `RETURNING` gives no order: sort by path, as every listing is.
    private func collectEntries(_ statement: Statement) throws(StateStoreError) -> [StateStore.Entry] {
        try StateStore.Entry.all(from: statement).sorted { $0.path < $1.path }
    }
}
