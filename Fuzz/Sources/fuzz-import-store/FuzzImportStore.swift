import Foundation
import FuzzSupport
import Glibc
import Synchronization

@testable import StateStore

// `StateStore.importStates(_:replace:)` on a real database file: each input is decoded as
// `statectl import` decodes it (`StateExport(decoding:maximumStateSize:)`), and what decodes is
// imported twice, without and with `replace`, each time into the same known contents (a few clear
// states, no seal recorded).
//
// The store is opened once per process in a temporary folder (in /dev/shm when there is one: a
// real file on tmpfs, so the sync each import makes costs no disk flush) and put back to those
// contents before each import. A store that came out of an import holding what cannot be
// cleared without a key (a sealed row, a seal record) or a quarantined row is closed, its files
// removed, and a new one made. It is capped at `maximumPageCount` pages, so that large imports
// fail the way a full disk fails them and the rollback is exercised too.
//
// Invariants (from StateStore+Import.swift and `WriteTransaction.insert(verbatim:)`):
// - nothing traps;
// - an import that returns wrote every state of the export: each reads back with the same bytes,
//   type name, version, encoding, checksum, key and update time (to the millisecond), and the
//   generation it had, or the stored one + 1 when larger; other rows are as they were, or (with
//   `replace`) gone; the counts it returns are those; nothing was quarantined; a seal is recorded
//   exactly when the export holds sealed states, and it is one of theirs;
// - an import throws only for the page cap (`.diskFull`: a decoded export otherwise always fits
//   this store, whose state size limit the decoder was given and which records no seal), with a
//   description, and leaves every row, the quarantine and the seal record exactly as they were.
private let maximumPageCount = 20

private let folder: String = {
    var shm = stat()
    let onTmpfs = stat("/dev/shm", &shm) == 0 && shm.st_mode & S_IFMT == S_IFDIR && access("/dev/shm", W_OK) == 0
    return temporaryFolder("fuzz-import-store", in: onTmpfs ? "/dev/shm" : NSTemporaryDirectory())
}()
private let current = Mutex<StateStore?>(nil)
private let options = StateStore.Options(maximumPageCount: maximumPageCount, backgroundCheck: .off)

/// The rows every import starts from: clear, generation 1, one of them at the seed exports' path.
private let baseline: [StoredState] = [
    ("root/inbox", #"{"unread":1}"#), ("root/nav", "[1,2]"), ("a", "{}"), ("keep/me", #""kept""#),
].map { path, json in
    let bytes = Data(json.utf8)
    return StoredState(
        path: RestorationPath(stringLiteral: path), typeName: "Fuzz.Baseline", version: 1, generation: 1,
        encoding: .json, checksum: StoredState.checksum(of: bytes),
        updatedAt: Date(timeIntervalSince1970: 1_700_000_000), bytes: bytes)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let export: StateExport
    do {
        export = try StateExport(decoding: Data(bytes: start, count: count), maximumStateSize: options.maximumStateSize)
    } catch {
        return 0
    }
    for replace in [false, true] {
        let store = reset()
        check(export, replace: replace, into: store)
    }
    return 0
}

/// One row as the store lists it, strings as their bytes.
private struct Row: Equatable {
    var path: [UInt8]
    var typeName: [UInt8]
    var version: Int
    var generation: Int64
    var encoding: StateEncoding
    var checksum: Int64
    var updatedAt: Int64
    var bytes: Data
    var keyID: String?

    init(_ state: StoredState) {
        path = Array(state.path.rawValue.utf8)
        typeName = Array(state.typeName.utf8)
        version = state.version
        generation = state.generation
        encoding = state.encoding
        checksum = state.checksum
        updatedAt = state.updatedAt.storedMilliseconds
        bytes = state.bytes
        keyID = state.keyID
    }
}

/// Everything an import may change: the rows, the rows with invalid paths, the quarantine and
/// the seal record (as stored, and as the store holds it).
private struct Listing: Equatable {
    var rows: [Row]
    var invalidRows: [StateStore.InvalidRow]
    var quarantined: [StateStore.QuarantinedState]
    var sealRecord: String?
    var sealedWith: String?

    init(_ store: StateStore) {
        do {
            rows = try store.states().map(Row.init)
            invalidRows = try store.invalidRows()
            quarantined = try store.quarantinedStates()
            sealRecord = try store.metadata(StateStore.sealedWithKey)
            sealedWith = store.sealedWith
        } catch {
            fatalError("cannot list the store: \(error)")
        }
    }
}

private func check(_ export: StateExport, replace: Bool, into store: StateStore) {
    let before = Listing(store)
    let result: StateStore.ImportResult
    do {
        result = try store.importStates(export, replace: replace)
    } catch {
        invariant(!error.description.isEmpty, "an import failed without a description")
        // A decoded export fits this store (same state size limit, valid paths, checksums,
        // versions and generations; no seal recorded): only the page cap may refuse it.
        guard case .diskFull = error else {
            invariant(false, "the store refused a decoded export: \(error) (replace: \(replace))")
            return
        }
        let after = Listing(store)
        invariant(after == before, "a failed import (\(error)) changed the store (replace: \(replace))")
        return
    }
    let after = Listing(store)
    var expected: [[UInt8]: Row] = [:]
    if !replace { for row in before.rows { expected[row.path] = row } }
    var replaced = 0
    for state in export.states {
        var row = Row(state)
        if let old = before.rows.first(where: { $0.path == row.path }) {
            row.generation = max(state.generation, old.generation + 1)
            replaced += 1
        }
        expected[row.path] = row
    }
    let rows = Dictionary(after.rows.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
    invariant(rows.count == after.rows.count, "the store lists a path twice")
    for (path, row) in expected {
        guard let stored = rows[path] else {
            invariant(false, "\(String(decoding: path, as: UTF8.self).debugDescription) is missing after an import")
            continue
        }
        invariant(
            stored == row,
            "\(String(decoding: path, as: UTF8.self).debugDescription) reads back as \(stored), not \(row) (replace: \(replace))"
        )
    }
    invariant(rows.count == expected.count, "the import left \(rows.count) rows, not \(expected.count)")
    let exported = Set(export.states.map { Array($0.path.rawValue.utf8) })
    let removed = replace ? before.rows.filter { !exported.contains($0.path) }.count : 0
    invariant(
        result == .init(created: export.states.count - replaced, replaced: replaced, removed: removed),
        "the import says \(result), not \(export.states.count - replaced) created, \(replaced) replaced, \(removed) removed"
    )
    invariant(after.invalidRows == before.invalidRows, "the import changed the rows with invalid paths")
    invariant(after.quarantined == before.quarantined, "the import quarantined a row")
    var sealedBy: [String: Int] = [:]
    for state in export.states { if let keyID = state.keyID { sealedBy[keyID, default: 0] += 1 } }
    if let recorded = before.sealRecord {
        invariant(after.sealRecord == recorded, "the import changed the seal record")
    } else if let most = sealedBy.values.max() {
        invariant(
            after.sealRecord.map { sealedBy[$0] == most } ?? false,
            "the import recorded the seal \(after.sealRecord ?? "nil"), not one of the keys most states have")
    } else {
        invariant(after.sealRecord == nil, "an import of clear states recorded a seal")
    }
    invariant(after.sealedWith == after.sealRecord, "the store's seal is not the one recorded")
}

/// The store, holding the baseline rows and nothing else: the one open when it can be cleared,
/// else a new one.
private func reset() -> StateStore {
    current.withLock { (store: inout StateStore?) -> StateStore in
        if let open = store {
            do {
                if open.sealedWith == nil, try open.quarantinedStates().isEmpty,
                    try open.states().allSatisfy({ $0.keyID == nil })
                {
                    try open.write { (transaction) throws(StateStoreError) in
                        try transaction.removeStates(notIn: [])
                        for state in baseline { try transaction.insert(verbatim: state) }
                    }
                    return open
                }
            } catch {
                fatalError("cannot reset the store: \(error)")
            }
            store = nil
        }
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(folder + "/state.sqlite" + suffix) }
        do {
            let made = try StateStore(path: folder + "/state.sqlite", options: options)
            try made.write { (transaction) throws(StateStoreError) in
                for state in baseline { try transaction.insert(verbatim: state) }
            }
            store = made
            return made
        } catch {
            fatalError("cannot make a store in \(folder): \(error)")
        }
    }
}
