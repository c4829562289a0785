import Foundation

extension StateStore {
    // MARK: Pressure events

    /// Appends a handled memory-pressure event, and removes the oldest beyond
    /// ``pressureEventLimit``.
    public func recordPressureEvent(_ event: PressureEvent) throws(StateStoreError) {
        try write { (transaction) throws(StateStoreError) in try transaction.recordPressureEvent(event) }
    }

    /// The newest `limit` pressure events, newest first.
    public func pressureEvents(limit: Int = 100) throws(StateStoreError) -> [PressureEvent] {
        try withConnection { (connection) throws(StateStoreError) -> [PressureEvent] in
            let statement = try connection.cached(
                """
                SELECT occurred_at, level, available_bytes, rss_before, rss_after, duration_us
                FROM pressure_events ORDER BY id DESC LIMIT ?1
                """)
            defer { statement.reset() }
            statement.bind(max(0, limit), at: 1)
            var events: [PressureEvent] = []
            while try statement.step() {
                events.append(
                    PressureEvent(
                        occurredAt: Date(storedMilliseconds: statement.int64(0)),
                        level: MemoryPressureLevel(rawValue: statement.int(1)) ?? .normal,
                        availableBytes: UInt64(max(0, statement.int64(2))),
                        rssBefore: UInt64(max(0, statement.int64(3))),
                        rssAfter: UInt64(max(0, statement.int64(4))),
                        duration: .microseconds(statement.int64(5))
                    ))
            }
            return events
        }
    }

    // MARK: Hierarchy archive

    /// The archived window hierarchy for `scene`, or `nil`. `setAside` reads the copy the
    /// crash-loop guard moved aside instead of the live one.
    public func hierarchyArchive(scene: String = "main", setAside: Bool = false) throws(StateStoreError) -> Data? {
        try withConnection { (connection) throws(StateStoreError) -> Data? in
            let statement = try connection.cached("SELECT archive FROM hierarchy WHERE scene = ?1 AND set_aside = ?2")
            defer { statement.reset() }
            statement.bind(scene, at: 1)
            statement.bind(setAside ? 1 : 0, at: 2)
            return try statement.step() ? try statement.data(0) : nil
        }
    }

    /// Moves the live archive of `scene` aside (replacing an older set-aside copy), so the next
    /// launch starts fresh while the archive stays available for inspection.
    @discardableResult
    public func setHierarchyArchiveAside(scene: String = "main") throws(StateStoreError) -> Bool {
        try write { (transaction) throws(StateStoreError) in
            let drop = try transaction.connection.cached("DELETE FROM hierarchy WHERE scene = ?1 AND set_aside = 1")
            drop.bind(scene, at: 1)
            try drop.run()
            let move = try transaction.connection.cached(
                "UPDATE hierarchy SET set_aside = 1 WHERE scene = ?1 AND set_aside = 0"
            )
            move.bind(scene, at: 1)
            try move.run()
            return transaction.connection.changes > 0
        }
    }

    // MARK: Metadata

    /// A value from the `metadata` table.
    public func metadata(_ key: String) throws(StateStoreError) -> String? {
        try metadata(key, waitingForWrites: true)
    }

    /// ``metadata(_:)``, waiting for the write-behind writes only when `waitingForWrites` (see
    /// ``withConnection(waitingForWrites:_:)``).
    func metadata(_ key: String, waitingForWrites: Bool) throws(StateStoreError) -> String? {
        try withConnection(waitingForWrites: waitingForWrites) { (connection) throws(StateStoreError) -> String? in
            let statement = try connection.cached("SELECT value FROM metadata WHERE key = ?1")
            defer { statement.reset() }
            statement.bind(key, at: 1)
            return try statement.step() ? statement.string(0) : nil
        }
    }

    /// Sets (or, with `nil`, removes) a value in the `metadata` table.
    public func setMetadata(_ key: String, to value: String?) throws(StateStoreError) {
        try setMetadata(key, to: value, waitingForWrites: true)
    }

    /// ``setMetadata(_:to:)``, waiting for the write-behind writes only when `waitingForWrites`
    /// (see ``write(waitingForWrites:_:)``).
    func setMetadata(_ key: String, to value: String?, waitingForWrites: Bool) throws(StateStoreError) {
        try write(waitingForWrites: waitingForWrites) { (transaction) throws(StateStoreError) in
            try transaction.setMetadata(key, to: value)
        }
    }
}

extension StateStore {
    /// How many memory-pressure events the database keeps: recording one more removes the
    /// oldest. An app under pressure for weeks records one event per warning it handles, and
    /// the table must not grow with the app's age (10,000 events take about 400 KB).
    public static let pressureEventLimit = 10_000
}

extension StateStore.WriteTransaction {
    /// Appends a handled memory-pressure event, and removes the oldest beyond
    /// ``StateStore/pressureEventLimit``.
    public func recordPressureEvent(_ event: PressureEvent) throws(StateStoreError) {
        let statement = try connection.cached(
            """
            INSERT INTO pressure_events(occurred_at, level, available_bytes, rss_before, rss_after, duration_us)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """)
        statement.bind(event.occurredAt.storedMilliseconds, at: 1)
        statement.bind(event.level.rawValue, at: 2)
        statement.bind(Int64(clamping: event.availableBytes), at: 3)
        statement.bind(Int64(clamping: event.rssBefore), at: 4)
        statement.bind(Int64(clamping: event.rssAfter), at: 5)
        statement.bind(event.duration.storedMicroseconds, at: 6)
        try statement.run()
        // Ids only grow (the newest is the largest), so the oldest are a range of the rowid.
        let trim = try connection.cached("DELETE FROM pressure_events WHERE id <= ?1 - ?2")
        trim.bind(connection.lastInsertedRowID, at: 1)
        trim.bind(StateStore.pressureEventLimit, at: 2)
        try trim.run()
    }

    /// Replaces the live hierarchy archive of `scene`.
    public func setHierarchyArchive(_ archive: Data, scene: String = "main") throws(StateStoreError) {
        let statement = try connection.cached(
            """
            INSERT INTO hierarchy(scene, set_aside, archive, updated_at) VALUES (?1, 0, ?2, ?3)
            ON CONFLICT(scene, set_aside) DO UPDATE SET archive = excluded.archive, updated_at = excluded.updated_at
            """)
        try archive.withBorrowedBytes { (raw) throws(StateStoreError) in
            statement.bind(scene, at: 1)
            statement.bindBorrowed(raw, at: 2)
            statement.bind(Date().storedMilliseconds, at: 3)
            try statement.run()
        }
    }

    /// Sets (or, with `nil`, removes) a value in the `metadata` table.
    public func setMetadata(_ key: String, to value: String?) throws(StateStoreError) {
        if let value {
            let statement = try connection.cached(
                "INSERT INTO metadata(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            statement.bind(key, at: 1)
            statement.bind(value, at: 2)
            try statement.run()
        } else {
            let statement = try connection.cached("DELETE FROM metadata WHERE key = ?1")
            statement.bind(key, at: 1)
            try statement.run()
        }
        // The store's copy of its sealing record follows its own writes of it (and is put back
        // when the transaction does not commit: ``StateStore/write(_:)``).
        if key == StateStore.sealedWithKey { store.recordedSeal.withLock { $0 = value } }
    }
}
