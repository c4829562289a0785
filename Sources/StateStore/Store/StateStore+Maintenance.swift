import Foundation

extension StateStore {
    /// What ``StateStore/check()`` found.
    public struct Health: Sendable, Hashable, Codable {
        /// `PRAGMA integrity_check`'s messages; `["ok"]` when the file is sound.
        public var integrity: [String]
        /// The schema version the database's migrations reached (``StateStore/StateStore/schemaVersion``).
        public var schemaVersion: Int
        /// The newest schema version this build knows (``StateStore/StateStore/latestSchemaVersion``).
        public var latestSchemaVersion: Int
        /// The journal mode `PRAGMA journal_mode` reports (`wal` for a file opened read-write);
        /// `unknown` when it reports nothing.
        public var journalMode: String
        /// How many rows the `states` table holds, valid paths or not.
        public var stateCount: Int
        /// How many rows the `quarantine` table holds.
        public var quarantineCount: Int
        /// How many rows the `pressure_events` table holds.
        public var pressureEventCount: Int
        /// Rows whose bytes no longer match their checksum.
        public var checksumMismatches: [RestorationPath]
        /// Rows whose path is not a valid restoration path (see ``InvalidRow``).
        public var invalidRows: [InvalidRow] = []
        /// Rows whose generation is past ``StoredState/maximumGeneration`` (written outside the
        /// store): the next save of each moves it to quarantine and starts the path at generation 1.
        public var exhaustedGenerations: [RestorationPath] = []
        /// Rows whose update time is outside the years 0000–9999 (written outside the store):
        /// the store reads them, but an export document cannot carry them, so
        /// ``StateExport/encoded()`` refuses the export until each is saved again or removed.
        public var timesOutOfRange: [RestorationPath] = []
        /// Rows whose type name is not valid UTF-8, holds a control character or is over 4096
        /// bytes (written outside the store; a Swift type name is none of these): the app cannot
        /// restore them (one that is not UTF-8 throws ``StateStoreError/invalidState(path:reason:)``
        /// when read), and an export refuses them until each is saved again or removed.
        public var invalidTypeNames: [RestorationPath] = []
        /// Rows whose version is outside 0...``StoredState/maximumVersion`` (written outside the
        /// store): an export refuses them until each is saved again or removed.
        public var versionsOutOfRange: [RestorationPath] = []
        /// `PRAGMA user_version`, the schema version in the file's header; equal to
        /// ``schemaVersion`` unless the header was reset by hand.
        public var headerSchemaVersion: Int = 0
        /// How many states are sealed with each key, by key id; empty for a clear database.
        public var sealedStates: [String: Int] = [:]
        /// Sealed states whose key the store was given but whose bytes do not open: altered or
        /// copied from another row outside StateStore. States sealed with a key the store was not
        /// given are counted in ``sealedStates`` and not opened.
        public var unopenableStates: [RestorationPath] = []

        /// No damage, no foreign edits, nothing quarantined, every row usable.
        public var isHealthy: Bool {
            integrity == ["ok"] && checksumMismatches.isEmpty && quarantineCount == 0
                && schemaVersion == latestSchemaVersion && invalidRows.isEmpty && exhaustedGenerations.isEmpty
                && timesOutOfRange.isEmpty && invalidTypeNames.isEmpty && versionsOutOfRange.isEmpty
                && headerSchemaVersion == schemaVersion && unopenableStates.isEmpty
        }
    }

    /// A full check: `PRAGMA integrity_check`, every row's checksum, path, type name, generation and update time, the
    /// header's schema version, and the counts. (The schema itself was verified at open.) Every
    /// sealed state whose key ``Options/sealer`` holds is opened; the others are counted.
    /// Reads only; safe while other connections write.
    ///
    /// Damage that stops the rows from being read throws ``StateStoreError/corrupt(file:_:)``
    /// with what `integrity_check` found (at most ten of its messages) as the failure's message.
    public func check() throws(StateStoreError) -> Health {
        try withConnection { (connection) throws(StateStoreError) -> Health in
            try connection.readTransaction { () throws(StateStoreError) -> Health in
                let integrity = try connection.integrityMessages("PRAGMA integrity_check(100)")
                do throws(StateStoreError) {
                    return try health(connection, integrity: integrity)
                } catch {
                    guard case .corrupt(let file, let failure) = error, integrity != ["ok"] else { throw error }
                    // The rows cannot be read: the pragma's findings say where the damage is,
                    // where the failed read only says that there is some.
                    let shown =
                        integrity.prefix(10).joined(separator: "; ")
                        + (integrity.count > 10 ? "; and \(integrity.count - 10) more" : "")
                    throw .corrupt(
                        file: file,
                        SQLiteFailure(
                            extendedResultCode: failure.extendedResultCode, message: shown,
                            sql: "PRAGMA integrity_check(100)"))
                }
            }
        }
    }

    /// ``check()`` after its `integrity_check`, inside its read transaction.
    private func health(_ connection: Connection, integrity: [String]) throws(StateStoreError) -> Health {
        var mismatches: [RestorationPath] = [], exhausted: [RestorationPath] = [], unopenable: [RestorationPath] = []
        var undated: [RestorationPath] = [], unnamed: [RestorationPath] = [], unversioned: [RestorationPath] = []
        var sealed: [String: Int] = [:]
        // A row over `streamed` bytes is not read whole: its checksum is taken a chunk at a
        // time (column 9 says which; NULL in column 2, its rowid in column 8), so a huge row
        // costs no memory.
        let streamed = Connection.blobChunk
        let rows = try Statement(
            connection: connection,
            sql:
                "SELECT path, checksum, CASE WHEN length(bytes) <= \(streamed) THEN bytes END, generation, key_id, type_name, version, updated_at, rowid, coalesce(length(bytes) > \(streamed), 0) FROM states",
            persistent: false
        )
        while try rows.step() {
            guard case .success(let path) = RestorationPath.stored(in: rows, column: 0) else { continue }
            let bytes = rows.int64(9) == 0 ? try rows.data(2) : nil
            let checksum: Int64
            if let bytes {
                checksum = Checksum.stored(bytes)
            } else {
                checksum = try connection.storedChecksum(ofBlob: "bytes", in: "states", row: rows.int64(8))
            }
            let intact = checksum == rows.int64(1)
            if !intact { mismatches.append(path) }
            if !(1...StoredState.maximumGeneration).contains(rows.int64(3)) { exhausted.append(path) }
            if !TextFormat.representableMilliseconds.contains(rows.int64(7)) { undated.append(path) }
            if !(rows.validText(5).map(StoredState.isCarried(typeName:)) ?? false) { unnamed.append(path) }
            if !(0...Int64(StoredState.maximumVersion)).contains(rows.int64(6)) { unversioned.append(path) }
            guard !rows.isNull(4) else { continue }
            let keyID = rows.string(4)
            sealed[keyID, default: 0] += 1
            if intact, let sealer = options.sealer, sealer.canOpen(keyID: keyID) {
                let identity = SealedRowIdentity(path: path, typeName: rows.string(5), version: Int(rows.int64(6)))
                // A sealed row over the chunk size is read whole: opening it needs all of it.
                var sealedBytes = bytes ?? Data()
                if bytes == nil { sealedBytes = try connection.blob("bytes", in: "states", row: rows.int64(8)) }
                if (try? sealer.open(sealedBytes, keyID: keyID, identity: identity)) == nil { unopenable.append(path) }
            }
        }
        return Health(
            integrity: integrity,
            schemaVersion: schemaVersion,
            latestSchemaVersion: Self.latestSchemaVersion,
            journalMode: try connection.strings("PRAGMA journal_mode").first ?? "unknown",
            stateCount: Int(try connection.scalarInt("SELECT count(*) FROM states") ?? 0),
            // A row a set-aside is still copying into is not counted (see ``quarantinedStates()``).
            quarantineCount: Int(
                try connection.scalarInt(
                    "SELECT count(*) FROM quarantine WHERE id NOT IN (\(Self.settingAsideIDs))") ?? 0),
            pressureEventCount: Int(try connection.scalarInt("SELECT count(*) FROM pressure_events") ?? 0),
            checksumMismatches: mismatches,
            invalidRows: try connection.invalidRows(),
            exhaustedGenerations: exhausted,
            timesOutOfRange: undated,
            invalidTypeNames: unnamed,
            versionsOutOfRange: unversioned,
            headerSchemaVersion: Int(try connection.scalarInt("PRAGMA user_version") ?? 0),
            sealedStates: sealed,
            unopenableStates: unopenable
        )
    }

    /// The migrations a database at `path` still needs, without changing it.
    /// Throws ``StateStoreError/schemaTooNew(file:found:supported:)`` for a newer database.
    /// Refuses, as ``init(path:options:)`` does, a path that is not a plain regular file and a
    /// database that is not StateStore's.
    public static func pendingMigrations(at path: String) throws(StateStoreError) -> [(version: Int, name: String)] {
        try validateDatabasePath(path)
        try requireRegularFileOrNothing(at: path, readOnly: true)
        try requireStateStoreBeforeOpening(path)
        // Before any connection: the first one would reset the index that says the WAL is lost.
        try refuseLostWAL(at: path)
        let connection = try connect(to: path, options: .init(readOnly: true))
        try requireStateStore(connection)
        try Migrator().requireRecordedVersion(connection)
        return try Migrator().pending(for: connection).map { ($0.version, $0.name) }
    }
}
