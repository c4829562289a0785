import Foundation

extension StateStore {
    /// What ``importStates(_:replace:)`` did.
    public struct ImportResult: Sendable, Hashable {
        /// States written at paths the store did not hold.
        public var created: Int
        /// States written over a state the store held at the same path.
        public var replaced: Int
        /// Stored states removed because the export did not hold their path (only with `replace`).
        public var removed: Int

        /// Every state written: ``created`` and ``replaced``.
        public var imported: Int { created + replaced }

        /// A result with these counts, to compare one with.
        ///
        /// - Parameters:
        ///   - created: states written at new paths.
        ///   - replaced: states written over stored ones.
        ///   - removed: stored states removed.
        public init(created: Int, replaced: Int, removed: Int) {
            self.created = created
            self.replaced = replaced
            self.removed = removed
        }
    }

    /// Writes every state of `export`, all in one transaction: all of them or, on a failure,
    /// none.
    ///
    /// Each state is written under its path as ``StateStore/WriteTransaction/insert(verbatim:)``
    /// writes it: type, version, encoding, bytes, checksum and update time as exported. A
    /// replaced row gets the larger of the exported generation and its stored generation + 1, so
    /// a running application that has seen the old row notices the change; a new row keeps the
    /// exported generation. Other stored states stay, unless `replace` is set. Sealed states are
    /// written sealed, as exported; clear ones are sealed when the store has an
    /// ``Options/sealer`` (and refused, ``StateStoreError/keyRequired(file:keyID:)``, by a store
    /// that cannot open the key a sealed database records). Sealed states imported into a
    /// database that records no key make it record theirs (``sealedWith``), as the first store
    /// that seals it would. With `replace`, a stored state sealed
    /// with a key the store cannot open is never removed: ``StateStoreError/keyMismatch(path:found:configured:)``.
    ///
    /// ```swift
    /// let export = try StateExport(decoding: Data(contentsOf: backup))
    /// let result = try store.importStates(export, replace: true)
    /// print("\(result.created) new, \(result.replaced) replaced, \(result.removed) removed")
    /// ```
    ///
    /// - Parameters:
    ///   - export: the states to write, usually from ``StateExport/init(decoding:maximumStateSize:)``
    ///     (decode with this store's ``Options/maximumStateSize``, so that every state fits).
    ///   - replace: also remove the stored states whose paths are not in `export`, in the same
    ///     transaction. Rows whose path is not a valid ``RestorationPath`` stay either way (see
    ///     ``WriteTransaction/removeInvalidRows()``).
    /// It returns once the import is synced to storage (``synchronize()``), so it survives a
    /// power cut even while another process holds the database open.
    ///
    /// - Returns: how many states were created, replaced and removed.
    /// - Throws: ``StateStoreError/stateTooLarge(path:byteCount:limit:)`` for a state over
    ///   ``Options/maximumStateSize``, ``StateStoreError/checksumMismatch(path:)`` or
    ///   ``StateStoreError/invalidState(path:reason:)`` for a state built by hand that a decoder
    ///   would have refused (a path twice, a generation or version out of range),
    ///   ``StateStoreError/readOnly(file:_:)`` on a store opened read-only,
    ///   and any error a write can meet. Nothing is written when it throws, except when the
    ///   sync after the commit fails (``StateStoreError/notSynced(file:_:)``): the import is
    ///   then committed, but a power cut may take it back; do not import again.
    @discardableResult
    public func importStates(_ export: StateExport, replace: Bool = false) throws(StateStoreError) -> ImportResult {
        var paths: Set<RestorationPath> = []
        for state in export.states where !paths.insert(state.path).inserted {
            throw .invalidState(path: state.path, reason: "the export holds it more than once")
        }
        let result = try write { (transaction) throws(StateStoreError) -> ImportResult in
            // Compared by their UTF-8 bytes, as the database compares its keys.
            let existing = Set(try transaction.storedPaths().map { Array($0.utf8) })
            let removed = replace ? try transaction.removeStates(notIn: paths) : 0
            var result = ImportResult(created: 0, replaced: 0, removed: removed)
            var sealedBy: [String: Int] = [:]
            for state in export.states {
                try transaction.insert(verbatim: state)
                if existing.contains(Array(state.path.rawValue.utf8)) {
                    result.replaced += 1
                } else {
                    result.created += 1
                }
                if let keyID = state.keyID { sealedBy[keyID, default: 0] += 1 }
            }
            // Recorded once every row is in, so the clear rows of an export taken half-way
            // through a sealing are restored as they were.
            try transaction.recordSealIfNone(sealedBy: sealedBy)
            return result
        }
        // A restore from a backup is on storage once it returns, like a flush point.
        try synchronize()
        return result
    }
}

extension StateStore.WriteTransaction {
    /// Records the key the database is sealed with when it records none: `preferred`, or else
    /// the key most of the states counted in `sealedBy` (states by key) are sealed with. Sealed
    /// states put into a database that records no key make it a sealed one, as the first store
    /// that seals it would: a store without the key then writes nothing clear beside them.
    func recordSealIfNone(preferring preferred: String? = nil, sealedBy: [String: Int]) throws(StateStoreError) {
        guard try recordedSeal() == nil,
            let key = preferred
                ?? sealedBy.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) })?.key
        else { return }
        try setMetadata(StateStore.sealedWithKey, to: key)
    }
}
