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
            let statement = try connection.cached("""
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
    public func hierarchyArchiveByteCount(scene: String = "main", setAside: Bool = false) throws(StateStoreError) -> Int? {
        try withConnection { (connection) throws(StateStoreError) -> Int? in
            let statement = try connection.cached("SELECT length(archive) FROM hierarchy WHERE scene = ?1 AND set_aside = ?2")
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
            let move = try transaction.connection.cached("UPDATE hierarchy SET set_aside = 1 WHERE scene = ?1 AND set_aside = 0")
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
        let statement = try connection.cached("""
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
    @discardableResult
    public func moveState(from old: RestorationPath, to new: RestorationPath) throws(StateStoreError) -> Bool {
        let statement = try connection.cached("""
            UPDATE states SET path = ?2 WHERE path = ?1 AND NOT EXISTS (SELECT 1 FROM states WHERE path = ?2)
            """)
        statement.bind(old.rawValue, at: 1)
        statement.bind(new.rawValue, at: 2)
        try statement.run()
        return connection.changes > 0
    }

    /// Whether a state is stored at `path`.
    public func hasState(at path: RestorationPath) throws(StateStoreError) -> Bool {
        let statement = try connection.cached("SELECT 1 FROM states WHERE path = ?1")
        defer { statement.reset() }
        statement.bind(path.rawValue, at: 1)
        return try statement.step()
    }
}
