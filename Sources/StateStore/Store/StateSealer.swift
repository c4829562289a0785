import Foundation

/// Seals states before they reach the database and opens them when they are read: encryption
/// at rest, with the key kept outside the file.
///
/// Set one as ``StateStore/Options/sealer`` and every state the store writes — saves, the
/// write-behind writer, imports of clear states — is sealed; every sealed state it reads is
/// opened. The `StateStoreCrypto` product provides the implementation
/// (`StateKeyring`, AES-256-GCM with keys from the app, a key file or a systemd credential);
/// the core only defines the contract, so an app that does not seal never compiles a
/// cryptography library.
///
/// A sealed row keeps its key's ``keyID`` beside it, in clear, so a row sealed with another key
/// is recognised and reported (``StateStoreError/keyMismatch(path:found:configured:)``), never
/// quarantined or saved over.
public protocol StateSealer: Sendable {
    /// The identifier of the key new states are sealed with, written beside each sealed row.
    /// It must name the key without revealing it (the keyring's is derived from the key), and
    /// be at most 64 printable ASCII characters.
    var keyID: String { get }

    /// The identifiers of every key ``open(_:keyID:identity:)`` opens: ``keyID`` first, then
    /// earlier keys kept for reading during a rotation.
    var openableKeyIDs: [String] { get }

    /// Seals `plaintext` with the current key, binding it to `identity`: the result must not
    /// open for another path, type or version. The same plaintext and identity should seal to
    /// the same bytes (a synthetic nonce), so an unchanged save is recognised and not rewritten.
    func seal(_ plaintext: Data, identity: SealedRowIdentity) throws -> Data

    /// Opens bytes sealed with the key `keyID` for `identity`. Throws when they do not
    /// authenticate: altered bytes, or bytes sealed for another row.
    func open(_ sealed: Data, keyID: String, identity: SealedRowIdentity) throws -> Data
}

/// What a sealed state is bound to: a sealed value copied to another row, or read back as
/// another type or version, does not open.
public struct SealedRowIdentity: Sendable, Hashable {
    /// The row's restoration path.
    public var path: RestorationPath
    /// The Swift type the state was saved as (`String(reflecting:)`), as the row records it.
    public var typeName: String
    /// The application's version of the state's format, as the row records it.
    public var version: Int

    /// The identity of the row at `path` that holds a `typeName` state of `version`.
    public init(path: RestorationPath, typeName: String, version: Int) {
        self.path = path
        self.typeName = typeName
        self.version = version
    }

    /// The associated data the seal authenticates: `statestore.v1`, then the path, the type
    /// name and the version (4 bytes, big-endian), separated by NUL bytes (which none of them
    /// may contain: paths refuse control characters, and the type name is `String(reflecting:)`).
    public var authenticatedData: Data {
        var data = Data("statestore.v1".utf8)
        data.append(0)
        data.append(contentsOf: path.rawValue.utf8)
        data.append(0)
        data.append(contentsOf: typeName.utf8)
        data.append(0)
        let version = UInt32(truncatingIfNeeded: version).bigEndian
        withUnsafeBytes(of: version) { data.append(contentsOf: $0) }
        return data
    }
}

extension StateSealer {
    /// Whether ``open(_:keyID:identity:)`` opens rows sealed with the key `keyID`.
    public func canOpen(keyID: String) -> Bool { openableKeyIDs.contains(keyID) }
}

extension StoredState {
    /// Whether the stored bytes are sealed (``keyID`` is set).
    public var isSealed: Bool { keyID != nil }

    /// Whether `text` can name a key: 1 to 64 printable ASCII characters other than `,`.
    static func isValidKeyID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ",") }
    }

    /// What rewriting a row's seal needs (rekey, a rename): `type_name, version, key_id, checksum,
    /// bytes` from column `first`; the rest is left at placeholders. `bytes` must not be NULL.
    init(resealing path: RestorationPath, row statement: Statement, from first: Int32) throws(StateStoreError) {
        self.init(
            path: path, typeName: statement.string(first), version: statement.int(first + 1), generation: 1,
            encoding: .binary, checksum: statement.int64(first + 3), updatedAt: Date(),
            bytes: try statement.data(first + 4),
            keyID: statement.isNull(first + 2) ? nil : statement.string(first + 2)
        )
    }

    var sealedIdentity: SealedRowIdentity { SealedRowIdentity(path: path, typeName: typeName, version: version) }
}

extension StateStore {
    /// Whether this store seals the states it writes: it was opened with an ``Options/sealer``.
    public var isSealed: Bool { options.sealer != nil }

    /// How many states are stored under each key id, clear ones under `nil`: whether the
    /// database is sealed, partly (a rotation or a sealing under way) or not at all.
    /// Reads every row's key id (not its bytes).
    public func statesByKey() throws(StateStoreError) -> [String?: Int] {
        try withConnection { (connection) throws(StateStoreError) -> [String?: Int] in
            let statement = try connection.cached("SELECT key_id, count(*) FROM states GROUP BY key_id")
            defer { statement.reset() }
            var counts: [String?: Int] = [:]
            while try statement.step() {
                counts[statement.isNull(0) ? nil : statement.string(0)] = Int(statement.int64(1))
            }
            return counts
        }
    }

    /// The state's bytes as they were saved: opened with ``Options/sealer`` when the row is
    /// sealed, as stored when it is clear. The checksum is not checked here.
    ///
    /// Throws ``StateStoreError/keyMismatch(path:found:configured:)`` when the row is sealed with
    /// a key the store was not given (the row is left as it is: restart with the right key), and
    /// ``StateStoreError/sealedStateUnopenable(path:keyID:)`` when the key is right but the bytes
    /// do not authenticate.
    public func plaintext(of state: StoredState) throws(StateStoreError) -> Data {
        guard let keyID = state.keyID else { return state.bytes }
        guard let sealer = options.sealer, sealer.canOpen(keyID: keyID) else {
            throw .keyMismatch(path: state.path, found: keyID, configured: options.sealer?.keyID)
        }
        do {
            return try sealer.open(state.bytes, keyID: keyID, identity: state.sealedIdentity)
        } catch {
            throw .sealedStateUnopenable(path: state.path, keyID: keyID)
        }
    }

    /// `bytes` as this store writes them for `identity`: sealed with ``Options/sealer`` (with its
    /// key id), or clear when the store has none.
    func sealed(_ bytes: Data, identity: SealedRowIdentity) throws(StateStoreError) -> (bytes: Data, keyID: String?) {
        guard let sealer = options.sealer else { return (bytes, nil) }
        do {
            return (try sealer.seal(bytes, identity: identity), sealer.keyID)
        } catch {
            throw .encodingFailed(path: identity.path, reason: "sealing failed: \(error)")
        }
    }

    /// The `metadata` key that records the key a database's states are sealed with.
    static let sealedWithKey = "statestore.sealed_with"

    /// The key id the database records (`metadata` `statestore.sealed_with`), or `nil` for a
    /// clear database.
    static func readSealingRecord(_ connection: Connection) throws(StateStoreError) -> String? {
        let read = try connection.cached("SELECT value FROM metadata WHERE key = ?1")
        defer { read.reset() }
        read.bind(sealedWithKey, at: 1)
        return try read.step() ? read.string(0) : nil
    }

    /// Reads the database's sealing record and, for a store that seals, writes its key id there
    /// when the record is missing or names a key the sealer also opens (a rotation). A store
    /// given another key leaves the record as it is: it does not claim the database, and writes
    /// nothing into it (``WriteTransaction/requireRecordedKey()``).
    static func recordSealing(
        _ connection: Connection, sealer: (any StateSealer)?, readOnly: Bool
    ) throws(StateStoreError) -> String? {
        let recorded = try readSealingRecord(connection)
        guard let sealer, !readOnly, recorded != sealer.keyID, recorded.map(sealer.canOpen(keyID:)) ?? true else {
            return recorded
        }
        try connection.writeTransaction { () throws(StateStoreError) in
            let write = try connection.cached(
                "INSERT INTO metadata(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            write.bind(sealedWithKey, at: 1)
            write.bind(sealer.keyID, at: 2)
            try write.run()
        }
        return sealer.keyID
    }

    /// ``StateSealer/openableKeyIDs`` as the save statement matches them: `,id1,id2,` (`,` without a sealer).
    static func openableKeyList(_ sealer: (any StateSealer)?) -> String {
        "," + (sealer?.openableKeyIDs ?? []).map { $0 + "," }.joined()
    }

    /// Whether this store may replace a row sealed with `keyID` (`nil`: a clear row): only
    /// when it can open it, so a store started with the wrong key never saves over a state.
    func mayReplace(rowSealedWith keyID: String?) -> Bool {
        guard let keyID else { return true }
        return options.sealer?.canOpen(keyID: keyID) ?? false
    }
}

extension StateStore.WriteTransaction {
    /// The key the database records its states are sealed with, read under this transaction's
    /// write lock, so a record another process wrote since the store opened (a rekey, an import,
    /// a first sealing) counts; the store's ``StateStore/sealedWith`` follows it.
    func recordedSeal() throws(StateStoreError) -> String? {
        let recorded = try StateStore.readSealingRecord(connection)
        store.recordedSeal.withLock { $0 = recorded }
        return recorded
    }

    /// Throws ``StateStoreError/keyRequired(file:keyID:)`` when the database records that its
    /// states are sealed with a key this store cannot open (it has no sealer, or one without
    /// that key): it writes nothing into it. Without a key, a clear state would leave a user's
    /// draft readable in the file; with another key, a path saved once would from then on be
    /// sealed with a key the right one does not open, and refused to the app started again with it.
    func requireRecordedKey() throws(StateStoreError) {
        guard let recorded = try recordedSeal(), !(store.options.sealer?.canOpen(keyID: recorded) ?? false) else {
            return
        }
        throw .keyRequired(file: store.path, keyID: recorded)
    }
}
