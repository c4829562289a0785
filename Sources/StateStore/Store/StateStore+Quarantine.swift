import Foundation
import Logging

extension StateStore {
    /// A state moved aside because it could not be decoded, verified or migrated.
    public struct QuarantinedState: Sendable, Hashable {
        /// The row's `id` in the `quarantine` table; a row quarantined later has a larger one.
        public var id: Int64
        /// The path the state was stored at.
        public var path: RestorationPath
        /// The Swift type that was saved (`String(reflecting:)`), as the state's row had it.
        public var typeName: String
        /// The application's version of the state's format, as the state's row had it.
        public var version: Int
        /// The state's generation when it was moved.
        public var generation: Int64
        /// How the state is encoded, as the state's row had it.
        public var encoding: StateEncoding
        /// The checksum the state's row had: XXH64 of the stored bytes, read as a signed integer.
        public var checksum: Int64
        /// When the state was last written before it was moved, to the millisecond.
        public var updatedAt: Date
        /// Why it was moved, in words.
        public var reason: String
        /// When it was moved to quarantine, to the millisecond.
        public var quarantinedAt: Date
        /// The original bytes, untouched (sealed when ``keyID`` is set). Empty where they were
        /// not read: a row over ``StateStore/Options/maximumStateSize`` listed by
        /// ``StateStore/quarantinedStates()`` (``StateStore/readQuarantinedBytes(id:_:)`` reads
        /// it a chunk at a time), and a row
        /// ``StateStore/WriteTransaction/removeQuarantined(under:quarantinedBefore:)`` removed.
        public var bytes: Data
        /// The key the bytes are sealed with, or `nil` when they are clear.
        public var keyID: String? = nil
        /// How many bytes the row holds, whether or not ``bytes`` holds them.
        public var byteCount: Int = 0
    }

    /// Moves the state at `path` to the quarantine table with `reason`, bytes intact,
    /// so the application can start from its default state. Returns whether there was one.
    @discardableResult
    public func quarantine(_ path: RestorationPath, reason: String) throws(StateStoreError) -> Bool {
        let moved = try write { (transaction) throws(StateStoreError) in
            try transaction.quarantine(path, reason: reason)
        }
        if moved {
            options.logger.info(
                "state quarantined",
                metadata: [
                    "statestore.path": "\(path)", "statestore.reason": "\(reason)",
                    "statestore.database": "\(self.path)",
                ])
        }
        return moved
    }

    /// The quarantined states, newest first.
    ///
    /// A row a set-aside is still copying into (a state over ``Options/maximumStateSize`` met at
    /// launch is copied by the write-behind writer a few megabytes at a time) is not listed
    /// until its copy is whole; the state is at its path in `states` until then.
    ///
    /// A row over ``Options/maximumStateSize`` bytes (written by another tool, and set aside at
    /// launch) is listed without its bytes, which are not read: ``QuarantinedState/bytes`` is
    /// empty and ``QuarantinedState/byteCount`` says how many there are. Listing costs no
    /// memory for them, whatever their size; ``readQuarantinedBytes(id:_:)`` reads them.
    public func quarantinedStates() throws(StateStoreError) -> [QuarantinedState] {
        try quarantinedStates(maximumSize: options.maximumStateSize).map(\.state)
    }

    /// Reads the bytes of the quarantined row `id` (``QuarantinedState/id``), as stored (sealed
    /// when its ``QuarantinedState/keyID`` is set), a chunk of at most 1 MiB at a time: `body`
    /// is called with each chunk in order, and a row of any size is read in fixed memory.
    /// Returns `false`, calling `body` never, when quarantine holds no row `id` (it was
    /// removed); an empty row calls it never and returns `true`. The chunks are valid only
    /// during the call; they are read in one read transaction, so a row removed meanwhile by
    /// another connection is still read whole. `body` must not use this store (it runs while
    /// the store's connection is held); an error it throws ends the reading and is thrown.
    ///
    /// ```swift
    /// let store = try StateStore(path: quarantinePath, options: .init(maximumStateSize: 1024))
    /// for state in try store.quarantinedStates() where state.bytes.count < state.byteCount {
    ///     let file = folder.appending(path: "quarantined-\(state.id)")
    ///     _ = FileManager.default.createFile(atPath: file.path, contents: nil)
    ///     let handle = try FileHandle(forWritingTo: file)
    ///     try store.readQuarantinedBytes(id: state.id) { (chunk) throws(StateStoreError) in
    ///         handle.write(Data(chunk))
    ///     }
    ///     try handle.close()
    /// }
    /// ```
    @discardableResult
    public func readQuarantinedBytes(
        id: Int64, _ body: (UnsafeRawBufferPointer) throws(StateStoreError) -> Void
    ) throws(StateStoreError) -> Bool {
        try withConnection { (connection) throws(StateStoreError) -> Bool in
            try connection.readTransaction { () throws(StateStoreError) -> Bool in
                let exists = try connection.cached("SELECT 1 FROM quarantine WHERE id = ?1")
                exists.bind(id, at: 1)
                defer { exists.reset() }
                guard try exists.step() else { return false }
                try connection.readBlob(column: "bytes", of: "quarantine", row: id, body)
                return true
            }
        }
    }

    /// The quarantined states, newest first, with how many bytes each holds; a row longer than
    /// `maximumSize` comes without its bytes (they are not read), so a huge row another tool
    /// wrote costs no memory.
    func quarantinedStates(maximumSize: Int?) throws(StateStoreError) -> [(state: QuarantinedState, byteCount: Int)] {
        try withConnection { (connection) throws(StateStoreError) in
            try connection.quarantinedStates(maximumSize: maximumSize)
        }
    }
}

extension Connection {
    /// See ``StateStore/quarantinedStates(maximumSize:)``.
    func quarantinedStates(
        maximumSize: Int?
    ) throws(StateStoreError) -> [(state: StateStore.QuarantinedState, byteCount: Int)] {
        // A row still being filled by a set-aside (named by its marker) is not a quarantined
        // state yet: left out until its copy is whole.
        let statement = try cached(
            """
            SELECT id, path, type_name, version, generation, encoding, checksum, updated_at,
                   reason, quarantined_at, CASE WHEN length(bytes) <= ?1 THEN bytes END, length(bytes), key_id
            FROM quarantine WHERE id NOT IN (\(StateStore.settingAsideIDs)) ORDER BY id DESC
            """)
        defer { statement.reset() }
        statement.bind(Int64(maximumSize ?? Int.max), at: 1)
        var result: [(state: StateStore.QuarantinedState, byteCount: Int)] = []
        while try statement.step() {
            guard let path = try? RestorationPath(validating: statement.string(1)) else { continue }
            result.append(
                (
                    StateStore.QuarantinedState(
                        id: statement.int64(0), path: path, typeName: statement.string(2),
                        version: statement.int(3), generation: statement.int64(4),
                        encoding: StateEncoding(rawValue: statement.string(5)) ?? .binary,
                        checksum: statement.int64(6), updatedAt: Date(storedMilliseconds: statement.int64(7)),
                        reason: statement.string(8), quarantinedAt: Date(storedMilliseconds: statement.int64(9)),
                        bytes: statement.isNull(10) ? Data() : try statement.data(10),
                        keyID: statement.isNull(12) ? nil : statement.string(12), byteCount: statement.int(11)
                    ), statement.int(11)
                ))
        }
        return result
    }
}

extension StateStore.WriteTransaction {
    /// Moves the state at `path` to quarantine; see ``StateStore/quarantine(_:reason:)``.
    ///
    /// The bytes are copied a chunk at a time, never loaded whole, so a state far over
    /// ``StateStore/Options/maximumStateSize`` (written by another tool) is moved aside with a
    /// small, bounded amount of memory. The file grows by the state's size until SQLite reuses
    /// the pages the old row leaves free.
    @discardableResult
    public func quarantine(_ path: RestorationPath, reason: String) throws(StateStoreError) -> Bool {
        guard let source = try copyToQuarantine(path, reason: reason, unlessKept: false) else { return false }
        let remove = try connection.cached("DELETE FROM states WHERE rowid = ?1")
        remove.bind(source, at: 1)
        try remove.run()
        store.metrics.quarantines.increment()
        return true
    }

    /// Copies the state at `path` into quarantine with `reason` and leaves it where it is: the
    /// bytes a save is about to replace, kept because they carry what the current type no longer
    /// reads (see ``RestorationError/supersededKept(path:members:)``). Nothing is copied when
    /// quarantine already holds these bytes for `path`. Returns whether it copied.
    @discardableResult
    public func keepCopy(of path: RestorationPath, reason: String) throws(StateStoreError) -> Bool {
        try copyToQuarantine(path, reason: reason, unlessKept: true) != nil
    }

    /// Copies the row at `path` to quarantine, a chunk at a time; returns its rowid in `states`,
    /// or `nil` when there is none (or, `unlessKept`, when quarantine holds its bytes already).
    private func copyToQuarantine(
        _ path: RestorationPath, reason: String, unlessKept: Bool
    ) throws(StateStoreError) -> Int64? {
        let find = try connection.cached("SELECT rowid, length(bytes), checksum FROM states WHERE path = ?1")
        find.bind(path.rawValue, at: 1)
        guard try find.step() else {
            find.reset()
            return nil
        }
        let source = find.int64(0), count = find.int(1), checksum = find.int64(2)
        find.reset()
        if unlessKept {
            let kept = try connection.cached(
                "SELECT 1 FROM quarantine WHERE path = ?1 AND checksum = ?2 AND length(bytes) = ?3")
            defer { kept.reset() }
            kept.bind(path.rawValue, at: 1)
            kept.bind(checksum, at: 2)
            kept.bind(count, at: 3)
            if try kept.step() { return nil }
        }
        let target = try insertQuarantineRow(copying: source, count: count, reason: reason)
        if count > 0 {
            try connection.copyBlob(
                column: "bytes", from: "states", row: source, to: "quarantine", row: target, count: count)
        }
        return source
    }

    /// Inserts into quarantine the row `source` of `states` with `reason`, its bytes left as
    /// `count` zeros for the caller to copy; returns its id.
    func insertQuarantineRow(copying source: Int64, count: Int, reason: String) throws(StateStoreError) -> Int64 {
        let copy = try connection.cached(
            """
            INSERT INTO quarantine(path, type_name, version, generation, encoding, checksum, updated_at,
                                   reason, quarantined_at, bytes, key_id)
            SELECT path, type_name, version, generation, encoding, checksum, updated_at, ?2, ?3, x'', key_id
            FROM states WHERE rowid = ?1
            """)
        copy.bind(source, at: 1)
        copy.bind(reason, at: 2)
        copy.bind(Date().storedMilliseconds, at: 3)
        try copy.run()
        let target = connection.lastInsertedRowID
        if count > 0 {
            // The room for the bytes is made by an UPDATE: a zeroblob passed through INSERT ...
            // SELECT is expanded to real zeros in memory (500 MB of them for a 500 MB row).
            let room = try connection.cached("UPDATE quarantine SET bytes = zeroblob(?2) WHERE id = ?1")
            room.bind(target, at: 1)
            room.bind(count, at: 2)
            try room.run()
        }
        return target
    }
}

extension StateStore.WriteTransaction {
    /// Removes the quarantined rows at or below `prefix` (at every path when `nil`) that were
    /// quarantined before `cutoff` (at any time when `nil`): for once they have been looked at
    /// (``StateStore/quarantinedStates()``, `statectl inspect --quarantine`) and are not wanted.
    /// Returns what it removed, newest first, without the bytes. Rows whose path is not a valid
    /// restoration path are left alone, as ``StateStore/quarantinedStates()`` does not list them,
    /// and so are rows a set-aside is still copying into.
    @discardableResult
    public func removeQuarantined(
        under prefix: RestorationPath? = nil, quarantinedBefore cutoff: Date? = nil
    ) throws(StateStoreError) -> [StateStore.QuarantinedState] {
        let list = try connection.cached(
            """
            SELECT id, path, type_name, version, generation, encoding, checksum, updated_at,
                   reason, quarantined_at, key_id, length(bytes)
            FROM quarantine WHERE quarantined_at < ?1 AND id NOT IN (\(StateStore.settingAsideIDs)) ORDER BY id DESC
            """)
        list.bind(cutoff?.storedMilliseconds ?? Int64.max, at: 1)
        var removed: [StateStore.QuarantinedState] = []
        do {
            defer { list.reset() }
            while try list.step() {
                guard let path = try? RestorationPath(validating: list.string(1)),
                    prefix.map(path.hasPrefix) ?? true
                else { continue }
                removed.append(
                    StateStore.QuarantinedState(
                        id: list.int64(0), path: path, typeName: list.string(2), version: list.int(3),
                        generation: list.int64(4), encoding: StateEncoding(rawValue: list.string(5)) ?? .binary,
                        checksum: list.int64(6), updatedAt: Date(storedMilliseconds: list.int64(7)),
                        reason: list.string(8), quarantinedAt: Date(storedMilliseconds: list.int64(9)),
                        bytes: Data(), keyID: list.isNull(10) ? nil : list.string(10), byteCount: list.int(11)
                    ))
            }
        }
        let delete = try connection.cached("DELETE FROM quarantine WHERE id = ?1")
        for state in removed {
            delete.bind(state.id, at: 1)
            try delete.run()
        }
        return removed
    }
}
