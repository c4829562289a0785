import Foundation
import StateStore
import Testing

/// `statectl recover` on the built binary: a damaged file is moved aside unchanged and a fresh
/// one holds every state that still reads; a sound file, and one another process has open, are
/// left where they are.
@Suite(.hangGuard(minutes: 10)) struct CLIRecoverTests {
    let folder = TemporaryFolder()
    var db: String { folder.file("state.sqlite") }
    static let count = 200

    /// A closed database of ``count`` states of about 1 KB (SalvageTests' texts) and an archive;
    /// returns its bytes with the leaf holding state 120 overwritten, and the states that leaf held.
    func damagedDatabase() throws -> (bytes: [UInt8], lost: Set<Int>) {
        do {
            let store = try StateStore(path: db)
            try store.write { (transaction) throws(StateStoreError) in
                for index in 0..<Self.count {
                    try transaction.save(
                        SalvageTests.text(index), for: try RestorationPath(validating: "root/item\(index)"))
                }
                try transaction.setHierarchyArchive(Data(#"{"archived":"main"}"#.utf8))
            }
        }
        var bytes = fileBytes(db)
        let pages = try SalvageTests.markerPages(in: bytes)
        let page = try #require(pages[120])
        for offset in (page * SalvageTests.pageSize)..<((page + 1) * SalvageTests.pageSize) { bytes[offset] = 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: db))
        return (bytes, Set(pages.filter { $0.value == page }.keys))
    }

    /// Starts `sqlite3` on `file`, runs `sql`, and returns once it holds the file open; the
    /// process ends when its input is closed.
    func holdOpen(_ file: String, running sql: String) throws -> (Process, Pipe) {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["sqlite3", file]
        let input = Pipe()
        let output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        input.fileHandleForWriting.write(Data("\(sql) SELECT 'open';\n".utf8))
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("open\n") {
            let chunk = output.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "sqlite3 ended before it had \(file) open")
            seen.append(chunk)
        }
        return (holder, input)
    }

    /// The names in the folder, sorted.
    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }

    @Test func aDamagedDatabaseIsMovedAsideAndEveryStateThatReadsIsKept() throws {
        let (bytes, lost) = try damagedDatabase()
        let result = try CLI.run(["recover", "--db", db])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(result.stdout.contains("could not be used: it is damaged ("), "\(result)")
        #expect(result.stdout.contains("States copied:            \(Self.count - lost.count)\n"), "\(result)")
        #expect(result.stdout.contains("Unreadable stretches:     1 "), "\(result)")
        #expect(result.stdout.contains("Archives copied:          1\n"), "\(result)")
        let moved = try #require(
            try names().first { $0.hasPrefix("state.sqlite.broken-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        )
        #expect(result.stdout.contains(folder.file(moved)), "\(result)")
        #expect(FileSnapshot(folder.file(moved)) == FileSnapshot(bytes: bytes))
        let store = try StateStore(path: db)
        for index in 0..<Self.count {
            let restored = try store.restore(String.self, for: try RestorationPath(validating: "root/item\(index)"))
            #expect(restored == (lost.contains(index) ? nil : SalvageTests.text(index)), "state \(index)")
        }
        #expect(try store.hierarchyArchive() == Data(#"{"archived":"main"}"#.utf8))
        #expect(try CLI.run(["check", "--db", db]).status == 0)
    }

    @Test func theJSONReportCountsWhatWasKept() throws {
        let (_, lost) = try damagedDatabase()
        let result = try CLI.run(["recover", "--db", db, "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "recover")
        #expect(object["recovered"] as? Bool == true)
        #expect(object["states"] as? Int == Self.count - lost.count)
        #expect(object["states_left_behind"] as? Int == 0)
        #expect(object["unreadable_stretches"] as? Int == 1)
        #expect(object["archives"] as? Int == 1)
        #expect(object["salvage_error"] is NSNull)
        #expect((object["moved_to"] as? String)?.hasPrefix(db + ".broken-") == true)
        #expect((object["reason"] as? String)?.hasPrefix("it is damaged") == true)
    }

    @Test func aSoundDatabaseIsLeftWhereItIs() throws {
        let store = try StateStore(path: db)
        try store.save("kept", for: "root/a")
        let rows = try CLI.dump(db)
        let result = try CLI.run(["recover", "--db", db])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "\(db): every page read and no damage found; nothing was moved.\n", "\(result)")
        #expect(try CLI.dump(db) == rows)
        #expect(!(try names().contains { $0.contains("broken") }))
        let json = try CLI.run(["recover", "--db", db, "--json"])
        #expect(
            json.stdout.contains(#""recovered" : false"#) || json.stdout.contains(#""recovered": false"#), "\(json)")
    }

    @Test func aDatabaseAnotherProcessHasOpenIsNotMoved() throws {
        let (bytes, _) = try damagedDatabase()
        // sqlite3 holds the file open (its first query reads the schema, which the damage spares).
        let (holder, input) = try holdOpen(db, running: "PRAGMA journal_mode = WAL;")
        let before = try names()
        let result = try CLI.run(["recover", "--db", db])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("is open in another process"), "\(result)")
        #expect(result.stderr.contains("nothing was moved or changed"), "\(result)")
        #expect(try names() == before)
        #expect(FileSnapshot(db) == FileSnapshot(bytes: bytes))
        // Once it has closed the file, the recovery goes ahead.
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        let after = try CLI.run(["recover", "--db", db])
        #expect(after.status == 0, "\(after)")
        #expect(after.stdout.contains("States copied:"), "\(after)")
    }

    /// A database another process is recovering (it holds the copy open) is left to it: nothing
    /// moved, nothing changed, the copy untouched.
    @Test func aDatabaseAnotherProcessIsRecoveringIsLeftToIt() throws {
        let (bytes, _) = try damagedDatabase()
        let holder = try RecoveryClaimHolder(db + ".recovering-lock")
        let copyFiles = try names().filter { $0.contains("recovering") }
        let result = try CLI.run(["recover", "--db", db])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("is being recovered by another process"), "\(result)")
        // The check's read gave the damaged file a -wal and -shm, as any read of it does.
        let after = try names()
        #expect(!after.contains { $0.contains("broken") }, "\(after)")
        #expect(after.filter { $0.contains("recovering") } == copyFiles, "\(after)")
        #expect(FileSnapshot(db) == FileSnapshot(bytes: bytes))
        try holder.release()
        // Once it has let go, the recovery goes ahead (the copy it left is replaced).
        let again = try CLI.run(["recover", "--db", db])
        #expect(again.status == 0, "\(again)")
        #expect(!(try names().contains { $0.contains("recovering") }))
    }

    /// States of 8 KB in a large database, so that a recovery's copy takes long enough to be
    /// caught in the middle.
    static let largeCount = 6_000
    static func largeText(_ index: Int) -> String { "state-\(index)-" + String(repeating: "k", count: 8_000) }

    /// A damaged database of ``largeCount`` states of 8 KB (one page in its middle overwritten):
    /// its bytes, and the states that page held.
    func largeDamagedDatabase() throws -> (bytes: [UInt8], lost: Set<Int>) {
        do {
            let store = try StateStore(path: db)
            try store.write { (transaction) throws(StateStoreError) in
                for index in 0..<Self.largeCount {
                    try transaction.save(
                        Self.largeText(index), for: try RestorationPath(validating: "root/item\(index)"))
                }
            }
        }
        return try SalvageTests.overwritePage(holding: 3_000, of: db)
    }

    /// Starts `statectl recover` on the database and returns once its copy has written `bytes`
    /// (to the copy or its journal), or it has ended.
    func startRecovery(
        copying bytes: Int, output: Any = FileHandle.nullDevice, errors: Any = FileHandle.nullDevice
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.executable)
        process.arguments = ["recover", "--db", db]
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        func written() -> Int {
            ["", "-wal", "-journal"].reduce(0) { total, suffix in
                var info = stat()
                return total + (stat(db + ".recovering" + suffix, &info) == 0 ? Int(info.st_size) : 0)
            }
        }
        while process.isRunning, written() < bytes { usleep(1_000) }
        return process
    }

    /// A recovery killed in the middle of its copy, as a crash or a power cut stops it, leaves
    /// the damaged database where it was, unchanged: the next recovery keeps everything.
    @Test func aRecoveryKilledDuringItsCopyIsMadeAgain() throws {
        let (bytes, lost) = try largeDamagedDatabase()
        // Killed once the copy has written a few megabytes.
        let process = try startRecovery(copying: 4 << 20)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try #require(
            process.terminationReason == .uncaughtSignal,
            "the recovery ended (exit \(process.terminationStatus)) before it could be killed")
        #expect(FileSnapshot(db) == FileSnapshot(bytes: bytes))
        #expect(!(try names().contains { $0.contains("broken") }))

        let again = try CLI.run(["recover", "--db", db])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("States copied:            \(Self.largeCount - lost.count)\n"), "\(again)")
        #expect(!(try names().contains { $0.contains("recovering") }))
        let store = try StateStore(path: db)
        let last = try RestorationPath(validating: "root/item\(Self.largeCount - 1)")
        #expect(try store.restore(String.self, for: last) == Self.largeText(Self.largeCount - 1))
    }

    /// Two recoveries of one database at once, as when an application and `statectl recover`
    /// find it damaged together: the second is refused while the first copies, and the first
    /// keeps everything.
    @Test func aSecondRecoveryIsRefusedWhileTheFirstCopies() throws {
        let (bytes, lost) = try largeDamagedDatabase()
        let firstOutput = Pipe()
        // Stopped in the middle of its copy, so that the second runs all of its course then.
        let first = try startRecovery(copying: 2 << 20, output: firstOutput)
        kill(first.processIdentifier, SIGSTOP)
        try #require(first.isRunning, "the first recovery ended before it could be stopped")
        let second = try CLI.run(["recover", "--db", db])
        kill(first.processIdentifier, SIGCONT)
        let report = String(decoding: firstOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        first.waitUntilExit()
        #expect(second.status == 1, "\(second)")
        #expect(second.stderr.contains("is being recovered by another process"), "\(second)")
        #expect(first.terminationStatus == 0, "\(report)")
        #expect(report.contains("States copied:            \(Self.largeCount - lost.count)\n"), "\(report)")
        let after = try names()
        #expect(
            after.filter { $0.contains("broken") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.count == 1,
            "\(after)")
        #expect(!after.contains { $0.contains("recovering") }, "\(after)")
        let broken = try #require(
            after.first { $0.contains("broken") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") })
        #expect(FileSnapshot(folder.file(broken)) == FileSnapshot(bytes: bytes))
        let store = try StateStore(path: db)
        #expect(try store.entries().count == Self.largeCount - lost.count)
    }

    /// A process that opens the database while it is being copied would go on writing to it
    /// once it is moved aside: the recovery looks again before it moves anything, and stops.
    @Test func aDatabaseOpenedDuringTheCopyIsNotMoved() throws {
        let (bytes, _) = try largeDamagedDatabase()
        let errors = Pipe()
        let first = try startRecovery(copying: 2 << 20, errors: errors)
        kill(first.processIdentifier, SIGSTOP)
        try #require(first.isRunning, "the recovery ended before it could be stopped")
        let (holder, input) = try holdOpen(db, running: "PRAGMA journal_mode = WAL;")
        kill(first.processIdentifier, SIGCONT)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        first.waitUntilExit()
        #expect(first.terminationStatus == 1, "\(message)")
        #expect(message.contains("was opened by another process while it was being recovered"), "\(message)")
        let after = try names()
        #expect(!after.contains { $0.contains("broken") || $0.contains("recovering") }, "\(after)")
        #expect(FileSnapshot(db) == FileSnapshot(bytes: bytes))
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
    }

    @Test func aMissingDatabaseIsNotCreated() throws {
        let result = try CLI.run(["recover", "--db", db])
        #expect(result.status == 3, "\(result)")
        #expect(try names().isEmpty)
        // Nor beside a copy cut short (empty, or with a -wal or a -journal): that is no database
        // to finish.
        for companion in [nil, "-wal", "-journal"] {
            try Data((companion == nil ? "" : "partial").utf8).write(to: URL(fileURLWithPath: db + ".recovering"))
            if let companion {
                try Data("partial".utf8).write(to: URL(fileURLWithPath: db + ".recovering" + companion))
            }
            let beside = try CLI.run(["recover", "--db", db])
            #expect(beside.status == 3, "\(beside)")
            #expect(
                try names() == ["state.sqlite.recovering"] + (companion.map { ["state.sqlite.recovering" + $0] } ?? []))
            if let companion { try FileManager.default.removeItem(atPath: db + ".recovering" + companion) }
        }
    }

    /// A recovery stopped between its two renames (the damaged file moved aside, its whole copy
    /// not yet in its place) is finished by the next `recover`, which puts the copy in place.
    @Test func aRecoveryStoppedBetweenItsRenamesIsFinished() throws {
        _ = try damagedDatabase()
        let recovered = try CLI.run(["recover", "--db", db])
        try #require(recovered.status == 0, "\(recovered)")
        let states = try StateStore(path: db).entries().count
        // Back to the moment between the renames: the fresh file under the copy's name.
        try FileManager.default.moveItem(atPath: db, toPath: db + ".recovering")
        let result = try CLI.run(["recover", "--db", db])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("the copy an interrupted recovery had made took its place"), "\(result)")
        #expect(!(try names().contains { $0.contains("recovering") }))
        #expect(try StateStore(path: db).entries().count == states)
    }
}
