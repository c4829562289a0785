import Foundation
import Logging

// Setting a row aside in steps: a row over maximumStateSize met at launch is copied into
// quarantine by the write-behind writer in short transactions, the store's connection free
// between them, so the main thread never waits for more than one of them.
//
// 1. One transaction inserts the quarantine row (the source's metadata, the reason, room for
//    the bytes) and a marker in `metadata` naming it (``settingAsideKey(quarantineID:)``).
// 2. One transaction per ``setAsideChunk`` bytes checks that the marker, the quarantine row
//    and the source row are as the first left them, then copies its bytes.
// 3. One transaction checks them once more, deletes the source row and removes the marker.
//
// At every moment the database holds the source row in `states`, or the whole copy in
// quarantine with the source gone: a kill or a power cut between two steps leaves the source
// and a partial copy named by its marker. Readers leave a row named by a marker out, as if it
// were not there yet (``Connection/quarantinedStates(maximumSize:)``, `check()`'s count,
// ``StateStore/WriteTransaction/removeQuarantined(under:quarantinedBefore:)``), rather than
// list it with a reason saying it is being copied: a list of quarantined states then never
// holds one whose bytes are not all there, and no reader needs to know the copy's steps. The
// next open removes it (``StateStore/removeAbandonedSetAsides(_:)``); one a failed set-aside
// could not remove is removed by this store's next set-aside (``StateStore/LeftSetAside``).
//
// The first step is the one whose time grows with the row: SQLite writes the room `zeroblob(n)`
// makes as pages of zeros (no reading, no copying: 280-360 ms for 64 MiB with both cores busy
// with other work, where the whole set-aside took 1.7 s and the launch returned in 2-7 ms). Its
// room cannot be made in parts (a blob's length is fixed once written, and growing one rewrites
// it whole), so that step is the main thread's longest possible wait at 64 MiB, about a fifth
// of the whole copy's, which it used to wait for.
//
// Each chunk's step also takes longer the further into the row it copies: it opens both blobs
// afresh, and SQLite reaches byte k of a blob by following its chain of overflow pages from the
// first, fetching each (k / 4096 pages, twice). A 2 MiB step took 5-20 ms at the start of a
// 256 MiB row and 120-175 ms at its end, and the whole copy 14.5 s, with both cores busy (a
// 500 MB row: 38 s, the launch returning in 55 ms). Keeping the blob handles open from one step
// to the next would walk each chain once, but an open handle keeps its read transaction, and
// with it the connection's snapshot, across the commits: the main thread's reads between steps
// would not see other connections' commits, and the next step could not begin once one had
// committed (`SQLITE_BUSY_SNAPSHOT`). Memory-mapping the file would make each fetch cheap, but
// every page the walk touches would count in the process's resident memory. Larger chunks
// further into the row would walk less in all, for a longer wait at each step.
extension StateStore {
    /// How many bytes of the row each transaction of ``setAsideInSteps(_:reason:ifLargerThan:transactions:)``
    /// copies: 2 MiB.
    ///
    /// The main thread waits for at most one such transaction when it needs the connection (an
    /// appearance's query during the copy), so the chunk is the longest it can be kept waiting:
    /// a 2 MiB step of a 64 MiB row took 34-39 ms on average (160 ms at worst) with both cores
    /// busy with other work, a few frames (a step further into a larger row takes longer: see
    /// the steps above). Each step costs, besides its bytes, four lookups by key and a commit
    /// (no sync with ``Options/Synchronous/normal``): noise beside 2 MiB, where a chunk of a few
    /// kilobytes would spend more on commits than on copying, and a chunk of tens of megabytes
    /// would hold the main thread for a second. The memory is the copy's own 1 MiB buffer
    /// (``Connection/copyBlob(column:from:row:of:to:row:offset:count:)``), whatever the chunk.
    static let setAsideChunk = 2 << 20

    /// The start of the `metadata` key of each set-aside under way:
    /// `statestore.setting_aside.<quarantine id>`, whose value names the process making it
    /// (``SetAsideMarker``) and the path.
    static let settingAsidePrefix = "statestore.setting_aside."
    /// The first key past every key that starts with ``settingAsidePrefix`` (`/` follows `.`):
    /// the markers are one range of the table's primary key.
    static let settingAsideEnd = "statestore.setting_aside/"

    /// The marker's key for the quarantine row `quarantineID` being filled.
    static func settingAsideKey(quarantineID: Int64) -> String { settingAsidePrefix + String(quarantineID) }

    /// The SQL that lists the quarantine ids of the set-asides under way, for readers that
    /// leave their partial copies out (`id NOT IN (…)`).
    static let settingAsideIDs =
        "SELECT CAST(substr(key, \(settingAsidePrefix.utf8.count + 1)) AS INTEGER) FROM metadata WHERE key >= '\(settingAsidePrefix)' AND key < '\(settingAsideEnd)'"

    /// How ``setAsideInSteps(_:reason:ifLargerThan:transactions:)`` ended.
    enum SetAsideEnd: Sendable, Equatable {
        /// The row is in quarantine, whole, and gone from `states`.
        case moved
        /// There was no row at the path, or it was not over the limit: nothing was done.
        case nothingToMove
        /// Between two steps the row changed or went (another connection wrote it), or the
        /// partial copy or its marker went (another store removed them): whatever was left of
        /// the copy is gone and the row, if any, is where it was.
        case changed
    }

    /// Where a set-aside in steps has got to: given to ``setAsideObserver`` on the writer's
    /// thread, with the connection free, after the first step (`copied` 0) and after each
    /// chunk.
    struct SetAsideProgress: Sendable {
        var path: RestorationPath
        var quarantineID: Int64
        var copied: Int
        var total: Int
    }

    /// Called between the steps of a set-aside; see ``setAsideObserver``.
    struct SetAsideObserver: Sendable {
        let action: @Sendable (SetAsideProgress) -> Void
    }

    /// A partial copy this store could not remove when its set-aside failed (the failure was a
    /// lock, a full disk): removed by the next set-aside's first transaction. Its marker names
    /// this process, which opens do not touch while it lives.
    struct LeftSetAside: Sendable {
        var key: String
        var target: Int64
        var marker: String
    }

    /// What identifies the row being copied: a row another connection replaced or rewrote
    /// differs in one of them (a change to its bytes alone that keeps all five, which no store
    /// makes, is not seen).
    struct SetAsideSource: Sendable, Equatable {
        var rowid: Int64
        var count: Int
        var checksum: Int64
        var generation: Int64
        var updatedAt: Int64
    }

    /// Moves the row at `path` to quarantine with `reason`, as ``quarantine(_:reason:)`` does, in
    /// short transactions (see the steps above) for the write-behind writer: when it is over
    /// `limit` bytes, else nothing is done. Runs on the write-behind queue (its transactions do
    /// not wait for it). On a failure the partial copy is removed when it can be (else by the
    /// next open) and the error thrown; the row stays where it was. `transactions` is raised by
    /// each transaction committed.
    func setAsideInSteps(
        _ path: RestorationPath, reason: String, ifLargerThan limit: Int, transactions: inout Int
    ) throws(StateStoreError) -> SetAsideEnd {
        struct Started: Sendable {
            var source: SetAsideSource
            var target: Int64
        }
        let marker = SetAsideMarker.thisProcess(path: path)
        let leftovers = leftSetAsides.withLock { $0 }
        let started = try writeBehindTransaction { (transaction) throws(StateStoreError) -> Started? in
            for left in leftovers {
                try transaction.removeSetAside(key: left.key, target: left.target, marker: left.marker)
            }
            guard let source = try transaction.setAsideSource(at: path), source.count > limit else { return nil }
            let target = try transaction.insertQuarantineRow(
                copying: source.rowid, count: source.count, reason: reason)
            try transaction.setMetadata(Self.settingAsideKey(quarantineID: target), to: marker)
            return Started(source: source, target: target)
        }
        transactions += 1
        if !leftovers.isEmpty {
            leftSetAsides.withLock { left in left.removeAll { gone in leftovers.contains { $0.key == gone.key } } }
        }
        guard let started else { return .nothingToMove }
        let (source, target) = (started.source, started.target)
        let key = Self.settingAsideKey(quarantineID: target)
        func progress(_ copied: Int) {
            setAsideObserver.withLock { $0 }?.action(
                SetAsideProgress(path: path, quarantineID: target, copied: copied, total: source.count))
        }
        progress(0)
        var copied = 0
        do {
            while copied < source.count {
                let offset = copied, length = min(Self.setAsideChunk, source.count - copied)
                let intact = try writeBehindTransaction { (transaction) throws(StateStoreError) -> Bool in
                    guard
                        try transaction.setAsideIsIntact(
                            path: path, source: source, target: target, key: key, marker: marker)
                    else { return false }
                    try transaction.connection.copyBlob(
                        column: "bytes", from: "states", row: source.rowid, to: "quarantine", row: target,
                        offset: offset, count: length)
                    return true
                }
                transactions += 1
                guard intact else { return .changed }
                copied += length
                progress(copied)
            }
            let finished = try writeBehindTransaction { (transaction) throws(StateStoreError) -> Bool in
                guard
                    try transaction.setAsideIsIntact(
                        path: path, source: source, target: target, key: key, marker: marker)
                else { return false }
                let remove = try transaction.connection.cached("DELETE FROM states WHERE rowid = ?1")
                remove.bind(source.rowid, at: 1)
                try remove.run()
                try transaction.setMetadata(key, to: nil)
                return true
            }
            transactions += 1
            guard finished else { return .changed }
        } catch {
            // A partial copy that cannot be removed now (the error may be a lock) is removed before
            // the next set-aside, or by the next open after this process.
            do {
                try writeBehindTransaction { (transaction) throws(StateStoreError) in
                    try transaction.removeSetAside(key: key, target: target, marker: marker)
                }
            } catch {
                leftSetAsides.withLock { $0.append(LeftSetAside(key: key, target: target, marker: marker)) }
            }
            throw error
        }
        metrics.quarantines.increment()
        return .moved
    }

    /// Removes the partial copies of the set-asides whose process has ended (killed, or the
    /// power cut) with their markers; returns how many. A set-aside another live process (or
    /// this one, through another store) is making is left alone. Costs one lookup of the
    /// markers' key range when there is none: opening stays the same at any size.
    static func removeAbandonedSetAsides(_ connection: Connection) throws(StateStoreError) -> Int {
        let list = try connection.cached("SELECT key, value FROM metadata WHERE key >= ?1 AND key < ?2")
        var abandoned: [(key: String, value: String)] = []
        do {
            defer { list.reset() }
            list.bind(settingAsidePrefix, at: 1)
            list.bind(settingAsideEnd, at: 2)
            while try list.step() {
                let value = list.string(1)
                if SetAsideMarker.isAbandoned(value) { abandoned.append((list.string(0), value)) }
            }
        }
        guard !abandoned.isEmpty else { return 0 }
        return try connection.writeTransaction { () throws(StateStoreError) -> Int in
            let current = try connection.cached("SELECT value FROM metadata WHERE key = ?1")
            let dropRow = try connection.cached("DELETE FROM quarantine WHERE id = ?1")
            let dropMarker = try connection.cached("DELETE FROM metadata WHERE key = ?1")
            var removed = 0
            for (key, value) in abandoned {
                // Looked at again under the write lock: another store may have finished with it.
                current.bind(key, at: 1)
                let still = try current.step() && current.string(0) == value
                current.reset()
                guard still else { continue }
                if let id = Int64(key.dropFirst(settingAsidePrefix.count)) {
                    dropRow.bind(id, at: 1)
                    try dropRow.run()
                }
                dropMarker.bind(key, at: 1)
                try dropMarker.run()
                removed += 1
            }
            return removed
        }
    }
}

extension StateStore.WriteTransaction {
    /// The identity of the row at `path` (see ``StateStore/SetAsideSource``), or `nil` when
    /// there is none. Reads no bytes: `length()` of a blob is its header's.
    func setAsideSource(at path: RestorationPath) throws(StateStoreError) -> StateStore.SetAsideSource? {
        let find = try connection.cached(
            "SELECT rowid, length(bytes), checksum, generation, updated_at FROM states WHERE path = ?1")
        defer { find.reset() }
        find.bind(path.rawValue, at: 1)
        guard try find.step() else { return nil }
        return StateStore.SetAsideSource(
            rowid: find.int64(0), count: find.int(1), checksum: find.int64(2), generation: find.int64(3),
            updatedAt: find.int64(4))
    }

    /// Whether the set-aside of `source` into quarantine row `target` can go on: its marker
    /// (`key`, holding `marker`) is there, the quarantine row is as long as the source, and the
    /// row at `path` is still `source`. When the marker is there but something else changed,
    /// the partial copy and the marker are removed (committed with the caller's transaction);
    /// when the marker is gone, whoever removed it removed the copy with it, and nothing is
    /// touched (its id may since name another quarantined row).
    func setAsideIsIntact(
        path: RestorationPath, source: StateStore.SetAsideSource, target: Int64, key: String, marker: String
    ) throws(StateStoreError) -> Bool {
        guard try markerHolds(key: key, marker: marker) else { return false }
        let length = try connection.cached("SELECT length(bytes) FROM quarantine WHERE id = ?1")
        length.bind(target, at: 1)
        let room = try length.step() ? length.int(0) : nil
        length.reset()
        if room == source.count, try setAsideSource(at: path) == source { return true }
        try removeSetAside(key: key, target: target, marker: marker)
        return false
    }

    /// Removes quarantine row `target` and its set-aside marker `key`, when the marker still
    /// holds `marker` (see ``setAsideIsIntact(path:source:target:key:marker:)``).
    func removeSetAside(key: String, target: Int64, marker: String) throws(StateStoreError) {
        guard try markerHolds(key: key, marker: marker) else { return }
        let drop = try connection.cached("DELETE FROM quarantine WHERE id = ?1")
        drop.bind(target, at: 1)
        try drop.run()
        try setMetadata(key, to: nil)
    }

    private func markerHolds(key: String, marker: String) throws(StateStoreError) -> Bool {
        let read = try connection.cached("SELECT value FROM metadata WHERE key = ?1")
        defer { read.reset() }
        read.bind(key, at: 1)
        return try read.step() && read.string(0) == marker
    }
}

/// The value of a set-aside's marker: the process making it, by its pid and its start time
/// (`/proc/<pid>/stat`, in clock ticks since boot, so that a later process given the same pid
/// is not taken for it), and the path, for a person reading the table:
/// `pid=4242 started=1234567 path=nav/a`.
enum SetAsideMarker {
    /// The marker this process writes for a set-aside of `path`.
    static func thisProcess(path: RestorationPath) -> String {
        let pid = getpid()
        return "pid=\(pid) started=\(startTime(of: pid) ?? 0) path=\(path.rawValue)"
    }

    /// Whether the process that wrote `marker` has ended (or the marker cannot be read): its
    /// copy will never be finished.
    static func isAbandoned(_ marker: String) -> Bool {
        var pid: Int32?, started: UInt64?
        for field in marker.split(separator: " ") {
            if field.hasPrefix("pid=") { pid = Int32(field.dropFirst(4)) }
            if field.hasPrefix("started=") { started = UInt64(field.dropFirst(8)) }
        }
        guard let pid, pid > 0, let started, let now = startTime(of: pid) else { return true }
        return now != started
    }

    /// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), or `nil` when there is
    /// no such process (or no `/proc`).
    static func startTime(of pid: Int32) -> UInt64? {
        guard let text = ProcFile.readIfPresent("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else {
            return nil
        }
        // After the command's closing parenthesis come fields 3 (the state) onwards.
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }
}
