import Foundation

// Bulk access for tools such as `statectl export`, `import` and `prune`: every row with
// its bytes, rows written back verbatim, and removals that report what they removed.

extension StoredState {
    /// A row as it should be stored, for ``StateStore/WriteTransaction/insert(verbatim:)``.
    /// `checksum` defaults to the checksum of `bytes`; `keyID` names the key `bytes` are sealed
    /// with (`nil`: clear bytes).
    public init(
        path: RestorationPath, typeName: String, version: Int, generation: Int64,
        encoding: StateEncoding, checksum: Int64? = nil, updatedAt: Date, bytes: Data, keyID: String? = nil
    ) {
        self.keyID = keyID
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
    /// ``RestorationPath`` are listed by ``invalidRows()`` instead. A row longer than
    /// `maximumSize` bytes is not loaded: it throws ``StateStoreError/stateTooLarge(path:byteCount:limit:)``.
    public func states(
        under prefix: RestorationPath? = nil, maximumSize: Int = .max
    ) throws(StateStoreError) -> [StoredState] {
        try withConnection { (connection) throws(StateStoreError) -> [StoredState] in
            try connection.readTransaction { () throws(StateStoreError) -> [StoredState] in
                var result: [StoredState] = []
                try connection.forEachState(under: prefix, maximumSize: maximumSize) {
                    result.append($0)
                    return true
                }
                return result
            }
        }
    }
}

extension StateStore.WriteTransaction {
    /// Writes `state` as given: type, version, encoding, checksum, update time and bytes.
    ///
    /// A new path keeps `state.generation`, which must lie in 1...``StoredState/maximumGeneration``,
    /// as does a path whose stored generation is past it (that row is moved to quarantine first),
    /// and the version in 0...``StoredState/maximumVersion`` (else
    /// ``StateStoreError/invalidState(path:reason:)``). An existing row is replaced and gets
    /// `max(state.generation, stored generation + 1)`, so a running instance that has seen the
    /// old row still notices the change. Throws ``StateStoreError/stateTooLarge(path:byteCount:limit:)``
    /// over the store's ``StateStore/Options/maximumStateSize`` and
    /// ``StateStoreError/checksumMismatch(path:)`` when `state.checksum` does not match its bytes.
    /// A sealed state (``StoredState/keyID`` set) is written sealed, as it is; a clear one is sealed
    /// when the store has a sealer, and refused with ``StateStoreError/keyRequired(file:keyID:)``
    /// when the database records that it is sealed with a key the store cannot open. A stored row sealed
    /// with a key the store cannot open is replaced only by one sealed with the same key, else
    /// ``StateStoreError/keyMismatch(path:found:configured:)``.
    public func insert(verbatim state: StoredState) throws(StateStoreError) {
        _ = try insert(verbatim: state, replacing: true)
    }

    /// ``insert(verbatim:)``; without `replacing`, a path that already has a row keeps it and
    /// nothing is written (a salvage: the first row read for a path is the one kept). Returns
    /// whether the state was written.
    func insert(verbatim state: StoredState, replacing: Bool) throws(StateStoreError) -> Bool {
        var state = state
        if state.keyID == nil {
            // A clear state lands sealed in a store that seals, and never in a database sealed
            // with a key the store cannot open. A sealed one is written as it is.
            guard state.checksumIsValid else { throw .checksumMismatch(path: state.path) }
            try requireRecordedKey()
            if store.isSealed {
                (state.bytes, state.keyID) = try store.sealed(state.bytes, identity: state.sealedIdentity)
                state.checksum = Checksum.stored(state.bytes)
            }
        }
        let limit = store.options.maximumStateSize
        guard state.bytes.count <= limit else {
            throw .stateTooLarge(path: state.path, byteCount: state.bytes.count, limit: limit)
        }
        guard state.checksumIsValid else { throw .checksumMismatch(path: state.path) }
        guard (1...StoredState.maximumGeneration).contains(state.generation) else {
            throw .invalidState(
                path: state.path,
                reason: "its generation \(state.generation) is outside 1...\(StoredState.maximumGeneration)")
        }
        guard (0...StoredState.maximumVersion).contains(state.version) else {
            throw .invalidState(
                path: state.path, reason: "its version \(state.version) is outside 0...\(StoredState.maximumVersion)")
        }
        if replacing {
            try requireReplaceable(state.path, with: state.keyID)
            try setAsideExhaustedGeneration(at: state.path)
        }
        let upsert = try connection.cached(
            replacing
                ? """
                INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes, key_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                ON CONFLICT(path) DO UPDATE SET
                    type_name = excluded.type_name, version = excluded.version,
                    generation = max(excluded.generation, states.generation + 1), encoding = excluded.encoding,
                    checksum = excluded.checksum, updated_at = excluded.updated_at, bytes = excluded.bytes,
                    key_id = excluded.key_id
                """
                : """
                INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes, key_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                ON CONFLICT(path) DO NOTHING
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
            if let keyID = state.keyID { upsert.bind(keyID, at: 9) } else { upsert.bindNull(at: 9) }
            try upsert.run()
        }
        return connection.changes > 0
    }

    /// Throws ``StateStoreError/keyMismatch(path:found:configured:)`` when the row at `path` is
    /// sealed with a key the store cannot open: such a row is replaced only by one sealed with
    /// the same key (`incoming`).
    func requireReplaceable(_ path: RestorationPath, with incoming: String?) throws(StateStoreError) {
        let current = try connection.cached("SELECT key_id FROM states WHERE path = ?1")
        defer { current.reset() }
        current.bind(path.rawValue, at: 1)
        guard try current.step(), !current.isNull(0) else { return }
        let keyID = current.string(0)
        guard store.mayReplace(rowSealedWith: keyID) || incoming == keyID else {
            throw .keyMismatch(path: path, found: keyID, configured: store.options.sealer?.keyID)
        }
    }

    /// Moves the row at `path` to quarantine when its generation is past
    /// ``StoredState/maximumGeneration`` (it could no longer rise: only another tool writes such
    /// a row), so that what replaces it starts afresh. Returns the reason when it did.
    @discardableResult
    func setAsideExhaustedGeneration(at path: RestorationPath) throws(StateStoreError) -> String? {
        let current = try connection.cached("SELECT generation FROM states WHERE path = ?1")
        current.bind(path.rawValue, at: 1)
        let generation = try current.step() ? current.int64(0) : 0
        current.reset()
        guard generation >= StoredState.maximumGeneration else { return nil }
        let reason =
            "its generation \(generation) is past \(StoredState.maximumGeneration) and could no longer rise, so no save could replace it (it was written outside StateStore); the path started again at generation 1"
        try quarantine(path, reason: reason)
        return reason
    }

    /// Every stored path, sorted by bytes, invalid ones included (read whole: a NUL inside stays).
    public func storedPaths() throws(StateStoreError) -> [String] {
        let statement = try connection.cached("SELECT path FROM states ORDER BY path")
        defer { statement.reset() }
        var paths: [String] = []
        while try statement.step() { paths.append(statement.string(0)) }
        return paths
    }

    /// Removes every row whose path is valid and not among `paths` (compared by their UTF-8
    /// bytes, as the database compares them). Rows with invalid paths stay: they are removed only
    /// by ``removeInvalidRows()``. Returns how many it removed.
    @discardableResult
    public func removeStates(notIn paths: Set<RestorationPath>) throws(StateStoreError) -> Int {
        let scan = try connection.cached("SELECT rowid, path, key_id FROM states")
        var doomed: [Int64] = []
        while try scan.step() {
            guard case .success(let path) = RestorationPath.stored(in: scan, column: 1), !paths.contains(path) else {
                continue
            }
            if !scan.isNull(2), !store.mayReplace(rowSealedWith: scan.string(2)) {
                // A replace names what to keep, not what goes: it never removes what it cannot read.
                defer { scan.reset() }
                throw .keyMismatch(path: path, found: scan.string(2), configured: store.options.sealer?.keyID)
            }
            doomed.append(scan.int64(0))
        }
        scan.reset()
        return try removeRows(doomed)
    }

    /// Removes the rows whose path is not a valid restoration path and returns them.
    public func removeInvalidRows() throws(StateStoreError) -> [StateStore.InvalidRow] {
        let rows = try connection.invalidRows()
        try removeRows(rows.map(\.rowID))
        return rows
    }

    /// Removes the states last written before `date` and returns them (without bytes), sorted by
    /// path. Rows with invalid paths are kept: they are listed, and removed, only as such.
    public func removeEntries(updatedBefore date: Date) throws(StateStoreError) -> [StateStore.Entry] {
        var entries: [StateStore.Entry] = []
        try removeEntries(in: .updatedBefore(date)) { entries.append($0) }
        return entries
    }

    /// Removes the states at `prefix` and below it and returns them (without bytes), sorted by
    /// path. Rows with invalid paths are kept: they are listed, and removed, only as such.
    public func removeEntries(under prefix: RestorationPath) throws(StateStoreError) -> [StateStore.Entry] {
        var entries: [StateStore.Entry] = []
        try removeEntries(in: .under(prefix)) { entries.append($0) }
        return entries
    }

    /// Which states ``removeEntries(in:visiting:)`` removes.
    package enum Selection: Sendable {
        /// Those at the path and below it.
        case under(RestorationPath)
        /// Those last written before the date.
        case updatedBefore(Date)
    }

    /// The selection's valid rows, rowid first, then ``StateStore/Entry/columns``, by path.
    private func select(_ selection: Selection) throws(StateStoreError) -> Statement {
        switch selection {
        case .under(let prefix):
            return try connection.selectStates("rowid, " + StateStore.Entry.columns, under: prefix, cached: true)
        case .updatedBefore(let date):
            let statement = try connection.cached(
                "SELECT rowid, \(StateStore.Entry.columns) FROM states WHERE updated_at < ?1 ORDER BY path")
            statement.bind(date.storedMilliseconds, at: 1)
            return statement
        }
    }

    /// Visits the entries ``removeEntries(in:visiting:)`` would remove now, in its order, and
    /// removes nothing: with it in the same transaction, a listing's first pass.
    package func forEachEntry(in selection: Selection, _ visit: (StateStore.Entry) -> Void) throws(StateStoreError) {
        try StateStore.Entry.forEach(in: select(selection), from: 1, visit)
    }

    /// Removes the selection's states (never a row whose path is invalid: those are listed, and
    /// removed, only as such), visiting each as it is listed, by path: what is visited is what
    /// is removed, and no list of them is held. Returns how many it removed.
    @discardableResult
    package func removeEntries(
        in selection: Selection, visiting visit: (StateStore.Entry) -> Void
    ) throws(StateStoreError) -> Int {
        var rows: [Int64] = []
        let statement = try select(selection)
        defer { statement.reset() }
        while try statement.step() {
            guard let entry = StateStore.Entry(row: statement, from: 1) else { continue }
            rows.append(statement.int64(0))
            visit(entry)
        }
        statement.reset()
        return try removeRows(rows)
    }

    @discardableResult
    private func removeRows(_ rows: [Int64]) throws(StateStoreError) -> Int {
        let delete = try connection.cached("DELETE FROM states WHERE rowid = ?1")
        for row in rows {
            delete.bind(row, at: 1)
            try delete.run()
        }
        return rows.count
    }
}
