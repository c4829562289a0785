import Foundation
import Synchronization
import Testing

@testable import StateStore

/// The integrity check that runs after open: a damaged page does not stop the open, and is
/// reported (status, logger, the coordinator's error handler); releasing the store stops it.
@Suite("Background integrity check")
struct BackgroundCheckTests {
    let folder = TemporaryFolder()
    var path: String { folder.file("state.sqlite") }

    /// How long a test waits for a check to end. It runs at nice 19 in the idle I/O class, so a
    /// machine busy with other work (a build beside the suite) can hold it back for minutes; a
    /// check that ends returns at once.
    static let checkTimeout: Duration = .seconds(600)

    /// Writes `count` states of `size` bytes in one transaction and closes the store (so the
    /// WAL is checkpointed into the one file).
    func populate(_ count: Int, size: Int = 900) throws {
        let store = try StateStore(path: path, options: .init(backgroundCheck: .off))
        try store.write { (transaction) throws(StateStoreError) in
            for index in 0..<count {
                try transaction.save(
                    "\(index)" + String(repeating: "x", count: size),
                    for: try RestorationPath(validating: "root/item\(index)"))
            }
        }
        _ = consume store
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// About 64 MB, its pages evicted from the page cache: a full check reads for a while,
    /// from disk.
    func populateLargeAndEvict() throws {
        try populate(16_000, size: 4000)
        let descriptor = open(path, O_RDONLY)
        #expect(descriptor >= 0)
        #expect(posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED) == 0)
        close(descriptor)
    }

    /// Overwrites the root page of the states table (an interior b-tree page once the table
    /// spans several leaves) with garbage; returns the file's bytes after.
    func damageStatesRootPage() throws -> [UInt8] {
        let root: Int64
        let pageSize: Int64
        do {
            let connection = try Connection(path: path, options: .init(readOnly: true, create: false))
            root = try #require(try connection.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'states'"))
            pageSize = try #require(try connection.scalarInt("PRAGMA page_size"))
            // An interior page (0x05), not a leaf: the table spans several pages.
            let bytes = fileBytes(path)
            #expect(bytes[Int((root - 1) * pageSize)] == 0x05)
        }
        #expect(root > 1)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        handle.write(Data((0..<Int(pageSize)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
        try handle.close()
        return fileBytes(path)
    }

    @Test func aDamagedPageDoesNotStopTheOpenAndTheCheckReportsIt() throws {
        try populate(300)
        let damaged = try damageStatesRootPage()
        let log = RecordingLogHandler()
        // The default options: the header-level open check, the quick check after open.
        let store = try StateStore(path: path, options: .init(logger: log.logger()))
        #expect(store.options.openCheck == .header)
        #expect(store.options.backgroundCheck == .quick())
        let status = store.waitForBackgroundCheck(timeout: Self.checkTimeout)
        guard case .damaged(let error) = status, case .corrupt(let file, let failure) = error else {
            Issue.record("expected damage, got \(status)")
            return
        }
        #expect(file == path)
        #expect(failure.resultCode == .corrupt)
        #expect(failure.sql == "PRAGMA quick_check(10)")
        #expect(!failure.message.isEmpty && failure.message != "ok")
        let record = try #require(log.records.first { $0.message == "integrity check found damage" })
        #expect(record.level == .info)
        #expect(record.metadata["statestore.database"] == path)
        #expect(record.metadata["statestore.error"] == error.description)
        // The store stays open; a read through the damaged page is refused with the same typed error.
        #expect { try store.restore(String.self, for: "root/item1") } throws: { error in
            guard case StateStoreError.corrupt(let file, _) = error else { return false }
            return file == path
        }
        _ = consume store
        #expect(FileSnapshot(path) == FileSnapshot(bytes: damaged))
    }

    /// The schema page damaged after the store opened and before its check: the check's own
    /// open meets it, and it is damage, as when the check's pragma meets it.
    @Test func damageTheCheckMeetsAsItOpensIsDamage() throws {
        try populate(300)
        let log = RecordingLogHandler()
        let store = try StateStore(
            path: path, options: .init(logger: log.logger(), backgroundCheck: .quick(after: .milliseconds(200))))
        // Page 1's b-tree header starts at byte 100: 0 is no page type.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 100)
        handle.write(Data([0]))
        try handle.close()
        let status = store.waitForBackgroundCheck(timeout: Self.checkTimeout)
        guard case .damaged(.corrupt(let file, _)) = status else {
            Issue.record("expected damage, got \(status)")
            return
        }
        #expect(file == path)
        #expect(log.records.contains { $0.message == "integrity check found damage" })
    }

    @Test func theFullCheckNamesItsPragma() throws {
        try populate(300)
        _ = try damageStatesRootPage()
        let store = try StateStore(path: path, options: .init(backgroundCheck: .full(after: .zero)))
        guard case .damaged(.corrupt(_, let failure)) = store.waitForBackgroundCheck(timeout: Self.checkTimeout) else {
            Issue.record("expected damage, got \(store.backgroundCheckStatus)")
            return
        }
        #expect(failure.sql == "PRAGMA integrity_check(10)")
    }

    @Test func anIntactDatabaseReportsNothing() throws {
        try populate(300)
        let log = RecordingLogHandler()
        let store = try StateStore(
            path: path, options: .init(logger: log.logger(), backgroundCheck: .quick(after: .zero)))
        try store.save("more", for: "root/after")
        guard case .passed = store.waitForBackgroundCheck(timeout: Self.checkTimeout) else {
            Issue.record("expected a pass, got \(store.backgroundCheckStatus)")
            return
        }
        #expect(log.records.contains { $0.message == "integrity check passed" && $0.level == .debug })
        #expect(
            !log.records.contains {
                $0.message.hasPrefix("integrity check found") || $0.message.hasPrefix("integrity check failed")
            })
    }

    @Test func offRunsNothingAndAStoreInMemoryChecksNothing() throws {
        try populate(10)
        let store = try StateStore(path: path, options: .init(backgroundCheck: .off))
        #expect(store.backgroundCheckStatus == .off)
        #expect(store.backgroundChecker == nil)
        #expect(try StateStore.inMemory().backgroundCheckStatus == .off)
    }

    @Test func noThreadIsMadeBeforeTheDelayAndAReleaseBeforeItEndsTheCheck() throws {
        try populate(10)
        var store: StateStore? = try StateStore(
            path: path, options: .init(backgroundCheck: .quick(after: .seconds(Int64.max))))
        let checker = try #require(store?.backgroundChecker)
        // Opening made no thread: the check is a timer until the delay passes.
        usleep(50_000)
        #expect(checker.threadID == nil)
        #expect(checker.status == .running)
        store = nil
        #expect(checker.status == .cancelled)
        #expect(checker.wait(timeout: .seconds(5)) == .cancelled)
        #expect(checker.threadID == nil)
    }

    @Test func theThreadIsMadeWhenTheDelayHasPassed() throws {
        try populate(10)
        let store = try StateStore(path: path, options: .init(backgroundCheck: .quick(after: .seconds(2))))
        let checker = try #require(store.backgroundChecker)
        #expect(checker.threadID == nil)
        guard case .passed = store.waitForBackgroundCheck(timeout: Self.checkTimeout) else {
            Issue.record("expected a pass, got \(store.backgroundCheckStatus)")
            return
        }
        #expect(checker.threadID != nil)
    }

    /// The check is started by the write-behind thread once the delay has passed: a stream of
    /// write-behind jobs that never lets that thread sleep must not put it off.
    @Test func aWriterKeptBusyStillStartsTheCheckOnTime() throws {
        try populate(10)
        let store = try StateStore(path: path, options: .init(backgroundCheck: .quick(after: .milliseconds(100))))
        let stop = Atomic<Bool>(false)
        let submitted = Atomic<Int>(0)
        let feeder = Thread {
            // Jobs handed over faster than the thread drains them: a wake-up is always waiting.
            while !stop.load(ordering: .relaxed) {
                store.submitWriteBehind { usleep(50) }
                submitted.add(1, ordering: .relaxed)
                usleep(10)
            }
        }
        feeder.start()
        defer { stop.store(true, ordering: .relaxed) }
        let status = store.waitForBackgroundCheck(timeout: Self.checkTimeout)
        stop.store(true, ordering: .relaxed)
        guard case .passed = status else {
            Issue.record(
                "expected the check to pass while the writer is busy, got \(status) after \(submitted.load(ordering: .relaxed)) jobs"
            )
            return
        }
        #expect(submitted.load(ordering: .relaxed) > 0)
    }

    @Test @MainActor func damageReachesTheCoordinatorsErrorHandler() async throws {
        try populate(300)
        _ = try damageStatesRootPage()
        let store = try StateStore(path: path, options: .init(backgroundCheck: .quick(after: .milliseconds(50))))
        let coordinator = RestorationCoordinator(store: store)
        var received: [RestorationError] = []
        coordinator.errorHandler = { received.append($0) }
        // Waiting here blocks the main actor; the report is delivered at its next turn.
        guard case .damaged(let error) = store.waitForBackgroundCheck(timeout: Self.checkTimeout) else {
            Issue.record("expected damage, got \(store.backgroundCheckStatus)")
            return
        }
        for _ in 0..<500 where received.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(received == [.store(error)])
        // A coordinator made after the check ended hears of it too.
        let late = RestorationCoordinator(store: store)
        var lateReceived: [RestorationError] = []
        late.errorHandler = { lateReceived.append($0) }
        for _ in 0..<500 where lateReceived.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(lateReceived == [.store(error)])
    }

    /// While the check holds its snapshot, the store's commits make no attempt to checkpoint
    /// (one that started over an empty WAL can copy nothing, and each attempt past the
    /// 1,000-page mark cost a save many times its time); the first commit after it lets go
    /// makes them again.
    @Test func commitsMakeNoCheckpointAttemptWhileTheCheckHoldsItsSnapshot() throws {
        try populateLargeAndEvict()
        let store = try StateStore(path: path, options: .init(backgroundCheck: .full(after: .zero)))
        let checker = try #require(store.backgroundChecker)
        func autoCheckpoint() -> Int64? { store.connection.withLock { try? $0.scalarInt("PRAGMA wal_autocheckpoint") } }
        var polls = 0
        while !checker.isHoldingSnapshot.load(ordering: .relaxed), !checker.status.isFinished, polls < 20_000 {
            usleep(500)
            polls += 1
        }
        try store.save("during", for: "root/during")
        let during = autoCheckpoint()
        let stillReading = checker.isHoldingSnapshot.load(ordering: .relaxed)
        #expect(stillReading, "the check should still hold its snapshot")
        if stillReading { #expect(during == 0) }
        guard case .passed = store.waitForBackgroundCheck(timeout: Self.checkTimeout) else {
            Issue.record("expected a pass, got \(store.backgroundCheckStatus)")
            return
        }
        try store.save("after", for: "root/after")
        #expect(autoCheckpoint() == 1000)
    }

    @Test func releasingTheStoreDuringTheCheckInterruptsItAndEndsItsThread() throws {
        try populateLargeAndEvict()
        var store: StateStore? = try StateStore(path: path, options: .init(backgroundCheck: .full(after: .zero)))
        let checker = try #require(store?.backgroundChecker)
        var polls = 0
        while !checker.isReading, !checker.status.isFinished, polls < 20_000 {
            usleep(500)
            polls += 1
        }
        #expect(checker.isReading, "the check should be reading when the store is released")
        let thread = try #require(checker.threadID)
        #expect(FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)"))
        // The check's thread runs at nice 19 (field 19 of its stat line, after the command's parenthesis).
        let stat = try String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        #expect(fields[16] == "19")
        store = nil
        // The release interrupted the statement (it did not finish) and joined the thread.
        #expect(checker.status == .cancelled)
        #expect(!checker.isReading)
        // The join returns when the kernel clears the thread's id; its /proc entry goes a moment later.
        #expect(MonitorThreads.gone(thread))
        // Nothing was left open: the file can be opened for writing and its WAL removed at close.
        do { try StateStore(path: path, options: .init(backgroundCheck: .off)).save("after", for: "root/after") }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aFilePutInTheStoresPlaceIsNotCheckedForIt() throws {
        // Another database, damaged, to be put where the store's file was.
        let other = folder.file("other.sqlite")
        try populate(300)
        _ = try damageStatesRootPage()
        try FileManager.default.moveItem(atPath: path, toPath: other)
        try populate(300)
        // The delay leaves the moves below ample time, however busy the machine.
        let store = try StateStore(path: path, options: .init(backgroundCheck: .quick(after: .seconds(10))))
        let lock = Lock<[StateStoreError]>([])
        store.observeBackgroundCheck { error in lock.withLock { $0.append(error) } }
        // Before the check begins: the store's file moves away and the damaged one takes its name.
        try FileManager.default.moveItem(atPath: path, toPath: folder.file("moved.sqlite"))
        try FileManager.default.moveItem(atPath: other, toPath: path)
        let status = store.waitForBackgroundCheck(timeout: Self.checkTimeout)
        // Not the other file's damage: the path no longer names the file the store opened.
        #expect(status == .failed(.fileReplaced(file: path)), "\(status)")
        #expect(lock.withLock { $0 } == [.fileReplaced(file: path)])
        #expect(
            StateStoreError.fileReplaced(file: path).description.contains("moved, replaced or removed after the open"))
        // The store goes on with the file it opened.
        try store.save("after", for: "root/after")
        #expect(try store.restore(String.self, for: "root/after") == "after")
    }

    @Test func aFileRemovedBeforeTheCheckIsReportedAsSuch() throws {
        try populate(30)
        let store = try StateStore(path: path, options: .init(backgroundCheck: .quick(after: .seconds(10))))
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        #expect(store.waitForBackgroundCheck(timeout: Self.checkTimeout) == .failed(.fileReplaced(file: path)))
    }

    @Test func aRelativePathIsCheckedAsTheFileItNamedAtOpenAfterAChangeOfFolder() throws {
        // The same name in two folders: the store's file, intact, and another one, damaged.
        let first = folder.file("first"), second = folder.file("second")
        for place in [first, second] {
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
        }
        try populate(300)
        _ = try damageStatesRootPage()
        try FileManager.default.moveItem(atPath: path, toPath: second + "/state.sqlite")
        try populate(300)
        try FileManager.default.moveItem(atPath: path, toPath: first + "/state.sqlite")
        // A process that opens "state.sqlite" in the first folder, then moves to the second.
        let (status, output) = try runProgram(
            try builtProduct("statestore-worker"), ["check-after-chdir", first, second, "state.sqlite"])
        #expect(status == 0, "\(output)")
        #expect(output.hasPrefix("status=passed"), "\(output)")
    }

    @Test func anEndedCheckKeepsNoObserver() throws {
        final class Token: Sendable {}
        try populate(30)
        // Observed while the check waits for its start: kept until it ends (here, cancelled by
        // the store's release), then let go, though the checker itself lives on.
        var waiting: StateStore? = try StateStore(
            path: path, options: .init(backgroundCheck: .quick(after: .seconds(Int64.max))))
        let checker = try #require(waiting?.backgroundChecker)
        weak var early: Token?
        do {
            let token = Token()
            early = token
            waiting?.observeBackgroundCheck { _ in _ = token }
        }
        #expect(early != nil)
        waiting = nil
        #expect(checker.status == .cancelled)
        #expect(early == nil)
        // Observed after a check passed: nothing is kept (a coordinator made later adds none).
        let store = try StateStore(path: path, options: .init(backgroundCheck: .quick(after: .zero)))
        guard case .passed = store.waitForBackgroundCheck(timeout: Self.checkTimeout) else {
            Issue.record("expected a pass, got \(store.backgroundCheckStatus)")
            return
        }
        weak var late: Token?
        do {
            let token = Token()
            late = token
            store.observeBackgroundCheck { _ in _ = token }
        }
        #expect(late == nil)
    }

    @Test func damageFoundAfterOpenIsMovedAsideAsItsMessageSays() throws {
        try populate(300)
        _ = try damageStatesRootPage()
        let status = try StateStore(path: path).waitForBackgroundCheck(timeout: Self.checkTimeout)
        guard case .damaged(let error) = status else {
            Issue.record("expected damage, got \(status)")
            return
        }
        // What the message tells the app to do, done.
        #expect(error.description.contains("StateStore.openOrRecover with openCheck: .quick"))
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        let moved = try #require(recovery)
        #expect(FileManager.default.fileExists(atPath: moved.movedTo))
        // The table's root page leads to every row: none can be reached.
        #expect(moved.salvage.states == 0)
        #expect(moved.salvage.unreadableStretches == 1)
        #expect(try store.restore(String.self, for: "root/item1") == nil)
    }

    /// Makes the first entry of the first leaf of the states table's path index name another
    /// row (its rowid's last byte changed): every page still reads, so `quick_check` passes,
    /// and only `integrity_check`, which compares each index with its table, finds it.
    func misdirectAnIndexEntry() throws {
        let pageSize: Int
        var page: Int
        do {
            let connection = try Connection(path: path, options: .init(readOnly: true, create: false))
            page = Int(
                try #require(
                    try connection.scalarInt(
                        "SELECT rootpage FROM sqlite_schema WHERE name = 'sqlite_autoindex_states_1'")))
            pageSize = Int(try #require(try connection.scalarInt("PRAGMA page_size")))
        }
        var bytes = fileBytes(path)
        func varint(_ at: inout Int) -> Int {
            var value = 0
            for _ in 0..<8 {
                let byte = Int(bytes[at])
                at += 1
                value = value << 7 | (byte & 0x7F)
                if byte < 0x80 { return value }
            }
            value = value << 8 | Int(bytes[at])
            at += 1
            return value
        }
        // Down the leftmost children of interior index pages (0x02) to a leaf (0x0A).
        while bytes[(page - 1) * pageSize] == 0x02 {
            let start = (page - 1) * pageSize
            let cell = start + (Int(bytes[start + 12]) << 8 | Int(bytes[start + 13]))
            page = bytes[cell..<cell + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        let start = (page - 1) * pageSize
        #expect(bytes[start] == 0x0A)
        let cells = Int(bytes[start + 3]) << 8 | Int(bytes[start + 4])
        // The first cell whose rowid has bytes of its own (rowids 0 and 1 are in the type).
        for index in 0..<cells {
            var at = start + (Int(bytes[start + 8 + 2 * index]) << 8 | Int(bytes[start + 9 + 2 * index]))
            _ = varint(&at)  // the payload's size
            let recordStart = at
            let headerSize = varint(&at)
            let pathType = varint(&at), rowidType = varint(&at)
            guard pathType >= 13, pathType % 2 == 1, let rowidSize = [1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8][rowidType]
            else { continue }
            bytes[recordStart + headerSize + (pathType - 13) / 2 + rowidSize - 1] ^= 0x01
            break
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Damage only the full check finds: its message sends the app to the open check that
    /// finds it, and that moves the file aside.
    @Test func indexDamageTheFullCheckFindsIsMovedAsideAsItsMessageSays() throws {
        try populate(300)
        try misdirectAnIndexEntry()
        let quick = try StateStore(path: path, options: .init(backgroundCheck: .quick(after: .zero)))
            .waitForBackgroundCheck(timeout: Self.checkTimeout)
        guard case .passed = quick else {
            Issue.record("quick_check does not compare indexes with tables; got \(quick)")
            return
        }
        let status = try StateStore(path: path, options: .init(backgroundCheck: .full(after: .zero)))
            .waitForBackgroundCheck(timeout: Self.checkTimeout)
        guard case .damaged(let error) = status else {
            Issue.record("expected damage, got \(status)")
            return
        }
        #expect(error.description.contains("StateStore.openOrRecover with openCheck: .full"), "\(error)")
        let (unmoved, none) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        #expect(none == nil)
        _ = consume unmoved
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .full))
        let moved = try #require(recovery).movedTo
        #expect(FileManager.default.fileExists(atPath: moved))
        // The table itself was intact: every state comes back, under a sound index.
        #expect(try store.restore(String.self, for: "root/item1") == "1" + String(repeating: "x", count: 900))
        #expect(try store.entries().count == 300)
        #expect(try store.check().integrity == ["ok"])
    }

    @Test func checkNamesTheDamageWhenTheRowsCannotBeRead() throws {
        try populate(300)
        let damaged = try damageStatesRootPage()
        let store = try StateStore(path: path, options: .init(readOnly: true, backgroundCheck: .off))
        #expect { try store.check() } throws: { error in
            guard case StateStoreError.corrupt(let file, let failure) = error else { return false }
            // integrity_check's findings (the damaged tree and its pages), not only "malformed".
            return file == path && failure.sql == "PRAGMA integrity_check(100)"
                && failure.message.contains("*** in database main ***") && failure.message.contains("Page")
        }
        _ = consume store
        #expect(FileSnapshot(path) == FileSnapshot(bytes: damaged))
        // `statectl check` says the same, exit 1, the file unchanged.
        let result = try CLI.run(["check", "--db", path])
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stdout.contains("Problems found:") && result.stdout.contains("*** in database main ***"), "\(result)"
        )
        #expect(FileSnapshot(path) == FileSnapshot(bytes: damaged))
    }
}
