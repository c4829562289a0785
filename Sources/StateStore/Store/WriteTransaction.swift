import Foundation

extension StateStore {
    /// The writes of one ``StateStore/write(_:)`` call. Everything done through it
    /// commits together when the closure returns, or rolls back when it throws.
    ///
    /// Valid only inside that closure; do not keep it.
    public struct WriteTransaction {
        let connection: Connection
        let store: StateStore

        // MARK: States

        /// Encodes `value` as JSON and stores it under `path`; see ``StateStore/save(_:for:version:)``.
        @discardableResult
        public func save<T: Codable & Sendable>(
            _ value: T, for path: RestorationPath, version: Int = 1
        ) throws(StateStoreError) -> SaveResult {
            let bytes = try StateCoding.encode(value, for: path)
            return try save(
                encoded: bytes, encoding: .json, typeName: StateCoding.typeName(T.self), version: version, for: path)
        }

        /// Stores already-encoded bytes under `path`, sealed when the store has a
        /// ``StateStore/Options/sealer``.
        ///
        /// A stored row whose generation is past ``StoredState/maximumGeneration`` (only another
        /// tool writes one: at `Int64.max` it could never rise again) is moved to quarantine with
        /// the reason, and the new state lands with generation 1; ``SaveResult/setAside`` says so.
        /// A stored row sealed with a key the store cannot open is never replaced:
        /// ``StateStoreError/keyMismatch(path:found:configured:)``.
        @discardableResult
        public func save(
            encoded plaintext: Data, encoding: StateEncoding, typeName: String, version: Int, for path: RestorationPath
        ) throws(StateStoreError) -> SaveResult {
            let limit = store.options.maximumStateSize
            guard plaintext.count <= limit else {
                throw .stateTooLarge(path: path, byteCount: plaintext.count, limit: limit)
            }
            guard (0...StoredState.maximumVersion).contains(version) else {
                throw .invalidState(
                    path: path, reason: "its version \(version) is outside 0...\(StoredState.maximumVersion)")
            }
            let (bytes, keyID) = try store.sealed(
                plaintext, identity: SealedRowIdentity(path: path, typeName: typeName, version: version))
            try requireRecordedKey()
            guard bytes.count <= limit else {
                // What a read accepts is the stored length: the seal's 28 bytes count.
                throw .stateTooLarge(path: path, byteCount: bytes.count, limit: limit)
            }
            let checksum = Checksum.stored(bytes)
            // ?10 lists the keys this store opens (",id1,id2,"): a row sealed with any other key
            // is left as it is, and the lookup below says why.
            // No RETURNING clause: SQLite buffers a RETURNING statement's rows in an ephemeral
            // table, a b-tree with a page cache of its own (an 85 KB allocation), plus a 64 KB
            // statement journal, made and freed at every save. On the writer's thread that
            // grew and trimmed its malloc arena at every transaction: page faults, and an
            // `madvise` whose TLB shootdown interrupted the main thread. Whether the row was
            // written is `sqlite3_changes`; its generation is read back by the lookup below, by
            // path.
            let upsert = try connection.cached(
                """
                INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes, key_id)
                VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?9)
                ON CONFLICT(path) DO UPDATE SET
                    type_name = excluded.type_name, version = excluded.version,
                    generation = states.generation + 1, encoding = excluded.encoding,
                    checksum = excluded.checksum, updated_at = excluded.updated_at, bytes = excluded.bytes,
                    key_id = excluded.key_id
                WHERE (states.checksum != excluded.checksum OR states.version != excluded.version
                    OR states.type_name != excluded.type_name OR states.encoding != excluded.encoding
                    OR length(states.bytes) != length(excluded.bytes) OR states.key_id IS NOT excluded.key_id)
                    AND states.generation < ?8
                    AND (states.key_id IS NULL OR instr(?10, ',' || states.key_id || ',') > 0)
                """)
            try bytes.withBorrowedBytes { (raw) throws(StateStoreError) in
                upsert.bind(path.rawValue, at: 1)
                upsert.bind(typeName, at: 2)
                upsert.bind(version, at: 3)
                upsert.bind(encoding.rawValue, at: 4)
                upsert.bind(checksum, at: 5)
                upsert.bind(Date().storedMilliseconds, at: 6)
                upsert.bindBorrowed(raw, at: 7)
                upsert.bind(StoredState.maximumGeneration, at: 8)
                if let keyID { upsert.bind(keyID, at: 9) } else { upsert.bindNull(at: 9) }
                upsert.bind(store.openableKeyList, at: 10)
                // Reset (and the borrowed bytes unbound) before they go.
                try upsert.run()
            }
            // 1 when the row was inserted or updated, 0 when the update's condition left it.
            let written = sqlite3Changes > 0
            let current = try connection.cached("SELECT generation, key_id FROM states WHERE path = ?1")
            current.bind(path.rawValue, at: 1)
            _ = try current.step()
            let generation = current.int64(0)
            let storedKey = current.isNull(1) ? nil : current.string(1)
            current.reset()
            if written { return SaveResult(generation: generation, wrote: true) }
            if let storedKey, !store.mayReplace(rowSealedWith: storedKey) {
                throw .keyMismatch(path: path, found: storedKey, configured: store.options.sealer?.keyID)
            }
            // Unchanged or not, a row whose generation cannot rise holds the path hostage:
            // set it aside whole, then start the path's generations afresh.
            guard generation >= StoredState.maximumGeneration, let reason = try setAsideExhaustedGeneration(at: path)
            else {
                return SaveResult(generation: generation, wrote: false)
            }
            var result = try save(
                encoded: plaintext, encoding: encoding, typeName: typeName, version: version, for: path)
            result.setAside = reason
            return result
        }

        /// Removes the state stored exactly at `path`. Returns whether there was one.
        @discardableResult
        public func remove(_ path: RestorationPath) throws(StateStoreError) -> Bool {
            let statement = try connection.cached("DELETE FROM states WHERE path = ?1")
            statement.bind(path.rawValue, at: 1)
            try statement.run()
            return sqlite3Changes > 0
        }

        /// Removes the states at `prefix` and below. Returns how many.
        @discardableResult
        public func removeAll(under prefix: RestorationPath) throws(StateStoreError) -> Int {
            let statement = try connection.cached(
                "DELETE FROM states WHERE path = ?1 OR (path >= ?1 || '/' AND path < ?1 || '0')"
            )
            statement.bind(prefix.rawValue, at: 1)
            try statement.run()
            return sqlite3Changes
        }

        /// Removes every state last written before `date`. Returns how many.
        @discardableResult
        public func removeAll(updatedBefore date: Date) throws(StateStoreError) -> Int {
            let statement = try connection.cached("DELETE FROM states WHERE updated_at < ?1")
            statement.bind(date.storedMilliseconds, at: 1)
            try statement.run()
            return sqlite3Changes
        }

        var sqlite3Changes: Int { connection.changes }
    }
}
