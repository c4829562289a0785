import Foundation
import Testing

@testable import StateStore

/// Broken files and full disks: a typed error, the file unchanged, nothing lost.
@Suite("Faults: broken files and full disks")
struct FaultFileTests {
    let folder = TemporaryFolder()
    var path: String { folder.file("state.sqlite") }

    /// A database of `count` states of about 900 bytes, closed (so checkpointed into one file).
    func populated(_ count: Int = 300) throws -> [UInt8] {
        do {
            let store = try StateStore(path: path)
            try store.write { (transaction) throws(StateStoreError) in
                for index in 0..<count {
                    try transaction.save(
                        "\(index)" + String(repeating: "x", count: 900),
                        for: try RestorationPath(validating: "root/item\(index)"))
                }
            }
        }
        // The store is closed: its WAL was checkpointed into the one file.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        return fileBytes(path)
    }

    @Test func aTruncatedFileIsCorruptAndUnchanged() throws {
        let bytes = try populated()
        let truncated = Array(bytes.prefix(bytes.count / 2))
        try Data(truncated).write(to: URL(fileURLWithPath: path))
        // The check that reads every page at open (the default reads the header and schema).
        #expect {
            try StateStore(path: path, options: .init(openCheck: .quick))
        } throws: { error in
            if case StateStoreError.corrupt = error { return true }
            return false
        }
        #expect(FileSnapshot(path) == FileSnapshot(bytes: truncated))
    }

    @Test func aMissingWALBesideItsIndexIsRefused() throws {
        // A crashed writer leaves state.sqlite, -wal and -shm; a copy that lost the -wal follows.
        let live = try StateStore(path: path)
        try live.save("only in the WAL", for: "root/compose")
        let copy = folder.file("copy.sqlite")
        for suffix in ["", "-shm"] {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        let before = FileSnapshot(copy)
        #expect {
            try StateStore(path: copy)
        } throws: { error in
            guard case StateStoreError.walMissing(let file, let frames) = error else { return false }
            return file == copy && frames > 0
        }
        #expect(FileSnapshot(copy) == before)
        #expect(FileManager.default.fileExists(atPath: copy + "-shm"))

        // With the WAL put back, everything is there.
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        #expect(try StateStore(path: copy).restore(String.self, for: "root/compose") == "only in the WAL")
    }

    @Test(arguments: ["garbage", "damaged", "truncated"])
    func openOrRecoverMovesABrokenFileAsideAndStartsFreshWithWhatSurvived(_ damage: String) throws {
        var bytes = try populated()
        switch damage {
        case "garbage": bytes = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        case "damaged": for offset in (4096 * 6)..<(4096 * 9) { bytes[offset] = UInt8(truncatingIfNeeded: offset) }
        default: bytes = Array(bytes.prefix(bytes.count / 2))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // Damage past the schema is seen at open by the check that reads every page.
        let (store, recovery) = try StateStore.openOrRecover(path: path, options: .init(openCheck: .quick))
        let moved = try #require(recovery)
        #expect(moved.movedTo.hasPrefix(path + ".broken-"))
        #expect(FileSnapshot(moved.movedTo) == FileSnapshot(bytes: bytes))
        // What survived is in the fresh database, each state as it was saved (SalvageTests has the rest).
        let entries = try store.entries()
        #expect(entries.count == moved.salvage.states)
        if damage == "garbage" { #expect(entries.isEmpty) } else { #expect(!entries.isEmpty) }
        for entry in entries {
            let index = try #require(Int(entry.path.rawValue.dropFirst("root/item".count)))
            #expect(try store.restore(String.self, for: entry.path) == "\(index)" + String(repeating: "x", count: 900))
        }
        try store.save("fresh", for: "root")
        #expect(try store.check().isHealthy)
    }

    @Test func aSalvageReadsAFileOfAnOlderSchema() throws {
        // Schema 4: no `key_id` in `states` or `quarantine` yet.
        let old = folder.file("old.sqlite")
        do {
            let connection = try Connection(path: old, options: .init())
            try connection.execute("PRAGMA journal_mode = WAL")
            try Migrator(migrations: Array(Migrator().migrations.prefix(4))).migrate(connection)
            for index in 0..<50 {
                let bytes = Data("\"state \(index)\"".utf8)
                try connection.execute(
                    """
                    INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
                    VALUES ('root/c\(index)', 'String', 1, \(index + 1), 'json', \(Checksum.stored(bytes)), 1700000000000, X'\(bytes.map { String(format: "%02x", $0) }.joined())')
                    """)
            }
            try connection.execute(
                """
                INSERT INTO quarantine(path, type_name, version, generation, encoding, checksum, updated_at, reason, quarantined_at, bytes)
                VALUES ('root/q', 'String', 1, 1, 'json', 0, 1700000000000, 'a reason', 1700000000000, X'00');
                INSERT INTO hierarchy(scene, set_aside, archive, updated_at) VALUES ('main', 0, X'7b7d', 1700000000000);
                INSERT INTO scenes(identifier, path_prefix, created_at) VALUES ('main', '', 1700000000000)
                """)
        }
        let store = try StateStore(path: path)
        let salvage = try store.salvage(from: old)
        #expect(salvage.error == nil, "\(salvage)")
        #expect(salvage.states == 50)
        #expect(salvage.quarantined == 1)
        #expect(salvage.archives == 1)
        #expect(try store.restore(String.self, for: "root/c7") == "state 7")
        #expect(try store.state(at: "root/c7")?.generation == 8)
        #expect(try store.hierarchyArchive() == Data("{}".utf8))
    }

    @Test func rowsDamagedInTheirOwnColumnsStayBehindAndReplaceNothing() throws {
        let old = folder.file("old.sqlite")
        do {
            let store = try StateStore(path: old)
            try store.write { (transaction) throws(StateStoreError) in
                for index in 0..<10 {
                    try transaction.save("state \(index)", for: try RestorationPath(validating: "root/c\(index)"))
                }
            }
        }
        // A path changed to another row's, a row marked sealed in a file that records no key,
        // an encoding that is not one: each with its bytes and checksum intact.
        try rawSQL(
            old,
            """
            PRAGMA ignore_check_constraints = ON;
            UPDATE states SET key_id = '0' WHERE path = 'root/c5';
            UPDATE states SET encoding = 'jsox' WHERE path = 'root/c6';
            """)
        // The path in the table's row, not in the index: the page that holds its state too.
        var bytes = fileBytes(old)
        #expect(!FileManager.default.fileExists(atPath: old + "-wal"))
        let state = Array(#""state 7""#.utf8), name = Array("root/c7".utf8)
        func offsets(_ pattern: [UInt8]) -> [Int] {
            (0...(bytes.count - pattern.count)).filter {
                bytes[$0] == pattern[0] && Array(bytes[$0..<($0 + pattern.count)]) == pattern
            }
        }
        let page = try #require(offsets(state).first) / 4096
        let at = try #require(offsets(name).first { $0 / 4096 == page })
        bytes[at + 6] = UInt8(ascii: "1")
        // And an earlier row's path changed to a later one's: the path index gives that path to
        // the later row, which keeps it.
        let earlier = try #require(offsets(Array("root/c2".utf8)).first { $0 / 4096 == page })
        bytes[earlier + 6] = UInt8(ascii: "8")
        try Data(bytes).write(to: URL(fileURLWithPath: old))
        let store = try StateStore(path: path)
        let salvage = try store.salvage(from: old)
        #expect(salvage.states == 6, "\(salvage)")
        #expect(salvage.statesLeftBehind == 4, "\(salvage)")
        #expect(try store.restore(String.self, for: "root/c1") == "state 1")
        #expect(try store.restore(String.self, for: "root/c8") == "state 8")
        #expect(try store.restore(String.self, for: "root/c2") == nil)
        #expect(try store.restore(String.self, for: "root/c5") == nil)
        #expect(try store.restore(String.self, for: "root/c6") == nil)
        #expect(try store.metadata(StateStore.sealedWithKey) == nil)
        try store.save("clear", for: "root/new")
    }

    @Test func openOrRecoverNeverMovesANewerDatabase() throws {
        _ = try populated(3)
        try rawSQL(path, "PRAGMA user_version = 42")
        let before = FileSnapshot(path)
        #expect(throws: StateStoreError.schemaTooNew(file: path, found: 42, supported: StateStore.latestSchemaVersion))
        {
            try StateStore.openOrRecover(path: path)
        }
        #expect(FileSnapshot(path) == before)
        // Nothing moved aside (SQLite's own -wal/-shm for reading a WAL database may sit beside it).
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            } == ["state.sqlite"])
    }

    @Test func aFullDatabaseFailsSavesWithDiskFullAndKeepsEarlierStates() throws {
        let store = try StateStore(path: path, options: .init(maximumPageCount: 40))
        try store.save("kept", for: "root/kept")
        var filled = 0
        var failure: StateStoreError?
        for index in 0..<1000 {
            do {
                try store.save(
                    String(repeating: "f", count: 3000), for: try RestorationPath(validating: "root/fill\(index)"))
                filled += 1
            } catch {
                failure = error
                break
            }
        }
        guard case .diskFull = try #require(failure) else {
            Issue.record("expected .diskFull, got \(String(describing: failure))")
            return
        }
        #expect(filled > 0)
        #expect(try store.restore(String.self, for: "root/kept") == "kept")
        #expect(try store.entries().count == filled + 1)
        // Space returns: removing states frees pages for new saves.
        try store.removeAll(under: "root")
        try store.save("again", for: "root/again")
        #expect(try store.restore(String.self, for: "root/again") == "again")
    }

    /// Whether a tmpfs can be mounted here: tried once, on a folder of its own, and unmounted.
    /// Root alone is not enough: a container may lack `CAP_SYS_ADMIN`, or its seccomp or
    /// AppArmor profile may refuse `mount`.
    static let canMountTmpfs: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        let probe = TemporaryFolder("tmpfs-probe")
        let point = probe.file("mount")
        guard (try? FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)) != nil,
            let mounted = try? runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", point]),
            mounted.status == 0
        else { return false }
        return (try? runProgram("/bin/umount", [point]))?.status == 0
    }()

    @Test(.enabled(if: canMountTmpfs, "needs to mount a small tmpfs (root, and a mount the system allows)"))
    func aFullDiskFailsSavesWithDiskFullAndRecoversWhenSpaceReturns() throws {
        let mountPoint = folder.file("tmpfs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(mounted.output)")
        defer { _ = try? runProgram("/bin/umount", [mountPoint]) }

        let database = mountPoint + "/state.sqlite"
        let store = try StateStore(path: database)
        try store.save("kept", for: "root/kept")
        let filler = mountPoint + "/filler"
        var failure: StateStoreError?
        // Fill the disk beside the database, then save until the disk refuses.
        _ = FileManager.default.createFile(atPath: filler, contents: Data(count: 600 << 10))
        for index in 0..<2000 {
            do {
                try store.save(
                    String(repeating: "f", count: 4000), for: try RestorationPath(validating: "root/fill\(index)"))
            } catch {
                failure = error
                break
            }
        }
        guard case .diskFull = try #require(failure) else {
            Issue.record("expected .diskFull, got \(String(describing: failure))")
            return
        }
        #expect(try store.restore(String.self, for: "root/kept") == "kept")
        try FileManager.default.removeItem(atPath: filler)
        try store.save("after", for: "root/after")
        #expect(try store.restore(String.self, for: "root/after") == "after")
        #expect(try store.check().integrity == ["ok"])
    }
}
