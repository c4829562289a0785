import Foundation

extension StateStore {
    // MARK: Scenes

    /// The identifiers of the scenes whose hierarchy archive the store holds (not set aside),
    /// the default scene (`"main"`) first, then in the order the scenes were first archived.
    ///
    /// At launch, create one window per identifier (`Window(size:sceneIdentifier:application:)`)
    /// and restore each. A scene whose window the user closed is not listed.
    public func savedSceneIdentifiers() throws(StateStoreError) -> [String] {
        try withConnection { (connection) throws(StateStoreError) -> [String] in
            let statement = try connection.cached(
                """
                SELECT h.scene FROM hierarchy AS h LEFT JOIN scenes AS s ON s.identifier = h.scene
                WHERE h.set_aside = 0
                ORDER BY h.scene <> 'main', s.created_at, h.updated_at, h.scene
                """)
            defer { statement.reset() }
            var scenes: [String] = []
            while try statement.step() { scenes.append(statement.string(0)) }
            return scenes
        }
    }

    /// A window scene the database knows: recorded when its window was first archived, or
    /// holding an archive.
    public struct Scene: Sendable, Hashable {
        /// The scene's identifier (``Window/sceneIdentifier``).
        public var identifier: String
        /// The restoration-path component its controllers save under (`""`: none, as for the
        /// default scene and scenes archived before scenes had identities); `nil` when not recorded.
        public var pathPrefix: String?
        /// When its window was first archived; `nil` when not recorded.
        public var createdAt: Date?
        /// The size of its live hierarchy archive, the one a relaunch rebuilds; `nil` when it
        /// has none (its window was closed, or the archive was set aside).
        public var archiveByteCount: Int?
        /// When its live archive was last written.
        public var archiveUpdatedAt: Date?
        /// Whether an archive of it is set aside (`statectl inspect --hierarchy --set-aside`).
        public var hasSetAsideArchive: Bool

        /// A scene with the given values; by default nothing about it is recorded and it has no archive.
        public init(
            identifier: String, pathPrefix: String? = nil, createdAt: Date? = nil, archiveByteCount: Int? = nil,
            archiveUpdatedAt: Date? = nil, hasSetAsideArchive: Bool = false
        ) {
            self.identifier = identifier
            self.pathPrefix = pathPrefix
            self.createdAt = createdAt
            self.archiveByteCount = archiveByteCount
            self.archiveUpdatedAt = archiveUpdatedAt
            self.hasSetAsideArchive = hasSetAsideArchive
        }
    }

    /// Every scene the database knows, the default scene first, then in the order they were
    /// first archived. Scenes whose window was closed are listed too (their states stay until
    /// ``Options/retention`` removes them); ``sceneHolder(of:)`` says whether a live process
    /// shows one now. Reads a database of any schema version (before scenes had identities,
    /// the archives' scenes).
    public func scenes() throws(StateStoreError) -> [Scene] {
        try withConnection { (connection) throws(StateStoreError) -> [Scene] in
            let recorded =
                (try connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'scenes'")
                    ?? 0) > 0
            let identifiers =
                recorded
                ? "SELECT identifier AS id FROM scenes UNION SELECT scene FROM hierarchy"
                : "SELECT scene AS id FROM hierarchy"
            let statement = try Statement(
                connection: connection,
                sql: """
                    SELECT ids.id, \(recorded ? "s.path_prefix, s.created_at" : "NULL, NULL"), length(live.archive), live.updated_at,
                           aside.scene IS NOT NULL
                    FROM (\(identifiers)) AS ids
                    \(recorded ? "LEFT JOIN scenes AS s ON s.identifier = ids.id" : "")
                    LEFT JOIN hierarchy AS live ON live.scene = ids.id AND live.set_aside = 0
                    LEFT JOIN hierarchy AS aside ON aside.scene = ids.id AND aside.set_aside = 1
                    ORDER BY ids.id <> 'main', \(recorded ? "s.created_at," : "") ids.id
                    """, persistent: false)
            var scenes: [Scene] = []
            while try statement.step() {
                scenes.append(
                    Scene(
                        identifier: statement.string(0),
                        pathPrefix: statement.isNull(1) ? nil : statement.string(1),
                        createdAt: statement.isNull(2) ? nil : Date(storedMilliseconds: statement.int64(2)),
                        archiveByteCount: statement.isNull(3) ? nil : statement.int(3),
                        archiveUpdatedAt: statement.isNull(4) ? nil : Date(storedMilliseconds: statement.int64(4)),
                        hasSetAsideArchive: statement.int(5) != 0
                    ))
            }
            return scenes
        }
    }

    /// The restoration-path component the controllers of `scene` save under (`""` for none),
    /// or `nil` when the scene was never archived.
    public func scenePathPrefix(scene: String) throws(StateStoreError) -> String? {
        try withConnection { (connection) throws(StateStoreError) -> String? in
            let statement = try connection.cached("SELECT path_prefix FROM scenes WHERE identifier = ?1")
            defer { statement.reset() }
            statement.bind(scene, at: 1)
            return try statement.step() ? statement.string(0) : nil
        }
    }

    /// The size in bytes of the hierarchy archive of `scene`, or `nil` when there is none;
    /// reads no more than the row's header, so an oversized archive can be refused unread.
    public func hierarchyArchiveByteCount(
        scene: String = "main", setAside: Bool = false
    ) throws(StateStoreError) -> Int? {
        try withConnection { (connection) throws(StateStoreError) -> Int? in
            let statement = try connection.cached(
                "SELECT length(archive) FROM hierarchy WHERE scene = ?1 AND set_aside = ?2")
            defer { statement.reset() }
            statement.bind(scene, at: 1)
            statement.bind(setAside ? 1 : 0, at: 2)
            return try statement.step() ? statement.int(0) : nil
        }
    }

    /// The `metadata` key under which the reason `scene`'s archive was set aside is kept.
    static func setAsideReasonKey(scene: String) -> String { "hierarchy.set_aside_reason." + scene }

    /// Moves the live archive of `scene` aside, as ``setHierarchyArchiveAside(scene:)`` does, and
    /// records `reason` beside it, in one transaction, for `statectl inspect --hierarchy --set-aside`.
    @discardableResult
    public func setHierarchyArchiveAside(scene: String, reason: String) throws(StateStoreError) -> Bool {
        try write { (transaction) throws(StateStoreError) in
            let drop = try transaction.connection.cached("DELETE FROM hierarchy WHERE scene = ?1 AND set_aside = 1")
            drop.bind(scene, at: 1)
            try drop.run()
            let move = try transaction.connection.cached(
                "UPDATE hierarchy SET set_aside = 1 WHERE scene = ?1 AND set_aside = 0")
            move.bind(scene, at: 1)
            try move.run()
            let moved = transaction.connection.changes > 0
            if moved { try transaction.setMetadata(Self.setAsideReasonKey(scene: scene), to: reason) }
            return moved
        }
    }

    /// Why the set-aside archive of `scene` was set aside, when the library recorded it.
    public func hierarchySetAsideReason(scene: String = "main") throws(StateStoreError) -> String? {
        try metadata(Self.setAsideReasonKey(scene: scene))
    }

    /// Removes the live hierarchy archive of `scene` (the user closed its window, so a relaunch
    /// must not rebuild it). Set-aside copies and the scene's states are kept.
    @discardableResult
    public func removeHierarchyArchive(scene: String) throws(StateStoreError) -> Bool {
        try write { (transaction) throws(StateStoreError) in try transaction.removeHierarchyArchive(scene: scene) }
    }
}

extension StateStore.WriteTransaction {
    /// Removes the live hierarchy archive of `scene`; see ``StateStore/removeHierarchyArchive(scene:)``.
    @discardableResult
    public func removeHierarchyArchive(scene: String) throws(StateStoreError) -> Bool {
        let statement = try connection.cached("DELETE FROM hierarchy WHERE scene = ?1 AND set_aside = 0")
        statement.bind(scene, at: 1)
        try statement.run()
        return connection.changes > 0
    }

    /// Records `scene` with the path component its controllers save under, unless it is
    /// already recorded (a scene's prefix never changes once its states exist).
    public func registerScene(_ scene: String, pathPrefix: String) throws(StateStoreError) {
        let statement = try connection.cached(
            """
            INSERT INTO scenes(identifier, path_prefix, created_at) VALUES (?1, ?2, ?3)
            ON CONFLICT(identifier) DO NOTHING
            """)
        statement.bind(scene, at: 1)
        statement.bind(pathPrefix, at: 2)
        statement.bind(Date().storedMilliseconds, at: 3)
        try statement.run()
    }

    /// Moves the state at `old` to `new` when `new` holds none (a controller whose restoration
    /// identifier changed keeps its state). Returns whether it moved; when `new` already holds
    /// a state both are kept.
    ///
    /// A sealed state is bound to its path, so it is opened and sealed again for `new`; one
    /// sealed with a key the store cannot open stays where it is
    /// (``StateStoreError/keyMismatch(path:found:configured:)``).
    @discardableResult
    public func moveState(from old: RestorationPath, to new: RestorationPath) throws(StateStoreError) -> Bool {
        let limit = store.options.maximumStateSize
        let find = try connection.cached(
            """
            SELECT type_name, version, key_id, checksum, CASE WHEN length(bytes) <= ?2 THEN bytes END, length(bytes)
            FROM states WHERE path = ?1 AND key_id IS NOT NULL
            """)
        find.bind(old.rawValue, at: 1)
        find.bind(limit, at: 2)
        var resealed: (bytes: Data, keyID: String?)?
        if try find.step() {
            defer { find.reset() }
            let keyID = find.string(2)
            guard store.mayReplace(rowSealedWith: keyID) else {
                throw .keyMismatch(path: old, found: keyID, configured: store.options.sealer?.keyID)
            }
            guard !find.isNull(4) else { throw .stateTooLarge(path: old, byteCount: find.int(5), limit: limit) }
            let state = try StoredState(resealing: old, row: find, from: 0)
            guard state.checksumIsValid else { throw .checksumMismatch(path: old) }
            var moved = state
            moved.path = new
            resealed = try store.sealed(try store.plaintext(of: state), identity: moved.sealedIdentity)
        } else {
            find.reset()
        }
        let statement = try connection.cached(
            """
            UPDATE states SET path = ?2 WHERE path = ?1 AND NOT EXISTS (SELECT 1 FROM states WHERE path = ?2)
            """)
        statement.bind(old.rawValue, at: 1)
        statement.bind(new.rawValue, at: 2)
        try statement.run()
        guard connection.changes > 0 else { return false }
        if let resealed {
            let update = try connection.cached(
                "UPDATE states SET bytes = ?2, checksum = ?3, key_id = ?4 WHERE path = ?1")
            try run(update, writing: resealed) { $0.bind(new.rawValue, at: 1) }
        }
        return true
    }

    /// Whether a state is stored at `path`.
    public func hasState(at path: RestorationPath) throws(StateStoreError) -> Bool {
        let statement = try connection.cached("SELECT 1 FROM states WHERE path = ?1")
        defer { statement.reset() }
        statement.bind(path.rawValue, at: 1)
        return try statement.step()
    }
}
