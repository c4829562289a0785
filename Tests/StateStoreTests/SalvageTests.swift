import Foundation
import StateStore
import StateStoreCrypto
import Testing

/// `StateStore.openOrRecover` on real damaged files: the fresh database holds every state that
/// survived, exactly, and nothing damaged; the moved file is not changed.
@Suite("Salvage: what a recovery keeps")
struct SalvageTests {
    let folder = TemporaryFolder()
    var path: String { folder.file("state.sqlite") }
    static let pageSize = 4096

    /// The text of state `index`: its marker (`state-12-`), found once in the file, then 900 bytes.
    static func text(_ index: Int) -> String { "state-\(index)-" + String(repeating: "x", count: 900) }

    /// A closed database (one file, no WAL) of `count` states, an archive, the app's metadata and
    /// a quarantined row.
    func populate(_ count: Int, options: StateStore.Options = .init()) throws {
        let store = try StateStore(path: path, options: options)
        try store.write { (transaction) throws(StateStoreError) in
            for index in 0..<count {
                try transaction.save(Self.text(index), for: try RestorationPath(validating: "root/item\(index)"))
            }
            try transaction.setHierarchyArchive(Data(#"{"archived":"main"}"#.utf8))
            try transaction.setMetadata("app.onboarding", to: "done")
        }
        try store.save("not a number", for: "root/count")
        #expect(try store.quarantine("root/count", reason: "it is not a count"))
        #expect(try store.quarantinedStates().count == 1)
    }

    /// The pages (from 0) holding each state's marker in `bytes`, by state; a marker found
    /// twice fails the test.
    static func markerPages(in bytes: [UInt8]) throws -> [Int: Int] {
        let prefix = Array("state-".utf8)
        var pages: [Int: Int] = [:]
        var offset = 0
        while offset + prefix.count < bytes.count {
            defer { offset += 1 }
            guard bytes[offset] == prefix[0], Array(bytes[offset..<(offset + prefix.count)]) == prefix else { continue }
            var end = offset + prefix.count
            var index = 0
            while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) {
                index = index * 10 + Int(bytes[end] - UInt8(ascii: "0"))
                end += 1
            }
            guard end > offset + prefix.count, end < bytes.count, bytes[end] == UInt8(ascii: "-") else { continue }
            try #require(pages[index] == nil, "state \(index)'s marker is in the file twice")
            pages[index] = offset / pageSize
        }
        return pages
    }

    @Test func aDamagedFileComesBackWithEveryStateThatSurvivedAndNothingDamaged() throws {
        let count = 400
        try populate(count)
        var bytes = fileBytes(path)
        // Two leaves of the states table overwritten, far apart, and one state's bytes changed
        // where its page still reads.
        let pages = try Self.markerPages(in: bytes)
        try #require(pages.count == count)
        let damagedPages: Set<Int> = [try #require(pages[100]), try #require(pages[300])]
        let lost = Set(pages.filter { damagedPages.contains($0.value) }.keys)
        for page in damagedPages {
            for offset in (page * Self.pageSize)..<((page + 1) * Self.pageSize) {
                bytes[offset] = UInt8(truncatingIfNeeded: offset &* 31)
            }
        }
        let changed = 200
        #expect(!lost.contains(changed))
        let markerEnd = try Self.offset(of: "state-\(changed)-", in: bytes) + 20
        bytes[markerEnd] = UInt8(ascii: "y")
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        let moved = try #require(recovery)
        guard case .corrupt = moved.reason else {
            Issue.record("reason \(moved.reason)")
            return
        }
        #expect(FileSnapshot(moved.movedTo) == FileSnapshot(bytes: bytes))
        let salvage = moved.salvage
        #expect(salvage.error == nil)
        #expect(salvage.unreadableStretches == 2)
        #expect(salvage.statesLeftBehind == 1)
        // Every state of an intact page but the one whose bytes changed.
        #expect(salvage.states == count - lost.count - 1)
        #expect(lost.count >= 4, "a leaf holds several 1 KB states: \(lost)")
        for index in 0..<count {
            let restored = try store.restore(String.self, for: try RestorationPath(validating: "root/item\(index)"))
            if lost.contains(index) || index == changed {
                #expect(restored == nil, "state \(index)")
            } else {
                #expect(restored == Self.text(index), "state \(index)")
            }
        }
        #expect(salvage.archives == 1)
        #expect(try store.hierarchyArchive() == Data(#"{"archived":"main"}"#.utf8))
        #expect(try store.metadata("app.onboarding") == "done")
        #expect(salvage.quarantined == 1)
        #expect(try store.quarantinedStates().map(\.path) == ["root/count"])
        let health = try store.check()
        #expect(health.integrity == ["ok"] && health.checksumMismatches.isEmpty && health.stateCount == salvage.states)
        // The fresh database is on storage and takes saves.
        try store.save("after", for: "root/item100")
        #expect(try store.restore(String.self, for: "root/item100") == "after")
    }

    @Test func aLostWALBringsBackWhatTheFileHeld() throws {
        try populate(20)
        // A live store adds a state only its WAL holds; a copy takes the file and its index, not the WAL.
        let live = try StateStore(path: path)
        try live.save("only in the WAL", for: "root/item3")
        let copy = folder.file("copy.sqlite")
        for suffix in ["", "-shm"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix) }
        let (store, recovery) = try StateStore.openOrRecover(path: copy)
        let moved = try #require(recovery)
        guard case .walMissing = moved.reason else {
            Issue.record("reason \(moved.reason)")
            return
        }
        #expect(moved.salvage.states == 20)
        #expect(moved.salvage.unreadableStretches == 0)
        #expect(try store.restore(String.self, for: "root/item3") == Self.text(3))
        #expect(try store.restore(String.self, for: "root/item19") == Self.text(19))
        #expect(try store.hierarchyArchive() == Data(#"{"archived":"main"}"#.utf8))
        withExtendedLifetime(live) {}
    }

    @Test func sealedStatesComeBackSealedWithTheirKeyRecorded() throws {
        let keyring = StateKeyring(try testKey(9))
        try populate(60, options: .init(sealer: keyring))
        var bytes = fileBytes(path)
        // Sealed bytes hide the markers: the last page of the file holds states' rows.
        let last = bytes.count / Self.pageSize - 1
        for offset in (last * Self.pageSize)..<bytes.count { bytes[offset] = 0xA5 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (store, recovery) = try StateStore.openOrRecover(
            path: path, options: .init(openCheck: .quick, sealer: keyring))
        let salvage = try #require(recovery).salvage
        #expect(salvage.error == nil)
        #expect(salvage.states > 0)
        var found = 0
        for index in 0..<60 {
            let path = try RestorationPath(validating: "root/item\(index)")
            guard let state = try store.state(at: path) else { continue }
            #expect(state.keyID == keyring.keyID)
            #expect(try store.restore(String.self, for: path) == Self.text(index))
            found += 1
        }
        #expect(found == salvage.states)
        #expect(try store.metadata("statestore.sealed_with") == keyring.keyID)
        // Without the key, the fresh database is the sealed one it was: nothing clear is written into it.
        #expect(throws: StateStoreError.self) { try StateStore(path: path).save("clear", for: "root/new") }
    }

    @Test func aFileThatIsNotADatabaseGivesAnEmptyFreshOneAndSaysWhy() throws {
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: path))
        let (store, recovery) = try StateStore.openOrRecover(path: path)
        let salvage = try #require(recovery).salvage
        #expect(salvage.states == 0)
        #expect(salvage.error != nil)
        #expect(try store.entries().isEmpty)
        try store.save("fresh", for: "root")
        #expect(try store.check().isHealthy)
    }

    @Test func intactPagesBetweenDamagedOnesComeBack() throws {
        let count = 400
        try populate(count)
        var bytes = fileBytes(path)
        let pages = try Self.markerPages(in: bytes)
        // The leaves from state 100's to state s + 40's (s the first state on 100's leaf), all
        // but the one holding state s + 20: a search that doubles its step from s (s + 1, s + 3,
        // …, s + 31, s + 63) would find nothing readable until s + 63, past the intact leaf.
        let first = try #require(pages[100])
        let start = try #require(pages.filter { $0.value == first }.keys.min())
        let island = try #require(pages[start + 20])
        let damagedPages = Set(first...(try #require(pages[start + 40]))).subtracting([island])
        let lost = Set(pages.filter { damagedPages.contains($0.value) }.keys)
        let between = Set(pages.filter { $0.value == island }.keys)
        try #require(between.count >= 2 && !between.contains(start + 15) && !between.contains(start + 31))
        for page in damagedPages {
            for offset in (page * Self.pageSize)..<((page + 1) * Self.pageSize) { bytes[offset] = 0 }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        let salvage = try #require(recovery).salvage
        #expect(salvage.states == count - lost.count, "\(salvage)")
        for index in between {
            #expect(
                try store.restore(String.self, for: try RestorationPath(validating: "root/item\(index)"))
                    == Self.text(index))
        }
    }

    @Test func aStateWhoseOverflowPageIsDamagedStaysBehindAlone() throws {
        // The first row holds a state too large for its leaf: its bytes go on two overflow
        // pages, and the marker lies on the first, whose damaged link to the second fails the read.
        let large = String(repeating: "a", count: 4200) + "overflow-marker" + String(repeating: "b", count: 4800)
        do {
            let store = try StateStore(path: path)
            try store.write { (transaction) throws(StateStoreError) in
                try transaction.save(large, for: "big/first")
                for index in 0..<20 {
                    try transaction.save(Self.text(index), for: try RestorationPath(validating: "root/item\(index)"))
                }
            }
        }
        var bytes = fileBytes(path)
        let page = try Self.offset(of: "overflow-marker", in: bytes) / Self.pageSize
        for offset in (page * Self.pageSize)..<((page + 1) * Self.pageSize) { bytes[offset] = 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        let salvage = try #require(recovery).salvage
        #expect(salvage.states == 20, "\(salvage)")
        #expect(salvage.statesLeftBehind == 1, "\(salvage)")
        #expect(try store.restore(String.self, for: "big/first") == nil)
        #expect(try store.restore(String.self, for: "root/item19") == Self.text(19))
    }

    /// Quarantined rows over a megabyte are copied a megabyte at a time: an intact one comes
    /// back byte for byte; one whose overflow chain is damaged past its first megabyte is not
    /// kept as a row of zeros (the damage is the salvage's error), and the rows before it stay.
    @Test func largeQuarantinedRowsAreCopiedInChunksAndADamagedOneIsNotKeptAsZeros() throws {
        var generator = SystemRandomNumberGenerator()
        let intact = Data((0..<(2 << 20) + 777).map { _ in UInt8.random(in: 0...255, using: &generator) })
        // Its marker lies past the first megabyte, so the damage is met during the chunked copy.
        var damaged = Data(repeating: 0x61, count: (3 << 20) / 2)
        damaged.append(Data("quarantine-damage-marker".utf8))
        damaged.append(Data(repeating: 0x62, count: 1 << 20))
        do {
            let store = try StateStore(path: path, options: .init(maximumStateSize: 8 << 20))
            try store.write { (transaction) throws(StateStoreError) in
                try transaction.save(encoded: intact, encoding: .binary, typeName: "Big", version: 1, for: "big/a")
                try transaction.save(encoded: damaged, encoding: .binary, typeName: "Big", version: 1, for: "big/b")
                try transaction.save("kept", for: "root/kept")
            }
            #expect(try store.quarantine("big/a", reason: "first"))
            #expect(try store.quarantine("big/b", reason: "second"))
        }
        var bytes = fileBytes(path)
        // The marker's occurrence in the quarantine copy: the last one in the file (the state's
        // own row was deleted, its pages freed, and may still hold it earlier or later).
        let marker = Array("quarantine-damage-marker".utf8)
        let occurrences = (0...(bytes.count - marker.count)).filter {
            bytes[$0] == marker[0] && Array(bytes[$0..<($0 + marker.count)]) == marker
        }
        #expect(!occurrences.isEmpty)
        for occurrence in occurrences {
            let page = occurrence / Self.pageSize
            for offset in (page * Self.pageSize)..<(page * Self.pageSize + 4) { bytes[offset] = 0xFF }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (store, recovery) = try StateStore.openOrRecover(
            path: path, options: .init(openCheck: .full, maximumStateSize: 8 << 20))
        let salvage = try #require(recovery).salvage
        let quarantined = try store.quarantinedStates()
        #expect(quarantined.map(\.path) == ["big/a"], "\(salvage)")
        #expect(quarantined.first?.bytes == intact)
        #expect(salvage.quarantined == 1, "\(salvage)")
        #expect(salvage.error != nil, "\(salvage)")
        #expect(try store.restore(String.self, for: "root/kept") == "kept")
    }

    @Test func aCopyTheFreshFileCannotTakeLeavesTheDatabaseWhereItIs() throws {
        try populate(300)
        var bytes = fileBytes(path)
        let page = try #require(try Self.markerPages(in: bytes)[150])
        for offset in (page * Self.pageSize)..<((page + 1) * Self.pageSize) { bytes[offset] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // Room for the schema and a few pages, not for 300 states of 1 KB.
        #expect {
            try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick, maximumPageCount: 40))
        } throws: { error in
            if case StateStoreError.diskFull = error { return true }
            return false
        }
        #expect(FileSnapshot(path) == FileSnapshot(bytes: bytes))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                $0.contains("broken") || $0.contains("recovering")
            }.isEmpty)
        // With room, the recovery goes ahead.
        let (_, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        #expect(try #require(recovery).salvage.states > 290)
    }

    @Test func aDatabaseReachedThroughASymbolicLinkIsRecoveredWhereItLies() throws {
        try populate(100)
        let target = folder.file("data/real.sqlite")
        try FileManager.default.createDirectory(atPath: folder.file("data"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: path, toPath: target)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        var bytes = fileBytes(target)
        let page = try #require(try Self.markerPages(in: bytes)[50])
        for offset in (page * Self.pageSize)..<((page + 1) * Self.pageSize) { bytes[offset] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        let moved = try #require(recovery)
        #expect(moved.movedTo.hasPrefix(target + ".broken-"))
        #expect(FileSnapshot(moved.movedTo) == FileSnapshot(bytes: bytes))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == target)
        #expect(try store.restore(String.self, for: "root/item99") == Self.text(99))
        #expect(try StateStore(path: target).restore(String.self, for: "root/item99") == Self.text(99))
    }

    /// A recovery stopped while it copied (killed, or by a power cut) left the damaged file where
    /// it was, and a copy cut short beside it: the next open removes that copy and recovers again.
    @Test func aCopyCutShortIsRemovedAndTheRecoveryMadeAgain() throws {
        let count = 300
        try populate(count)
        let (bytes, lost) = try Self.overwritePage(holding: 100, of: path)
        let copy = path + ".recovering"
        try Data(repeating: 0xAB, count: 8192).write(to: URL(fileURLWithPath: copy))
        try Data(repeating: 0xCD, count: 4096).write(to: URL(fileURLWithPath: copy + "-wal"))
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        let moved = try #require(recovery)
        #expect(moved.salvage.states == count - lost.count, "\(moved.salvage)")
        #expect(FileSnapshot(moved.movedTo) == FileSnapshot(bytes: bytes))
        #expect(try store.restore(String.self, for: "root/item299") == Self.text(299))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("recovering") }
                .isEmpty)
    }

    /// A recovery stopped after the damaged file was moved aside and before the whole copy took
    /// its name: the next open puts the copy in place, through `openOrRecover` or a plain
    /// `StateStore(path:)`. A copy that was not whole (its store not closed: a `-wal` beside it)
    /// is removed instead, and the database starts empty.
    @Test func aWholeCopyBesideAMissingDatabaseTakesItsPlace() throws {
        let plain = folder.file("plain.sqlite")
        do {
            let store = try StateStore(path: plain + ".recovering")
            try store.save("recovered", for: "root/a")
        }
        #expect(try StateStore(path: plain).restore(String.self, for: "root/a") == "recovered")

        let copy = path + ".recovering"
        do {
            let store = try StateStore(path: copy)
            try store.save("recovered", for: "root/a")
        }
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"))
        let (store, recovery) = try StateStore.openOrRecover(path: path)
        #expect(recovery == nil)
        #expect(try store.restore(String.self, for: "root/a") == "recovered")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("recovering") }
                .isEmpty)

        // Through a symbolic link whose file was moved aside: the copy beside where it led.
        let target = folder.file("data/real.sqlite")
        try FileManager.default.createDirectory(atPath: folder.file("data"), withIntermediateDirectories: true)
        do {
            let store = try StateStore(path: target + ".recovering")
            try store.save("through the link", for: "root/a")
        }
        let link = folder.file("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "data/real.sqlite")
        #expect(try StateStore(path: link).restore(String.self, for: "root/a") == "through the link")
        #expect(FileManager.default.fileExists(atPath: target))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "data/real.sqlite")

        // An empty copy is the claim of a recovery stopped before its copy began: removed, and
        // the database made afresh, not taken for a recovery's copy.
        let claimed = folder.file("claimed.sqlite")
        #expect(FileManager.default.createFile(atPath: claimed + ".recovering", contents: nil))
        let handler = RecordingLogHandler()
        #expect(try StateStore(path: claimed, options: .init(logger: handler.logger())).entries().isEmpty)
        #expect(!handler.records.contains { $0.message.contains("database recovered") })
        #expect(!FileManager.default.fileExists(atPath: claimed + ".recovering"))
        // A copy cut short has a WAL or, as the salvage writes it, a rollback journal.
        for (name, companion) in [("other.sqlite", "-wal"), ("journaled.sqlite", "-journal")] {
            let other = folder.file(name)
            do {
                let store = try StateStore(path: other + ".recovering")
                try store.save("cut short", for: "root/a")
            }
            try Data(repeating: 0xCD, count: 4096).write(to: URL(fileURLWithPath: other + ".recovering" + companion))
            let (empty, none) = try StateStore.openOrRecover(path: other)
            #expect(none == nil)
            #expect(try empty.entries().isEmpty, "\(companion)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("recovering") }
                    .isEmpty)
        }
    }

    /// A recovery under way is left to the process making it. Between its renames (the damaged
    /// file moved aside, the copy not yet in its place) an open of the missing database is
    /// refused, rather than making a fresh file that the copy would then replace; once it ends,
    /// the open takes the whole copy in.
    @Test func aMissingDatabaseWhoseRecoveryIsUnderWayIsNotMadeAfresh() throws {
        let copy = path + ".recovering"
        do {
            let store = try StateStore(path: copy)
            try store.save("recovered", for: "root/a")
        }
        let holder = try RecoveryClaimHolder(copy + "-lock")
        for open in [{ _ = try StateStore(path: self.path) }, { _ = try StateStore.openOrRecover(path: self.path) }] {
            do {
                try open()
                Issue.record("opened while another process recovers it")
            } catch {
                guard case .busy(let failure) = error as? StateStoreError else {
                    Issue.record("expected busy, got \(error)")
                    continue
                }
                #expect(failure.message.contains("is being recovered by another process"), "\(failure)")
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        try holder.release()
        #expect(try StateStore(path: path).restore(String.self, for: "root/a") == "recovered")
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(!FileManager.default.fileExists(atPath: copy + "-lock"))
    }

    /// The store `openOrRecover` returns after a recovery holds SQLite's locks on its file like
    /// any other: another process that opens and closes the database does not take itself for
    /// the last one, checkpoint and remove the WAL the store still writes to.
    @Test func aRecoveredStoreKeepsItsLockOnTheFile() throws {
        try populate(300)
        _ = try Self.overwritePage(holding: 150, of: path)
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        try #require(recovery != nil)
        try expectLocksHeld(by: store, on: path)
    }

    /// A read-only `openOrRecover` writes nothing: a damaged file is reported, not moved.
    @Test func aReadOnlyRecoveryMovesNothing() throws {
        try populate(300)
        let (bytes, _) = try Self.overwritePage(holding: 150, of: path)
        do {
            _ = try StateStore.openOrRecover(path: path, options: .init(readOnly: true, openCheck: .quick))
            Issue.record("a damaged file opened read-only")
        } catch {
            guard case .corrupt = error else {
                Issue.record("expected corrupt, got \(error)")
                return
            }
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            } == ["state.sqlite"])
        #expect(fileBytes(path) == bytes)
    }

    /// Overwrites the page of the database at `path` that holds state `index`'s marker; returns
    /// the file's bytes then, and the states that page held.
    static func overwritePage(holding index: Int, of path: String) throws -> (bytes: [UInt8], lost: Set<Int>) {
        var bytes = fileBytes(path)
        let pages = try markerPages(in: bytes)
        let page = try #require(pages[index])
        for offset in (page * pageSize)..<((page + 1) * pageSize) { bytes[offset] = 0xEE }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (bytes, Set(pages.filter { $0.value == page }.keys))
    }

    static func offset(of text: String, in bytes: [UInt8]) throws -> Int {
        let marker = Array(text.utf8)
        return try #require(
            (0...(bytes.count - marker.count)).first {
                bytes[$0] == marker[0] && Array(bytes[$0..<($0 + marker.count)]) == marker
            })
    }
}
