import Foundation
import Testing

@testable import StateStore

/// The size budget and the retention, at save and at launch.
extension RestorationTests {
    @Test func aStateOverTheSizeBudgetIsReportedAndTheOldOneKept() throws {
        let store = try StateStore(path: database, options: .init(maximumStateSize: 200))
        let (application, _, navigation) = try launch(store)
        let note = try #require(navigation.topViewController as? NoteController)
        note.restorableState.text = "short"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        _ = navigation.popViewController(animated: false)
        note.restorableState.text = String(repeating: "long ", count: 100)
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "short")
        #expect(
            application.restorationCoordinator?.recentErrors.contains {
                if case .store(.stateTooLarge(let path, _, 200)) = $0 { return path == "nav/a" } else { return false }
            } == true)
        // The oversized state holds nothing back: the next controller's save is written.
        let b = try #require(navigation.topViewController as? NoteController)
        b.restorableState.text = "b's turn"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "c"), animated: false)
        #expect(try store.restore(NoteController.State.self, for: "nav/b")?.text == "b's turn")
        #expect(application.restorationCoordinator?.hasPendingWrites == false)
    }

    @Test func statesOlderThanTheRetentionArePrunedAtLaunch() throws {
        do {
            let store = try StateStore(path: database)
            try store.save("old", for: "nav/a")
            try store.save("recent", for: "nav/b")
        }
        try rawSQL(database, "UPDATE states SET updated_at = 0 WHERE path = 'nav/a'")
        let store = try StateStore(path: database, options: .init(retention: .seconds(30 * 86_400)))
        #expect(store.prunedAtOpen == 1)
        #expect(try store.entries().map(\.path.rawValue) == ["nav/b"])
    }

    /// The prune at launch reads what it removes, not every row: the first open with a
    /// retention indexes the states by update time, and every later launch's prune searches
    /// that index. The index is tolerated by every open and check, with or without a retention.
    @Test func retentionPrunesThroughAnIndexOnTheUpdateTime() throws {
        let indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'states' AND sql IS NOT NULL"
        do {
            let store = try StateStore(path: database)
            for index in 0..<50 {
                try store.save("state \(index)", for: try RestorationPath(validating: "nav/s\(index)"))
            }
        }
        #expect(try rawRows(database, indexes).isEmpty)
        try rawSQL(database, "UPDATE states SET updated_at = 0 WHERE path IN ('nav/s3', 'nav/s7')")
        do {
            let store = try StateStore(path: database, options: .init(retention: .seconds(86_400)))
            #expect(store.prunedAtOpen == 2)
        }
        #expect(try rawRows(database, indexes) == [[StateStore.retentionIndex]])
        let plan = try rawRows(
            database,
            "EXPLAIN QUERY PLAN DELETE FROM states WHERE updated_at < 1 AND (key_id IS NULL OR instr(',', ',' || key_id || ',') > 0)"
        )
        #expect(plan.map { $0.last ?? "" } == ["SEARCH states USING INDEX \(StateStore.retentionIndex) (updated_at<?)"])
        try rawSQL(database, "UPDATE states SET updated_at = 0 WHERE path = 'nav/s9'")
        #expect(try StateStore(path: database, options: .init(retention: .seconds(86_400))).prunedAtOpen == 1)
        let plain = try StateStore(path: database)
        #expect(try plain.entries().count == 47)
        #expect(try plain.check().isHealthy)
    }

    /// A file at its page cap (or on a full disk) has no room for the index: the store still
    /// opens and prunes, reading every row, and makes the index at a launch that has room.
    @Test func aRetentionOnAFileWithNoRoomForItsIndexStillOpensAndPrunes() throws {
        do {
            let store = try StateStore(path: database)
            try store.write { (transaction) throws(StateStoreError) in
                for index in 0..<3000 {
                    try transaction.save("state \(index)", for: try RestorationPath(validating: "nav/s\(index)"))
                }
            }
        }
        try rawSQL(database, "UPDATE states SET updated_at = 0 WHERE path = 'nav/s3'; PRAGMA wal_checkpoint(TRUNCATE)")
        let pages = Int(try rawRows(database, "PRAGMA page_count")[0][0])!
        let capped = try StateStore(
            path: database, options: .init(maximumPageCount: pages + 1, retention: .seconds(86_400)))
        #expect(capped.prunedAtOpen == 1)
        #expect(try capped.entries().count == 2999)
        #expect(
            try rawRows(database, "SELECT name FROM sqlite_master WHERE name = '\(StateStore.retentionIndex)'").isEmpty)
        _ = try StateStore(path: database, options: .init(retention: .seconds(86_400)))
        #expect(
            try rawRows(database, "SELECT name FROM sqlite_master WHERE name = '\(StateStore.retentionIndex)'") == [
                [StateStore.retentionIndex]
            ])
    }
}
