import Foundation
import StateStore
import StateStoreCrashVFS
import StateStoreSQLite
import Testing

/// The crash VFS on its own, through SQLite's C API on real files: what it was told to drop is
/// not on disk, what was synced always is, unsynced folder entries come and go.
@Suite("Power cut: the crash VFS", .serialized)
struct CrashVFSTests {
    /// A raw connection through the crash VFS (registered, not as the default, so the rest of
    /// the suite's stores never see it).
    final class Connection {
        var handle: OpaquePointer?

        init(_ path: String, vfs: String? = "statestore-crash") throws {
            // SQLite's log before registering a VFS initialises SQLite.
            beforeRawSQLite()
            #expect(statestore_crashvfs_register(0) == SQLITE_OK)
            let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs)
            guard code == SQLITE_OK else { throw RawSQLFailure(message: "open \(path): \(code)") }
        }

        @discardableResult
        func run(_ sql: String) -> Int32 {
            sqlite3_exec(handle, sql, nil, nil, nil)
        }

        func strings(_ sql: String) -> [String] {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return ["error: \(sql)"] }
            defer { sqlite3_finalize(statement) }
            var rows: [String] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "NULL")
            }
            return rows
        }

        func close() {
            sqlite3_close_v2(handle)
            handle = nil
        }
    }

    /// The rows of table `t` and the integrity check, read after the cut without the VFS.
    func survivors(_ path: String) throws -> (rows: [String], integrity: [String]) {
        let connection = try Connection(path, vfs: nil)
        defer { connection.close() }
        return (connection.strings("SELECT x FROM t ORDER BY rowid"), connection.strings("PRAGMA integrity_check"))
    }

    /// A WAL database with one row synced by a checkpoint, then a second row left unsynced
    /// (`synchronous=NORMAL`), then a cut with `policy`.
    func cutAfterUnsyncedInsert(
        _ policy: statestore_crash_policy, synchronous: String = "NORMAL"
    ) throws -> (rows: [String], integrity: [String], stats: statestore_crash_stats) {
        let folder = TemporaryFolder()
        let path = folder.file("t.sqlite")
        statestore_crashvfs_begin(folder.path, 7, 0, policy)
        let connection = try Connection(path)
        #expect(connection.strings("PRAGMA journal_mode = WAL") == ["wal"])
        connection.run("PRAGMA synchronous = \(synchronous); CREATE TABLE t(x); INSERT INTO t VALUES ('synced')")
        #expect(connection.strings("PRAGMA wal_checkpoint(TRUNCATE)").first == "0")
        #expect(connection.run("INSERT INTO t VALUES ('" + String(repeating: "u", count: 3000) + "')") == SQLITE_OK)
        statestore_crashvfs_crash_now()
        // The machine has stopped: nothing more reaches the files.
        #expect(connection.run("INSERT INTO t VALUES ('after')") != SQLITE_OK)
        connection.close()
        let stats = statestore_crashvfs_stats()
        statestore_crashvfs_end()
        let (rows, integrity) = try survivors(path)
        return (rows.map { $0.hasPrefix("uuu") ? "unsynced" : $0 }, integrity, stats)
    }

    @Test func aWriteToldToDropIsNotOnDisk() throws {
        let cut = try cutAfterUnsyncedInsert(STATESTORE_CRASH_DROP_ALL)
        #expect(cut.rows == ["synced"])
        #expect(cut.integrity == ["ok"])
        #expect(cut.stats.crashed == 1 && cut.stats.sectors_dropped > 0 && cut.stats.sectors_kept == 0)
    }

    @Test func aWriteToldToKeepIsOnDisk() throws {
        let cut = try cutAfterUnsyncedInsert(STATESTORE_CRASH_KEEP_ALL)
        #expect(cut.rows == ["synced", "unsynced"])
        #expect(cut.integrity == ["ok"])
        #expect(cut.stats.sectors_kept > 0 && cut.stats.sectors_dropped == 0)
    }

    @Test func aSyncedWriteAlwaysSurvives() throws {
        // synchronous=FULL syncs the WAL at the commit: nothing is left for the cut to drop.
        let cut = try cutAfterUnsyncedInsert(STATESTORE_CRASH_DROP_ALL, synchronous: "FULL")
        #expect(cut.rows == ["synced", "unsynced"])
        #expect(cut.stats.sectors_dropped == 0 && cut.stats.sectors_torn == 0)
    }

    @Test func randomCutsTearSectorsAndSQLiteStillOpensEveryOne() throws {
        var torn: Int64 = 0
        var outcomes: Set<[String]> = []
        for seed in 1...40 {
            let folder = TemporaryFolder()
            let path = folder.file("t.sqlite")
            statestore_crashvfs_begin(folder.path, UInt64(seed), 0, STATESTORE_CRASH_RANDOM)
            let connection = try Connection(path)
            _ = connection.strings("PRAGMA journal_mode = WAL")
            connection.run("PRAGMA synchronous = NORMAL; CREATE TABLE t(x)")
            _ = connection.strings("PRAGMA wal_checkpoint(TRUNCATE)")
            for index in 0..<4 { connection.run("INSERT INTO t VALUES ('\(index)' || zeroblob(5000))") }
            statestore_crashvfs_crash_now()
            connection.close()
            torn += statestore_crashvfs_stats().sectors_torn
            statestore_crashvfs_end()
            let (rows, integrity) = try survivors(path)
            #expect(integrity == ["ok"], "seed \(seed)")
            // What survives is a prefix of the inserts.
            #expect(
                rows.map { String($0.prefix(1)) } == Array(["0", "1", "2", "3"].prefix(rows.count)), "seed \(seed)")
            outcomes.insert(rows.map { String($0.prefix(1)) })
        }
        #expect(torn > 0)
        // The random choices do reach different outcomes.
        #expect(outcomes.count > 1)
    }

    @Test func aFileCreatedInAFolderNeverSyncedVanishes() throws {
        let folder = TemporaryFolder()
        let path = folder.file("t.sqlite")
        statestore_crashvfs_begin(folder.path, 1, 0, STATESTORE_CRASH_DROP_ALL)
        let connection = try Connection(path)
        // No journal, so the unix VFS never syncs the folder: the file's data is synced at
        // the commit, its name is not.
        _ = connection.strings("PRAGMA journal_mode = OFF")
        connection.run("PRAGMA synchronous = FULL; CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        statestore_crashvfs_crash_now()
        connection.close()
        let stats = statestore_crashvfs_stats()
        statestore_crashvfs_end()
        #expect(stats.entries_vanished == 1)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aDeletionInAFolderNeverSyncedIsUndone() throws {
        let folder = TemporaryFolder()
        let path = folder.file("t.sqlite")
        statestore_crashvfs_begin(folder.path, 1, 0, STATESTORE_CRASH_DROP_ALL)
        let connection = try Connection(path)
        _ = connection.strings("PRAGMA journal_mode = WAL")
        connection.run("PRAGMA synchronous = FULL; CREATE TABLE t(x); INSERT INTO t VALUES ('kept')")
        // The last connection's close checkpoints and deletes the WAL, without a folder sync.
        connection.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        statestore_crashvfs_crash_now()
        let stats = statestore_crashvfs_stats()
        statestore_crashvfs_end()
        #expect(stats.entries_restored >= 1)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let (rows, integrity) = try survivors(path)
        #expect(rows == ["kept"])
        #expect(integrity == ["ok"])
    }

    @Test func theCutHappensAtTheChosenOperation() throws {
        let folder = TemporaryFolder()
        let path = folder.file("t.sqlite")
        statestore_crashvfs_begin(folder.path, 1, 3, STATESTORE_CRASH_DROP_ALL)
        let connection = try Connection(path)
        var failed = 0
        for index in 0..<20 where connection.run("CREATE TABLE t\(index)(x)") != SQLITE_OK { failed += 1 }
        connection.close()
        let stats = statestore_crashvfs_stats()
        statestore_crashvfs_end()
        #expect(stats.crashed == 1 && stats.operations == 3)
        #expect(failed > 0)
    }
}

/// The store under simulated power cuts: `statestore-worker power-cut` runs a workload that
/// opens, migrates, saves, writes transactions, quarantines, relaunches (checkpoint and WAL
/// reset), removes, prunes, imports and passes SQLite's automatic checkpoint, cuts the power at
/// one of its writes, truncates or syncs, then checks what the files hold.
/// `STATESTORE_POWER_CUT_POINTS=10000` runs the longer measurement.
@Suite("Power cut: what survives", .hangGuard(minutes: 10))
struct PowerCutStoreTests {
    struct Figures {
        var values: [String: Int] = [:]
        var violations: [String] = []
        subscript(_ key: String) -> Int { values[key] ?? -1 }
    }

    /// Points per mode: 250 for the store's own saves (a workload of about 2,600 operations),
    /// 500 with the write-behind writer (about 150), unless the environment says otherwise.
    static func points(_ mode: String) -> Int {
        ProcessInfo.processInfo.environment["STATESTORE_POWER_CUT_POINTS"].flatMap(Int.init)
            ?? (mode.hasSuffix("writebehind") ? 500 : 250)
    }

    func cuts(_ mode: String) throws -> Figures {
        let points = Self.points(mode)
        let folder = TemporaryFolder("power-cut-\(mode)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments = ["power-cut", mode, String(points), "1", folder.path]
        let output = folder.file("output")
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        try process.run()
        process.waitUntilExit()
        let text = try String(contentsOfFile: output, encoding: .utf8)
        var figures = Figures()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("power-cut ") {
                for field in line.split(separator: " ").dropFirst() {
                    let parts = field.split(separator: "=", maxSplits: 1)
                    if parts.count == 2, let value = Int(parts[1]) { figures.values[String(parts[0])] = value }
                }
                print(line)
            } else if line.hasPrefix("violation") {
                figures.violations.append(String(line))
            }
        }
        #expect(figures.violations.isEmpty, "\(figures.violations.joined(separator: "\n"))")
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(figures["points"] == points)
        // Nearly every point is a cut (a point past the workload's last operation is not).
        #expect(figures["cuts"] >= points * 9 / 10)
        #expect(figures["opened"] == figures["cuts"])
        #expect(figures["recovered"] == 0)
        #expect(figures["sectors-dropped"] > 0 && figures["sectors-torn"] > 0)
        return figures
    }

    @Test func synchronousFullLosesNoSaveThatReturned() throws {
        let figures = try cuts("full")
        #expect(figures["acknowledged"] > 0 && figures["lost"] == 0)
    }

    @Test func synchronousNormalKeepsAPrefixOfTheCommitsAndEverythingSynchronized() throws {
        // The worker checks that every commit before `synchronize()` survives every cut.
        let figures = try cuts("normal")
        // The documented window: commits since the WAL was last synced can roll back, and the
        // cuts do find it (the checks see losses, not only survivals).
        #expect(figures["lost"] > 0)
    }

    // With the write-behind writer, the worker checks that every flush point survives every
    // cut (in both modes: a flush point syncs the WAL); changes handed over after the last
    // one may be lost, a prefix of them, each whole with its archive.

    @Test func writeBehindOverFullLosesNoFlushPoint() throws {
        let figures = try cuts("full-writebehind")
        #expect(figures["acknowledged"] > 0)
    }

    /// `importStates` and `StateStore.rekey` beside an application that holds the database open
    /// (so closing them checkpoints nothing), then a cut that drops every unsynced write: what
    /// they wrote is there (`statestore-worker power-cut-beside-app`).
    @Test func maintenanceBesideAnOpenAppSurvivesACut() throws {
        let folder = TemporaryFolder("beside-app")
        let (status, output) = try runProgram(
            try builtProduct("statestore-worker"), ["power-cut-beside-app", folder.path])
        #expect(output == "beside-app import kept\nbeside-app rekey kept\n")
        #expect(status == 0, "\(output)")
    }

    /// Storage whose sync fails (an I/O error from `fdatasync`), under every operation that
    /// syncs before it returns (`statestore-worker sync-fails`): a store's commit does not sync,
    /// so `synchronize()`, an import and a rekey throw `notSynced` with their change committed;
    /// a schema repair, whose commit syncs, fails whole, and `openOrRecover` then leaves the
    /// file where it is instead of moving it aside as unrepairable.
    @Test func aFailedSyncSaysTheChangeWasCommittedAndMovesNothingAside() throws {
        let folder = TemporaryFolder("sync-fails")
        let (status, output) = try runProgram(try builtProduct("statestore-worker"), ["sync-fails", folder.path])
        #expect(
            output == """
                sync-fails synchronize committed
                sync-fails import committed
                sync-fails rekey committed
                sync-fails repair left in place (disk I/O error (1034))
                sync-fails open-or-recover left in place (disk I/O error (1034))

                """)
        #expect(status == 0, "\(output)")
    }

    @Test func writeBehindOverNormalLosesNoFlushPoint() throws {
        // ("lost" counts changes handed to the writer and not on disk after the cut, written
        // or not: it shows the window, not a rollback.)
        let figures = try cuts("normal-writebehind")
        #expect(figures["acknowledged"] > 0)
    }
}
