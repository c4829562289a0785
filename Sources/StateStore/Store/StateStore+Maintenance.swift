import Foundation

extension StateStore {
    /// What ``StateStore/check()`` found.
    public struct Health: Sendable, Hashable, Codable {
        /// `PRAGMA integrity_check`'s messages; `["ok"]` when the file is sound.
        public var integrity: [String]
        public var schemaVersion: Int
        public var latestSchemaVersion: Int
        public var journalMode: String
        public var stateCount: Int
        public var quarantineCount: Int
        public var pressureEventCount: Int
        /// Rows whose bytes no longer match their checksum.
        public var checksumMismatches: [RestorationPath]

        /// No damage, no foreign edits, nothing quarantined.
        public var isHealthy: Bool {
            integrity == ["ok"] && checksumMismatches.isEmpty && quarantineCount == 0
                && schemaVersion == latestSchemaVersion
        }
    }

    /// A full check: `PRAGMA integrity_check`, every row's checksum, and the counts.
    /// Reads only; safe while other connections write.
    public func check() throws(StateStoreError) -> Health {
        try withConnection { (connection) throws(StateStoreError) -> Health in
            try connection.readTransaction { () throws(StateStoreError) -> Health in
                let integrity = try connection.strings("PRAGMA integrity_check(100)")
                var mismatches: [RestorationPath] = []
                let rows = try Statement(connection: connection, sql: "SELECT path, checksum, bytes FROM states", persistent: false)
                while try rows.step() {
                    let data = try rows.data(2)
                    if Checksum.stored(data) != rows.int64(1), let path = try? RestorationPath(validating: rows.string(0)) {
                        mismatches.append(path)
                    }
                }
                return Health(
                    integrity: integrity,
                    schemaVersion: schemaVersion,
                    latestSchemaVersion: Self.latestSchemaVersion,
                    journalMode: try connection.strings("PRAGMA journal_mode").first ?? "unknown",
                    stateCount: Int(try connection.scalarInt("SELECT count(*) FROM states") ?? 0),
                    quarantineCount: Int(try connection.scalarInt("SELECT count(*) FROM quarantine") ?? 0),
                    pressureEventCount: Int(try connection.scalarInt("SELECT count(*) FROM pressure_events") ?? 0),
                    checksumMismatches: mismatches
                )
            }
        }
    }

    /// The migrations a database at `path` still needs, without changing it.
    /// Throws ``StateStoreError/schemaTooNew(file:found:supported:)`` for a newer database.
    /// Refuses, as ``init(path:options:)`` does, a path that is not a plain regular file and a
    /// database that is not StateStore's.
    public static func pendingMigrations(at path: String) throws(StateStoreError) -> [(version: Int, name: String)] {
        try validateDatabasePath(path)
        try requireRegularFileOrNothing(at: path)
        let connection = try connect(to: path, options: .init(readOnly: true))
        try requireStateStore(connection)
        return try Migrator().pending(for: connection).map { ($0.version, $0.name) }
    }
}
