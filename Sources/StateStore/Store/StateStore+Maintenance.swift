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
        /// Rows whose path is not a valid restoration path (see ``InvalidRow``).
        public var invalidRows: [InvalidRow] = []
        /// Rows whose generation is past ``StoredState/maximumGeneration`` (written outside the
        /// store): the next save of each moves it to quarantine and starts the path at generation 1.
        public var exhaustedGenerations: [RestorationPath] = []
        /// `PRAGMA user_version`, the schema version in the file's header; equal to
        /// ``schemaVersion`` unless the header was reset by hand.
        public var headerSchemaVersion: Int = 0

        /// No damage, no foreign edits, nothing quarantined, every row usable.
        public var isHealthy: Bool {
            integrity == ["ok"] && checksumMismatches.isEmpty && quarantineCount == 0
                && schemaVersion == latestSchemaVersion && invalidRows.isEmpty && exhaustedGenerations.isEmpty
                && headerSchemaVersion == schemaVersion
        }
    }

    /// A full check: `PRAGMA integrity_check`, every row's checksum, path and generation, the
    /// header's schema version, and the counts. (The schema itself was verified at open.)
    /// Reads only; safe while other connections write.
    public func check() throws(StateStoreError) -> Health {
        try withConnection { (connection) throws(StateStoreError) -> Health in
            try connection.readTransaction { () throws(StateStoreError) -> Health in
                let integrity = try connection.strings("PRAGMA integrity_check(100)")
                var mismatches: [RestorationPath] = [], exhausted: [RestorationPath] = []
                let rows = try Statement(connection: connection, sql: "SELECT path, checksum, bytes, generation FROM states", persistent: false)
                while try rows.step() {
                    guard case .success(let path) = RestorationPath.stored(in: rows, column: 0) else { continue }
                    if Checksum.stored(try rows.data(2)) != rows.int64(1) { mismatches.append(path) }
                    if !(1...StoredState.maximumGeneration).contains(rows.int64(3)) { exhausted.append(path) }
                }
                return Health(
                    integrity: integrity,
                    schemaVersion: schemaVersion,
                    latestSchemaVersion: Self.latestSchemaVersion,
                    journalMode: try connection.strings("PRAGMA journal_mode").first ?? "unknown",
                    stateCount: Int(try connection.scalarInt("SELECT count(*) FROM states") ?? 0),
                    quarantineCount: Int(try connection.scalarInt("SELECT count(*) FROM quarantine") ?? 0),
                    pressureEventCount: Int(try connection.scalarInt("SELECT count(*) FROM pressure_events") ?? 0),
                    checksumMismatches: mismatches,
                    invalidRows: try connection.invalidRows(),
                    exhaustedGenerations: exhausted,
                    headerSchemaVersion: Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
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
        try requireRegularFileOrNothing(at: path, readOnly: true)
        try requireStateStoreBeforeOpening(path)
        let companions = newCompanions(of: path)
        do {
            let connection = try connect(to: path, options: .init(readOnly: true))
            try requireStateStore(connection)
            try Migrator().requireRecordedVersion(connection)
            return try Migrator().pending(for: connection).map { ($0.version, $0.name) }
        } catch {
            for companion in companions { unlink(companion) }
            throw error
        }
    }
}
