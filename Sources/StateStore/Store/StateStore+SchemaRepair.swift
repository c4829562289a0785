import Foundation

extension StateStore {
    /// What a database records about its schema version, beside what its tables are.
    public struct SchemaRecords: Sendable, Hashable, Codable {
        /// `PRAGMA user_version`, the version in the file's header.
        public var headerVersion: Int
        /// The newest version in `schema_migrations`; `nil` when the table is missing.
        public var recordedVersion: Int?
        /// What differs between the tables and indexes and those of ``StateStore/latestSchemaVersion``
        /// (leaving out `schema_migrations` itself); empty when they match exactly.
        public var differences: [String]
        /// What differs in `schema_migrations` itself (its columns or constraints, made again
        /// by hand); empty when it is missing or StateStore's.
        public var recordTableDifferences: [String]

        init(headerVersion: Int, recordedVersion: Int?, differences: [String], recordTableDifferences: [String]) {
            self.headerVersion = headerVersion
            self.recordedVersion = recordedVersion
            self.differences = differences
            self.recordTableDifferences = recordTableDifferences
        }

        // Records encoded before `recordTableDifferences` existed decode with it empty.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            headerVersion = try container.decode(Int.self, forKey: .headerVersion)
            recordedVersion = try container.decodeIfPresent(Int.self, forKey: .recordedVersion)
            differences = try container.decode([String].self, forKey: .differences)
            recordTableDifferences = try container.decodeIfPresent([String].self, forKey: .recordTableDifferences) ?? []
        }

        /// Whether both records say ``StateStore/latestSchemaVersion``, in a `schema_migrations`
        /// of StateStore's shape.
        public var isIntact: Bool {
            headerVersion == StateStore.latestSchemaVersion && recordedVersion == StateStore.latestSchemaVersion
                && recordTableDifferences.isEmpty
        }

        /// Whether ``StateStore/repairSchemaVersion(at:)`` would re-record the version: the records
        /// are not intact and the tables match the current schema exactly.
        public var isRepairable: Bool { !isIntact && differences.isEmpty }

        /// What is wrong with the records, in words; `nil` when they are intact.
        public var problem: String? {
            guard !isIntact else { return nil }
            var table =
                recordedVersion.map { $0 == 0 ? "schema_migrations is empty" : "schema_migrations records \($0)" }
                ?? "schema_migrations is missing"
            if !recordTableDifferences.isEmpty {
                table += ", in a table made again outside StateStore: " + recordTableDifferences.joined(separator: "; ")
            }
            return
                "its schema version records were changed outside StateStore (PRAGMA user_version is \(headerVersion) and \(table))"
        }
    }

    /// The schema records of the database `connection` is open on.
    static func schemaRecords(of connection: Connection) throws(StateStoreError) -> SchemaRecords {
        let header = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        let recorded = try Migrator.recordedVersion(connection)
        let hasTable = recorded != nil
        var differences: [String] = []
        var recordTableDifferences: [String] = []
        if let expected = SchemaShape.expected {
            let found = try SchemaShape(of: connection)
            // The bookkeeping table is what a repair puts back; everything else must match.
            let shape = found.withRecordTable(of: expected)
            differences = shape.problems(comparedWith: expected)
            if hasTable { recordTableDifferences = found.recordTableProblems(comparedWith: expected) }
        }
        return SchemaRecords(
            headerVersion: header, recordedVersion: recorded, differences: differences,
            recordTableDifferences: recordTableDifferences
        )
    }

    /// The schema records of this store's database: see ``SchemaRecords``.
    public func schemaRecords() throws(StateStoreError) -> SchemaRecords {
        try withConnection { (connection) throws(StateStoreError) -> SchemaRecords in
            try Self.schemaRecords(of: connection)
        }
    }

    /// Re-records the schema version of the database at `path` whose version records were
    /// erased or damaged outside StateStore (`PRAGMA user_version`, `schema_migrations`) while
    /// its tables stayed intact: `schema_migrations` gets a row for every migration of this
    /// build and the header ``latestSchemaVersion``, in one transaction (a `schema_migrations`
    /// made again in another shape is made afresh first). No table or row of the user's is touched.
    ///
    /// Refused with ``StateStoreError/schemaMismatch(file:detail:)``, naming each difference and
    /// changing nothing, unless the tables and indexes match this build's schema exactly; a
    /// database whose records name a newer version with ``StateStoreError/schemaTooNew(file:found:supported:)``.
    /// Returns the header version found before, or `nil` when the records were intact and
    /// nothing was written. Its commit is synced to storage before it returns (`synchronous=FULL`):
    /// on storage whose sync fails it throws an I/O error, and nothing is repaired.
    @discardableResult
    public static func repairSchemaVersion(at path: String) throws(StateStoreError) -> Int? {
        try validateDatabasePath(path)
        try requireRegularFileOrNothing(at: path, readOnly: false)
        guard FileManager.default.fileExists(atPath: path) else {
            throw .schemaMismatch(file: path, detail: "there is no database to repair")
        }
        try requireStateStoreBeforeOpening(path)
        try refuseLostWAL(at: path)
        let connection = try connect(to: path, options: .init())
        try requireStateStore(connection)
        // The commit is synced before it returns, whether or not another process has the file
        // open (its close would not checkpoint): a sync that fails fails the repair whole.
        try connection.execute("PRAGMA synchronous = FULL")
        let found = try connection.writeTransaction { () throws(StateStoreError) -> Int? in
            let applied = try Migrator().appliedVersion(of: connection)
            guard applied <= latestSchemaVersion else {
                throw .schemaTooNew(file: path, found: applied, supported: latestSchemaVersion)
            }
            let records = try schemaRecords(of: connection)
            if records.isIntact { return nil }
            guard records.differences.isEmpty else {
                throw .schemaMismatch(
                    file: path,
                    detail:
                        "its tables do not match schema \(latestSchemaVersion) exactly, so its version was not re-recorded: "
                        + records.differences.joined(separator: "; "))
            }
            // Made again by hand in another shape: it holds nothing but records, which are
            // written again below, and a table of the wrong shape would keep every open refused.
            if !records.recordTableDifferences.isEmpty { try connection.execute("DROP TABLE schema_migrations") }
            try connection.execute(Migrator.bookkeeping)
            let record = try connection.cached(
                "INSERT OR IGNORE INTO schema_migrations(version, name, applied_at) VALUES (?1, ?2, ?3)"
            )
            for migration in Migrator().migrations {
                record.bind(migration.version, at: 1)
                record.bind(migration.name, at: 2)
                record.bind(Date().storedMilliseconds, at: 3)
                try record.run()
            }
            try connection.execute("PRAGMA user_version = \(latestSchemaVersion)")
            if try connection.scalarInt("PRAGMA application_id") != Int64(applicationID) {
                try connection.execute("PRAGMA application_id = \(applicationID)")
            }
            return records.headerVersion
        }
        if found != nil { connection.checkpointsOnClose = true }
        return found
    }
}
