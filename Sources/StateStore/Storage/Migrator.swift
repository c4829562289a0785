import Foundation

/// One schema step, from `migrations/NNNN_name.sql` (embedded at build time).
struct Migration: Sendable {
    var version: Int
    var name: String
    var sql: String
}

/// Applies the pending `migrations/*.sql` in order, all in one transaction, and records each
/// in `schema_migrations` and `PRAGMA user_version`: a database several versions old is left at
/// its old version or at the latest, never in between, by a failure, a kill or a power cut
/// midway (`UpgradeFixtureTests` cuts the power at every write of each upgrade).
///
/// A database whose schema is newer than the newest embedded migration is refused
/// with ``StateStoreError/schemaTooNew(file:found:supported:)`` before anything is written.
struct Migrator {
    var migrations: [Migration] = EmbeddedMigrations.all

    /// The schema version this build writes and reads.
    var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The migrator's own bookkeeping; every other table comes from `migrations/`.
    static let bookkeeping = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    INTEGER NOT NULL PRIMARY KEY,
            name       TEXT    NOT NULL,
            applied_at INTEGER NOT NULL
        ) STRICT
        """

    /// The highest schema version the database records: the larger of `user_version`
    /// and the newest row in `schema_migrations`, so a tampered header alone cannot hide one.
    func appliedVersion(of connection: Connection) throws(StateStoreError) -> Int {
        let header = try connection.scalarInt("PRAGMA user_version") ?? 0
        return Int(max(header, Int64(try Self.recordedVersion(connection) ?? 0)))
    }

    /// The newest version `schema_migrations` records: `nil` without the table, 0 when it is
    /// empty or was made again without a `version` column (nothing it holds is a record).
    static func recordedVersion(_ connection: Connection) throws(StateStoreError) -> Int? {
        let hasTable =
            try connection.scalarInt(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'"
            ) ?? 0
        guard hasTable > 0 else { return nil }
        let hasVersion =
            try connection.scalarInt(
                "SELECT count(*) FROM pragma_table_info('schema_migrations') WHERE name = 'version'"
            ) ?? 0
        guard hasVersion > 0 else { return 0 }
        return Int(try connection.scalarInt("SELECT max(version) FROM schema_migrations") ?? 0)
    }

    /// The migrations this database still needs, after refusing one that is too new.
    func pending(for connection: Connection) throws(StateStoreError) -> [Migration] {
        let applied = try appliedVersion(of: connection)
        guard applied <= latestVersion else {
            throw .schemaTooNew(file: connection.path, found: applied, supported: latestVersion)
        }
        try requireRecordedVersion(connection, applied: applied)
        return migrations.filter { $0.version > applied }
    }

    /// Throws ``StateStoreError/schemaMismatch(file:detail:)`` when the database has StateStore's
    /// tables but records no schema version (`user_version` and `schema_migrations` both cleared
    /// by hand: applying 0001 again would fail on "table states already exists"), or records an
    /// older version than its tables, which are the current schema's (the records set back by
    /// hand: the next migration would fail on a table it creates). Either is repairable.
    func requireRecordedVersion(_ connection: Connection, applied: Int? = nil) throws(StateStoreError) {
        let version: Int
        if let applied { version = applied } else { version = try appliedVersion(of: connection) }
        if version > 0, version < latestVersion, try StateStore.schemaRecords(of: connection).isRepairable {
            throw .schemaMismatch(
                file: connection.path,
                detail:
                    "its schema version records say \(version), but its tables are schema \(latestVersion)'s exactly: "
                    + "`statectl migrate --repair` (StateStore.repairSchemaVersion(at:)) re-records the version"
            )
        }
        if version == 0, try connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'states'") ?? 0 > 0 {
            let repair =
                try StateStore.schemaRecords(of: connection).isRepairable
                ? "; its tables match schema \(latestVersion) exactly: `statectl migrate --repair` (StateStore.repairSchemaVersion(at:)) re-records the version"
                : ""
            throw .schemaMismatch(
                file: connection.path,
                detail:
                    "it has StateStore's tables but records no schema version (PRAGMA user_version is 0 and schema_migrations is empty or missing)"
                    + repair
            )
        }
    }

    /// Brings the database to ``latestVersion``. Returns the migrations it applied.
    @discardableResult
    func migrate(_ connection: Connection) throws(StateStoreError) -> [Migration] {
        let pending = try pending(for: connection)
        if !pending.isEmpty {
            try connection.writeTransaction { () throws(StateStoreError) in
                // Checked again under the write lock: another process may have migrated meanwhile,
                // perhaps past what this build knows.
                let applied = try appliedVersion(of: connection)
                guard applied <= latestVersion else {
                    throw .schemaTooNew(file: connection.path, found: applied, supported: latestVersion)
                }
                for migration in pending where migration.version > applied {
                    try apply(migration, recorded: applied, on: connection)
                }
            }
        }
        if !connection.readOnly, try connection.scalarInt("PRAGMA user_version") != Int64(latestVersion) {
            // The header was reset by hand while schema_migrations kept the history: put it back,
            // so other tools reading only the header see the right version.
            try connection.execute("PRAGMA user_version = \(latestVersion)")
        }
        return pending
    }

    /// Runs one migration and records it, inside the caller's transaction.
    private func apply(_ migration: Migration, recorded applied: Int, on connection: Connection) throws(StateStoreError)
    {
        try connection.execute(Self.bookkeeping)
        do throws(StateStoreError) {
            try connection.execute(migration.sql)
        } catch {
            // A migration written for the recorded version fails only on tables that are not that
            // version's (changed outside StateStore); rolled back whole, with the migrations before
            // it. Named by its file, not by its whole text.
            guard case .sqlite(var failure) = error else { throw error }
            // Only a statement the schema refused says the tables are not the recorded version's;
            // an I/O error or a full memory does not.
            if failure.resultCode == .error || failure.resultCode == .constraint {
                failure.message +=
                    " (the database records schema version \(applied), and its tables are not that version's)"
            }
            failure.message += "; every migration from version \(applied) was rolled back, and the file is unchanged"
            failure.sql = "migration \(String(format: "%04d", migration.version))_\(migration.name).sql"
            throw .sqlite(failure)
        }
        let record = try connection.cached(
            "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?1, ?2, ?3)"
        )
        record.bind(migration.version, at: 1)
        record.bind(migration.name, at: 2)
        record.bind(Int64(Date().timeIntervalSince1970 * 1000), at: 3)
        try record.run()
        try connection.execute("PRAGMA user_version = \(migration.version)")
    }
}
