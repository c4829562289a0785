import Foundation
import StateStoreSQLite

extension StateStore {
    /// What ``StateStore/openOrRecover(path:options:)`` copied from the database it moved aside
    /// into the fresh one (``Recovery/salvage``). The moved file itself is never changed.
    ///
    /// A state is copied only when its bytes still match the checksum stored with them, so
    /// nothing damaged comes back; the rest stays in the moved file, for `statectl` or a backup.
    public struct Salvage: Sendable, Hashable {
        /// The states copied: every one whose row could be read and whose bytes match its checksum.
        public var states = 0
        /// Rows read but not copied: bytes that fail their checksum, a path or a column that
        /// cannot be read or is not of its type, a path already copied from another row (a
        /// damaged path that names another state's), a row marked sealed in a file that records
        /// no key, a state over ``Options/maximumStateSize``, or one the fresh store refuses
        /// (sealed with a key it cannot open, beside clear states).
        public var statesLeftBehind = 0
        /// Stretches of the `states` table SQLite could not read (damaged pages): the reading
        /// went on past each one, and the states on them, which cannot be counted, stay behind.
        public var unreadableStretches = 0
        /// The window hierarchy archives copied (each scene's, and the ones the crash-loop guard
        /// set aside), so the relaunch can rebuild the windows the user left.
        public var archives = 0
        /// The quarantined rows copied.
        public var quarantined = 0
        /// Why part of the salvage could not be done: the moved file could not be opened or its
        /// schema read (nothing could be copied), a table other than `states` could not be read
        /// whole, or the copy was committed and could not be synced
        /// (``StateStoreError/notSynced(file:_:)``: the counts stand, and a power cut may take
        /// the copy back). `nil` when everything readable was copied. A copy the fresh file
        /// cannot take (a full disk) is not a salvage: ``StateStore/openOrRecover(path:options:)``
        /// then removes it, leaves the old database where it was, and throws.
        public var error: StateStoreError?

        /// A salvage that copied nothing: every count zero and no error.
        public init() {}
    }

    /// Copies what can still be read in the database at `damaged` (never written to) into this
    /// store, in one transaction, then syncs it. What it cannot read is in the result; it throws
    /// only when this store cannot take the copy (a full disk, an I/O error), and then nothing
    /// was copied. This store's connection must be the only one to its file (a new file that
    /// nothing else knows of).
    func salvage(from damaged: String) throws(StateStoreError) -> Salvage {
        var result = Salvage()
        let source: Connection
        do throws(StateStoreError) {
            source = try Connection(path: damaged, options: .init(readOnly: true, create: false))
            // A file shorter than its header says is refused whole at its first read, unless
            // the schema is "writable": then SQLite reads the pages the file still has, which
            // is what a salvage wants. The connection is read-only: nothing can be written.
            var ignored: Int32 = 0
            _ = csqlite_db_config_int(source.handle, SQLITE_DBCONFIG_DEFENSIVE, 0, &ignored)
            try source.execute("PRAGMA writable_schema = ON")
            _ = try source.scalarInt("SELECT count(*) FROM sqlite_schema")
        } catch {
            result.error = error
            return result
        }
        // The key the moved file records its states are sealed with: a row that says it is
        // sealed in a file that records no key was damaged, and is left behind. When the record
        // cannot be read, sealed rows are taken, and the key most of them name is recorded.
        enum Seal: Equatable {
            case recorded(String)
            case none, unreadable
        }
        let seal: Seal
        do throws(StateStoreError) {
            seal =
                try source.strings("SELECT value FROM metadata WHERE key = '\(Self.sealedWithKey)'").first.map(
                    Seal.recorded) ?? .none
        } catch {
            seal = .unreadable
        }
        let limit = options.maximumStateSize
        // The fresh file is this store's alone until it takes the damaged one's name, so the copy
        // goes through a rollback journal: a new page is written to the file once (a journal
        // keeps only pages that existed before the transaction), where a WAL would hold it and a
        // checkpoint write it again. Back to WAL once copied, as every store's file is.
        let journaled =
            try withConnection { (connection) throws(StateStoreError) -> [String] in
                try connection.strings("PRAGMA journal_mode = DELETE")
            } == ["delete"]
        result = try write { (transaction) throws(StateStoreError) -> Salvage in
            var copied = Salvage()
            copied.quarantined = transaction.copyRows(
                of: "quarantine",
                columns:
                    "id, path, type_name, version, generation, encoding, checksum, updated_at, reason, quarantined_at, bytes, key_id",
                streaming: "bytes", from: source, error: &copied.error
            )
            _ = transaction.copyRows(
                of: "scenes", columns: "identifier, path_prefix, created_at", from: source, error: &copied.error)
            copied.archives = transaction.copyRows(
                of: "hierarchy", columns: "scene, set_aside, archive, updated_at", streaming: "archive", from: source,
                error: &copied.error)
            _ = transaction.copyRows(
                of: "pressure_events",
                columns: "id, occurred_at, level, available_bytes, rss_before, rss_after, duration_us",
                from: source, error: &copied.error
            )
            // The seal record is made below, from what was read of it.
            _ = transaction.copyRows(
                of: "metadata", columns: "key, value", from: source, where: "key <> '\(Self.sealedWithKey)'",
                error: &copied.error)
            var sealedBy: [String: Int] = [:]
            try Self.forEachReadableState(in: source, limit: limit, stretches: &copied.unreadableStretches) {
                (state) throws(StateStoreError) in
                guard let state, state.keyID == nil || seal != .none else {
                    copied.statesLeftBehind += 1
                    return
                }
                do throws(StateStoreError) {
                    // A path read before keeps its row: a damaged path that names another
                    // state's must not replace it.
                    guard try transaction.insert(verbatim: state, replacing: false) else {
                        copied.statesLeftBehind += 1
                        return
                    }
                } catch {
                    switch error {
                    case .checksumMismatch, .invalidState, .stateTooLarge, .keyMismatch, .keyRequired,
                        .sealedStateUnopenable:
                        copied.statesLeftBehind += 1
                        return
                    default:
                        throw error
                    }
                }
                copied.states += 1
                if let keyID = state.keyID { sealedBy[keyID, default: 0] += 1 }
            }
            switch seal {
            case .recorded(let key): try transaction.recordSealIfNone(preferring: key, sealedBy: [:])
            case .unreadable: try transaction.recordSealIfNone(sealedBy: sealedBy)
            case .none: break
            }
            return copied
        }
        if journaled {
            _ = try withConnection { (connection) throws(StateStoreError) -> [String] in
                try connection.strings("PRAGMA journal_mode = WAL")
            }
        }
        do throws(StateStoreError) {
            try synchronize()
        } catch {
            // Committed, and a power cut may take it back: said, not thrown (the copy is made).
            result.error = error
        }
        return result
    }

    /// Visits every state row of `source` that can be read, in rowid order: the row, or `nil`
    /// for one whose path or columns cannot be read, or whose columns are not of the types the
    /// schema gives them. The bytes' checksum is the visitor's to check (`insert(verbatim:)`
    /// checks it, and refuses a row that fails it). Where SQLite cannot read a page, it
    /// looks for the first row past the damage that a read reaches, and reads on from there:
    ///
    /// - a row whose place in the table reads but whose columns do not (a damaged overflow
    ///   page) is left behind alone;
    /// - else it counts an unreadable stretch in `stretches` and tries every rowid after the
    ///   damage, one by one, for 65,536 rowids (a read that reaches one names the next row
    ///   there is), so an intact page between two damaged ones is found;
    /// - past that (sparse rowids), it doubles its step until a read reaches a row, then halves
    ///   back to the first rowid that does.
    ///
    /// A row met again (a damaged page pointing back into the table) is not visited twice, and
    /// a row whose path the path index gives to another row that holds the same path is left
    /// behind: its path was damaged (a row the index misnames is kept).
    static func forEachReadableState(
        in source: Connection, limit: Int, stretches: inout Int, _ visit: (StoredState?) throws(StateStoreError) -> Void
    ) throws(StateStoreError) {
        // `key_id` came with schema 5: a file of an older schema has no sealed states.
        let sealable = try source.strings("SELECT name FROM pragma_table_info('states')").contains("key_id")
        let columns = sealable ? StoredState.columns : StoredState.columns.replacing("key_id", with: "NULL")
        let scan = try Statement(
            connection: source,
            sql:
                "SELECT rowid, path, \(columns), typeof(type_name) || typeof(version) || typeof(generation) || typeof(encoding) || typeof(checksum) || typeof(updated_at) || typeof(bytes) || typeof(\(sealable ? "key_id" : "NULL")) FROM states WHERE rowid >= ?1 ORDER BY rowid",
            persistent: false
        )
        let seek = try Statement(
            connection: source, sql: "SELECT rowid FROM states WHERE rowid >= ?1 ORDER BY rowid LIMIT 1",
            persistent: false)
        enum Reach {
            case row(Int64)
            case end, fails
        }
        /// Where a read from `rowid` on gets: the first row there is, none, or the damage. A row
        /// before `rowid` is the damage's doing (a page that points back into the table).
        func reach(_ rowid: Int64) -> Reach {
            seek.reset()
            seek.bind(rowid, at: 1)
            defer { seek.reset() }
            guard let found = try? seek.step() else { return .fails }
            guard found else { return .end }
            return seek.int64(0) >= rowid ? .row(seek.int64(0)) : .fails
        }
        // The path index, read beside the table: a row whose path the index gives to another
        // row holding that same path has a damaged path (the checksum covers the bytes alone).
        let owner = try? Statement(
            connection: source, sql: "SELECT rowid FROM states WHERE path = ?1", persistent: false)
        let pathOf = try? Statement(
            connection: source, sql: "SELECT path FROM states WHERE rowid = ?1", persistent: false)
        /// Whether another row, by the index, holds `path`, which row `rowid` also says it holds.
        func pathBelongsElsewhere(_ path: String, rowid: Int64) -> Bool {
            guard let owner, let pathOf else { return false }
            owner.reset()
            owner.bind(path, at: 1)
            defer { owner.reset() }
            guard (try? owner.step()) == true else { return false }
            let other = owner.int64(0)
            guard other != rowid else { return false }
            pathOf.reset()
            pathOf.bind(other, at: 1)
            defer { pathOf.reset() }
            guard (try? pathOf.step()) == true, let text = pathOf.validText(0) else { return false }
            return text == path
        }
        /// The columns' types as the schema gives them (STRICT), a clear row's or a sealed one's.
        let expectedTypes: Set<String> = [
            "textintegerintegertextintegerintegerblobnull", "textintegerintegertextintegerintegerblobtext",
        ]
        var from = Int64.min
        var highest: Int64?
        outer: while true {
            scan.reset()
            scan.bind(from, at: 1)
            scan.bind(limit, at: 9)
            while true {
                // Only the reading is read past: a failure to take a state (the fresh file
                // full) is the caller's.
                do {
                    guard try scan.step() else {
                        scan.reset()
                        return
                    }
                } catch let error where error.isDamage {
                    break
                }
                let rowid = scan.int64(0)
                if let highest, rowid <= highest { continue }
                highest = rowid
                guard expectedTypes.contains(scan.string(11)),
                    case .success(let path) = RestorationPath.stored(in: scan, column: 1),
                    let state = try? StoredState(path: path, row: scan, from: 2, limit: limit),
                    StateEncoding(rawValue: scan.string(5)) != nil, state.keyID.map(StoredState.isValidKeyID) ?? true,
                    !pathBelongsElsewhere(path.rawValue, rowid: rowid)
                else {
                    try visit(nil)
                    continue
                }
                try visit(state)
            }
            scan.reset()
            let start: Int64
            if let highest {
                guard highest < .max else { return }
                start = highest + 1
            } else {
                start = from
            }
            switch reach(start) {
            case .end:
                return
            case .row(let rowid):
                // Its place reads, its columns do not: that row alone stays behind.
                try visit(nil)
                highest = rowid
                guard rowid < .max else { return }
                from = rowid + 1
                continue outer
            case .fails:
                stretches += 1
            }
            // Every rowid after the damage, one by one, for a while.
            var probe = start
            for _ in 0..<65_536 {
                guard probe < .max else { return }
                probe += 1
                switch reach(probe) {
                case .row(let rowid):
                    from = rowid
                    continue outer
                case .end:
                    return
                case .fails:
                    continue
                }
            }
            // Sparse rowids: double the step until a read reaches a row, then halve back.
            var failing = probe
            var step: Int64 = 1
            var reachable: Int64
            while true {
                let (candidate, overflow) = failing.addingReportingOverflow(step)
                reachable = overflow ? Int64.max : candidate
                if case .fails = reach(reachable) {
                    if reachable == .max { return }
                    failing = reachable
                    step = step > Int64.max / 2 ? Int64.max : step * 2
                } else {
                    break
                }
            }
            while reachable - failing > 1 {
                let middle = failing + (reachable - failing) / 2
                if case .fails = reach(middle) { failing = middle } else { reachable = middle }
            }
            guard case .row(let rowid) = reach(reachable) else { return }
            from = rowid
        }
    }
}

extension StateStoreError {
    /// Whether the error says a page of the file could not be read as SQLite wrote it: what a
    /// salvage reads past.
    fileprivate var isDamage: Bool {
        switch self {
        case .corrupt, .notADatabase: true
        case .sqlite(let failure): failure.resultCode == .ioError
        default: false
        }
    }
}

extension StateStore.WriteTransaction {
    /// Copies the rows of `table` that `source` can read (`columns` of them, `filter` a
    /// `WHERE` clause) into this database's table of that name, leaving a row whose key is
    /// already there; returns how many it copied. A table it cannot read whole sets `error`
    /// (when none is set yet) and keeps the rows read before the damage. The blob in column
    /// `streamed`, when over a megabyte, is copied a megabyte at a time
    /// (``Connection/copyBlob(column:from:row:of:to:row:offset:count:)``), never held whole; a
    /// row whose blob cannot be read to its end is not kept.
    fileprivate func copyRows(
        of table: String, columns: String, streaming streamed: String? = nil, from source: Connection,
        where filter: String? = nil, error: inout StateStoreError?
    ) -> Int {
        var copied = 0
        do throws(StateStoreError) {
            // A file of an older schema lacks the newer tables and columns: what it has is copied.
            let present = Set(try source.strings("SELECT name FROM pragma_table_info('\(table)')"))
            let names = columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter(
                present.contains)
            guard !names.isEmpty else { return 0 }
            let streamedIndex = streamed.flatMap { names.firstIndex(of: $0) }.map { Int32($0) }
            // The streamed column is read only when small (`length` of a blob reads its header),
            // and after the others come its length and the row's rowid.
            let selected = names.map { (name) -> String in
                name == streamed
                    ? "CASE WHEN length(\(name)) > \(Connection.blobChunk) THEN NULL ELSE \(name) END" : name
            }
            let extra = streamed.map { ", length(\($0)), rowid" } ?? ""
            let read = try Statement(
                connection: source,
                sql: "SELECT \(selected.joined(separator: ", "))\(extra) FROM \(table)"
                    + (filter.map { " WHERE \($0)" } ?? ""),
                persistent: false
            )
            let insert = try Statement(
                connection: connection,
                sql:
                    "INSERT OR IGNORE INTO \(table)(\(names.joined(separator: ", "))) VALUES (\((1...names.count).map { "?\($0)" }.joined(separator: ", ")))",
                persistent: false
            )
            let count = Int32(names.count)
            while try read.step() {
                let length = streamedIndex.map { _ in read.int(count) } ?? 0
                let large = length > Connection.blobChunk
                for column in 0..<count {
                    if large && column == streamedIndex {
                        insert.bindZeroBlob(count: length, at: column + 1)
                    } else {
                        insert.bind(column: column, of: read, at: column + 1)
                    }
                }
                try insert.run()
                guard connection.changes > 0 else { continue }
                if large, let streamed {
                    let target = connection.lastInsertedRowID
                    do throws(StateStoreError) {
                        try connection.copyBlob(
                            column: streamed, from: table, row: read.int64(count + 1), of: source, to: table,
                            row: target, count: length)
                    } catch let failure {
                        // Zeros where the bytes were are not a copy: the row goes, as a row that
                        // cannot be read is not copied.
                        let remove = try Statement(
                            connection: connection, sql: "DELETE FROM \(table) WHERE rowid = ?1", persistent: false)
                        remove.bind(target, at: 1)
                        try remove.run()
                        throw failure
                    }
                }
                copied += 1
            }
        } catch let failure {
            if error == nil { error = failure }
        }
        return copied
    }
}
