import Foundation

extension StateStore {
    /// A state moved aside because it could not be decoded, verified or migrated.
    public struct QuarantinedState: Sendable, Hashable {
        public var id: Int64
        public var path: RestorationPath
        public var typeName: String
        public var version: Int
        public var generation: Int64
        public var encoding: StateEncoding
        public var checksum: Int64
        public var updatedAt: Date
        /// Why it was moved, in words.
        public var reason: String
        public var quarantinedAt: Date
        /// The original bytes, untouched.
        public var bytes: Data
    }

    /// Moves the state at `path` to the quarantine table with `reason`, bytes intact,
    /// so the application can start from its default state. Returns whether there was one.
    @discardableResult
    public func quarantine(_ path: RestorationPath, reason: String) throws(StateStoreError) -> Bool {
        try write { (transaction) throws(StateStoreError) in try transaction.quarantine(path, reason: reason) }
    }

    /// The quarantined states, newest first.
    public func quarantinedStates() throws(StateStoreError) -> [QuarantinedState] {
        try withConnection { (connection) throws(StateStoreError) -> [QuarantinedState] in
            let statement = try connection.cached("""
                SELECT id, path, type_name, version, generation, encoding, checksum, updated_at,
                       reason, quarantined_at, bytes
                FROM quarantine ORDER BY id DESC
                """)
            defer { statement.reset() }
            var result: [QuarantinedState] = []
            while try statement.step() {
                guard let path = try? RestorationPath(validating: statement.string(1)) else { continue }
                result.append(QuarantinedState(
                    id: statement.int64(0), path: path, typeName: statement.string(2),
                    version: statement.int(3), generation: statement.int64(4),
                    encoding: StateEncoding(rawValue: statement.string(5)) ?? .binary,
                    checksum: statement.int64(6), updatedAt: Date(storedMilliseconds: statement.int64(7)),
                    reason: statement.string(8), quarantinedAt: Date(storedMilliseconds: statement.int64(9)),
                    bytes: try statement.data(10)
                ))
            }
            return result
        }
    }
}

extension StateStore.WriteTransaction {
    /// Moves the state at `path` to quarantine; see ``StateStore/quarantine(_:reason:)``.
    @discardableResult
    public func quarantine(_ path: RestorationPath, reason: String) throws(StateStoreError) -> Bool {
        let copy = try connection.cached("""
            INSERT INTO quarantine(path, type_name, version, generation, encoding, checksum, updated_at,
                                   reason, quarantined_at, bytes)
            SELECT path, type_name, version, generation, encoding, checksum, updated_at, ?2, ?3, bytes
            FROM states WHERE path = ?1
            """)
        copy.bind(path.rawValue, at: 1)
        copy.bind(reason, at: 2)
        copy.bind(Date().storedMilliseconds, at: 3)
        try copy.run()
        guard connection.changes > 0 else { return false }
        return try remove(path)
    }
}
