import Foundation

extension StateStore {
    /// What ``rekey(at:from:to:options:)`` did.
    public struct RekeyResult: Sendable, Hashable {
        /// States written anew: sealed with the target key, or made clear.
        public var rewritten: Int
        /// States already as asked, left as they were.
        public var unchanged: Int
        /// Quarantined rows written anew, as ``rewritten``.
        public var quarantineRewritten: Int
        /// Quarantined rows sealed with a key the rekey was not given, or whose bytes do not
        /// open: kept exactly as they were (they are in quarantine because something was wrong).
        public var quarantineKept: Int

        /// A result with the given counts.
        public init(rewritten: Int, unchanged: Int, quarantineRewritten: Int = 0, quarantineKept: Int = 0) {
            self.rewritten = rewritten
            self.unchanged = unchanged
            self.quarantineRewritten = quarantineRewritten
            self.quarantineKept = quarantineKept
        }
    }

    /// Seals every state of the database at `path` with `target`'s key, or makes every state
    /// clear when `target` is `nil`, in one transaction: sealing a clear database, rotating to a
    /// new key, and unsealing are all this call.
    ///
    /// Each state is opened with `current` (a clear state needs no key; give
    /// `StateKeyring(old, previous: […])` when rows are sealed with several keys) and written
    /// back with the same path, type, version, generation and update time. Killed half-way, the
    /// transaction never commits: the database is as it was, every state opens with `current`,
    /// and running the rekey again does the whole of it. Stop the applications that use the
    /// database first, or give them a keyring that opens both keys (see <doc:StorageAndGuarantees>).
    /// It returns once the rekey is synced to storage (``synchronize()``), so a power cut after
    /// it cannot bring back states sealed with a key dropped since.
    ///
    /// `options.maximumStateSize` is the limit of the applications that read the database: a state
    /// that would be over it once sealed refuses the rekey (``StateStoreError/stateTooLarge(path:byteCount:limit:)``).
    /// The database records the key it is sealed with (or that it is clear), so a store without a
    /// key writes nothing clear into a sealed database (``StateStoreError/keyRequired(file:keyID:)``).
    ///
    /// - Throws: ``StateStoreError/keyMismatch(path:found:configured:)`` when a state is sealed
    ///   with a key `current` does not open, ``StateStoreError/checksumMismatch(path:)`` or
    ///   ``StateStoreError/sealedStateUnopenable(path:keyID:)`` for a damaged state (quarantine it
    ///   first): nothing is written when it throws, except when the sync after the commit
    ///   fails (``StateStoreError/notSynced(file:_:)``: the rekey is then committed, and a power
    ///   cut may take it back; keep the old key beside the new one, as a keyring opens either,
    ///   and copy the database to healthy storage: a later sync that succeeds does not prove
    ///   this one's writes reached storage).
    @discardableResult
    public static func rekey(
        at path: String, from current: (any StateSealer)?, to target: (any StateSealer)?, options: Options = .init()
    ) throws(StateStoreError) -> RekeyResult {
        var options = options
        options.sealer = current
        options.backgroundCheck = .off
        options.readOnly = false
        try validateDatabasePath(path)
        // Opened without recording `current` as the database's key: a rekey that is refused
        // (a state too large once sealed, a key missing) leaves the record as it found it.
        let store = try StateStore(location: path, inMemory: false, options: options, recordingSeal: false)
        let result = try store.write { (transaction) throws(StateStoreError) -> RekeyResult in
            let result = try transaction.rekey(to: target)
            // The database records what it is now: sealed with the target key, or clear.
            try transaction.setMetadata(sealedWithKey, to: target?.keyID)
            return result
        }
        // On storage before it returns: the caller may drop the old key next, and a power cut
        // that took the rekey back would leave every state sealed with it. The close would
        // sync it only as the last connection, and the app may hold the file open.
        try store.synchronize()
        return result
    }
}

extension StateStore.WriteTransaction {
    /// See ``StateStore/rekey(at:from:to:options:)``: every state of this transaction's store
    /// written with `target`, read a page of rows at a time.
    func rekey(to target: (any StateSealer)?) throws(StateStoreError) -> StateStore.RekeyResult {
        let targetKey = target?.keyID
        let total = Int(try connection.scalarInt("SELECT count(*) FROM states") ?? 0)
        var result = StateStore.RekeyResult(rewritten: 0, unchanged: 0)
        let select = try connection.cached(
            """
            SELECT rowid, path, type_name, version, key_id, checksum,
                   CASE WHEN length(bytes) <= ?3 THEN bytes END, length(bytes)
            FROM states WHERE rowid > ?1 AND key_id IS NOT ?2 ORDER BY rowid LIMIT 256
            """)
        let limit = store.options.maximumStateSize
        let update = try connection.cached("UPDATE states SET bytes = ?2, checksum = ?3, key_id = ?4 WHERE rowid = ?1")
        var last: Int64 = .min
        while true {
            select.bind(last, at: 1)
            if let targetKey { select.bind(targetKey, at: 2) } else { select.bindNull(at: 2) }
            select.bind(limit, at: 3)
            var page: [(rowID: Int64, state: StoredState)] = []
            while try select.step() {
                let rowID = select.int64(0)
                last = rowID
                let path: RestorationPath
                switch RestorationPath.stored(in: select, column: 1) {
                case .success(let valid): path = valid
                case .failure(let error):
                    select.reset()
                    throw error
                }
                if select.isNull(6) {
                    // Only another tool writes such a row; it is not loaded (quarantine moves it aside unread).
                    defer { select.reset() }
                    throw .stateTooLarge(path: path, byteCount: Int(select.int64(7)), limit: limit)
                }
                page.append((rowID, try StoredState(resealing: path, row: select, from: 2)))
            }
            select.reset()
            if page.isEmpty { break }
            for (rowID, state) in page {
                guard state.checksumIsValid else { throw .checksumMismatch(path: state.path) }
                let rewritten = try rewrite(state, to: target)
                try run(update, writing: rewritten) { $0.bind(rowID, at: 1) }
                result.rewritten += 1
            }
        }
        result.unchanged = total - result.rewritten
        try rekeyQuarantine(to: target, result: &result)
        return result
    }

    /// The state's plaintext (opened with the store's sealer), sealed with `target` or clear.
    private func rewrite(
        _ state: StoredState, to target: (any StateSealer)?
    ) throws(StateStoreError) -> (bytes: Data, keyID: String?) {
        let plaintext = try store.plaintext(of: state)
        guard let target else { return (plaintext, nil) }
        let sealed: Data
        do {
            sealed = try target.seal(plaintext, identity: state.sealedIdentity)
        } catch {
            throw .encodingFailed(path: state.path, reason: "sealing failed: \(error)")
        }
        // The seal's 28 bytes count against the limit a read applies: never make a row the app refuses.
        let limit = store.options.maximumStateSize
        guard sealed.count <= limit else {
            throw .stateTooLarge(path: state.path, byteCount: sealed.count, limit: limit)
        }
        return (sealed, target.keyID)
    }

    /// Quarantined rows are rewritten as states are when they open, and kept as they are when not.
    private func rekeyQuarantine(
        to target: (any StateSealer)?, result: inout StateStore.RekeyResult
    ) throws(StateStoreError) {
        let select = try connection.cached(
            """
            SELECT id, path, type_name, version, key_id, checksum, CASE WHEN length(bytes) <= ?2 THEN bytes END
            FROM quarantine WHERE key_id IS NOT ?1
            """)
        if let key = target?.keyID { select.bind(key, at: 1) } else { select.bindNull(at: 1) }
        select.bind(store.options.maximumStateSize, at: 2)
        var rows: [(id: Int64, state: StoredState)] = []
        while try select.step() {
            guard case .success(let path) = RestorationPath.stored(in: select, column: 1), !select.isNull(6) else {
                result.quarantineKept += 1
                continue
            }
            rows.append((select.int64(0), try StoredState(resealing: path, row: select, from: 2)))
        }
        select.reset()
        let update = try connection.cached("UPDATE quarantine SET bytes = ?2, checksum = ?3, key_id = ?4 WHERE id = ?1")
        for (id, state) in rows {
            guard state.checksumIsValid, let rewritten = try? rewrite(state, to: target) else {
                result.quarantineKept += 1
                continue
            }
            try run(update, writing: rewritten) { $0.bind(id, at: 1) }
            result.quarantineRewritten += 1
        }
    }

    /// Runs `update`, an `UPDATE … SET bytes = ?2, checksum = ?3, key_id = ?4 WHERE … ?1`, with
    /// `rewritten` bound and its checksum computed; `row` binds `?1`.
    func run(
        _ update: Statement, writing rewritten: (bytes: Data, keyID: String?), row: (Statement) -> Void
    ) throws(StateStoreError) {
        try rewritten.bytes.withBorrowedBytes { (raw) throws(StateStoreError) in
            defer { update.reset() }
            row(update)
            update.bindBorrowed(raw, at: 2)
            update.bind(Checksum.stored(rewritten.bytes), at: 3)
            if let key = rewritten.keyID { update.bind(key, at: 4) } else { update.bindNull(at: 4) }
            try update.run()
        }
    }
}
