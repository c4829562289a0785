import Foundation
import StateStore
import Testing

/// `statectl inspect`, `prune` and `export` over many states, run as the built binary: their
/// listings and documents are made from scans of the database, a row at a time, so the
/// process's memory grows by the output's own bytes, not by the entries, states and values it
/// was made from.
@Suite(.hangGuard(minutes: 10)) struct CLILongListingTests {
    /// A database of `count` states at `list/item00000` …, each a few bytes.
    static func database(_ folder: TemporaryFolder, states count: Int) throws -> String {
        let db = folder.file("states-\(count).sqlite")
        let store = try StateStore(path: db)
        try store.write { (transaction) throws(StateStoreError) in
            for index in 0..<count {
                let path = try RestorationPath(
                    validating: "list/item" + String(repeating: "0", count: 5 - String(index).count) + String(index))
                try transaction.save(["index": index], for: path)
            }
        }
        return db
    }

    /// Runs `statectl arguments` and returns its exit status, its stdout, and its peak resident
    /// set size in KiB (`VmHWM`). `wait4`'s `ru_maxrss` would not do: a child spawned with
    /// `vfork` semantics is charged the parent's peak at its `exec`. The peak is a high-water
    /// mark, so any reading taken after it gives it: `/proc/PID/status` is read every
    /// millisecond until the child has exited (its last readings come after its work, while it
    /// syncs, writes and exits), and after each piece of output taken from the pipe (a child
    /// with more output than the pipe holds cannot exit while it is still writing).
    static func peak(_ arguments: [String]) throws -> (status: Int32, stdout: String, kilobytes: Int) {
        let (process, pipe) = try CLI.start(CLI.executable, arguments)
        let status = "/proc/\(process.processIdentifier)/status"
        let highest = Lock(0)
        let running = Lock(true)
        @Sendable func read() {
            if let text = try? String(contentsOfFile: status, encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let value = Int(line.split(separator: " ").dropFirst().first ?? "")
            {
                highest.withLock { $0 = max($0, value) }
            }
        }
        let poller = Thread {
            while running.withLock({ $0 }) {
                read()
                usleep(1_000)
            }
        }
        poller.start()
        var output = Data()
        while true {
            let piece = pipe.fileHandleForReading.availableData
            read()
            if piece.isEmpty { break }
            output.append(piece)
        }
        process.waitUntilExit()
        running.withLock { $0 = false }
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), highest.withLock { $0 })
    }

    @Test func aListingOfManyStatesTakesLittleMoreMemoryThanItsOwnBytes() throws {
        let folder = TemporaryFolder()
        let few = try Self.database(folder, states: 1_000)
        let many = try Self.database(folder, states: 40_000)
        for command in [
            ["inspect"], ["inspect", "--json"], ["prune", "--older-than", "0s", "--dry-run"],
            ["prune", "--older-than", "0s"], ["export"],
        ] {
            // A real prune empties its file: it runs on copies.
            let removes = command == ["prune", "--older-than", "0s"]
            let copies =
                removes
                ? try [few, many].map { original in
                    let copy = original + ".copy"
                    try FileManager.default.copyItem(atPath: original, toPath: copy)
                    return copy
                } : [few, many]
            let small = try Self.peak(command + ["--db", copies[0]])
            #expect(small.status == 0, "\(command)")
            #expect(small.kilobytes > 0, "\(command): no peak read")
            let large = try Self.peak(command + ["--db", copies[1]])
            #expect(large.status == 0, "\(command)")
            let text = large.stdout
            // Every state is listed, in path order, and counted.
            if command == ["export"] || command.contains("--json") {
                // The export document counts its `states`; inspect's JSON its `entries`.
                let (countKey, listKey) = command == ["export"] ? ("state_count", "states") : ("count", "entries")
                let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                #expect(document[countKey] as? Int == 40_000)
                let listed = try #require(document[listKey] as? [[String: Any]])
                #expect(listed.count == 40_000)
                #expect(listed.first?["path"] as? String == "list/item00000")
                #expect(listed.last?["path"] as? String == "list/item39999")
                if command == ["export"] { #expect(try StateExport(decoding: Data(text.utf8)).states.count == 40_000) }
            } else {
                let lines = text.split(separator: "\n")
                #expect(lines.count == 40_002, "\(command): \(lines.prefix(3)) … \(lines.suffix(2))")
                #expect(lines[1].hasPrefix("list/item00000 "))
                #expect(lines[40_000].hasPrefix("list/item39999 "))
                #expect(lines[40_001].contains("40000 states"))
            }
            if removes { #expect(try StateStore(path: copies[1]).entries().isEmpty) }
            // Holding the entries and the table took about ten times the listing's own bytes
            // (35-41 MiB here), and holding every state, the document and its parsed value about
            // five times the document's; scanned, the output costs its bytes and a few pages of
            // SQLite's cache.
            let allowed = text.utf8.count / 1024 + 4 * 1024
            #expect(
                large.kilobytes - small.kilobytes < allowed,
                "\(command): \(small.kilobytes) KiB for 1,000 states, \(large.kilobytes) KiB for 40,000, \(text.utf8.count / 1024) KiB listed"
            )
        }
    }

    /// `statectl import` reads the document into memory and decodes it a state at a time: it
    /// costs the document's bytes and its states, never the document's JSON value whole.
    @Test func anImportTakesLittleMoreMemoryThanItsDocumentAndStates() throws {
        let folder = TemporaryFolder()
        var peaks: [(kilobytes: Int, documentBytes: Int)] = []
        for count in [1_000, 40_000] {
            let document = folder.file("export-\(count).json")
            let export = try CLI.run(["export", "--db", try Self.database(folder, states: count), "--output", document])
            #expect(export.status == 0, "\(export.stderr)")
            let target = folder.file("imported-\(count).sqlite")
            let result = try Self.peak(["import", "--db", target, document])
            #expect(result.status == 0)
            #expect(result.kilobytes > 0, "no peak read")
            #expect(try StateStore(path: target).entries().count == count)
            peaks.append(
                (
                    result.kilobytes,
                    Int(try #require(try FileManager.default.attributesOfItem(atPath: document)[.size] as? UInt64))
                ))
        }
        // The document's bytes and its states (their paths, type names and bytes, each state's
        // few bytes in their own allocations): about twice the document here (25 MiB for 13 MiB).
        // Its JSON value built whole took about five times the document (63 MiB).
        let growth = peaks[1].kilobytes - peaks[0].kilobytes
        let allowed = 5 * (peaks[1].documentBytes - peaks[0].documentBytes) / 2048 + 4 * 1024
        #expect(
            growth < allowed,
            "\(peaks[0].kilobytes) KiB for 1,000 states, \(peaks[1].kilobytes) KiB for 40,000, a document of \(peaks[1].documentBytes / 1024) KiB"
        )
    }

    /// A listing read by a pager that stops reading (`statectl inspect | less`, left open): the
    /// listing is printed after its read transaction ended, so the application beside it can
    /// still checkpoint its WAL back to nothing while `statectl` waits to write the rest.
    @Test func aListingNobodyReadsDoesNotHoldBackTheApplicationsCheckpoints() throws {
        let folder = TemporaryFolder()
        let db = try Self.database(folder, states: 20_000)
        // The application, open, with a commit in its WAL when the listing begins. Its own
        // integrity check (a read transaction of its own, a second after open) stays off: on a
        // loaded machine it would start before the checkpoint and hold it back too.
        let app = try StateStore(path: db, options: .init(backgroundCheck: .off))
        try app.save(["edit": 1], for: "list/edited")
        let (process, pipe) = try CLI.start(CLI.executable, ["inspect", "--db", db])
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        // The first bytes, then time to fill the pipe (2 MB of listing, 64 KiB of pipe) and block.
        let first = pipe.fileHandleForReading.readData(ofLength: 1)
        #expect(first == Data("P".utf8))
        usleep(300_000)
        #expect(process.isRunning, "statectl should wait for its reader")
        try app.save(["edit": 2], for: "list/edited")
        // A reader still in a read transaction on the WAL makes a truncating checkpoint busy (1).
        let checkpoint = try CLI.tool("sqlite3", [db, "PRAGMA wal_checkpoint(TRUNCATE);"])
        #expect(checkpoint == "0|0|0\n", "busy|frames|checkpointed: \(checkpoint)")
        let rest = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let listing = String(decoding: first + rest, as: UTF8.self)
        #expect(listing.contains("\n20001 states, ") && listing.hasSuffix(" in \(db)\n"))
        // One snapshot, taken before the second edit: the edited row at its first generation.
        let edited = try #require(listing.split(separator: "\n").first { $0.hasPrefix("list/edited ") })
        let fields = edited.split(separator: " ")  // ..., GENERATION, date, time
        #expect(fields[fields.count - 3] == "1", "\(edited)")
    }
}
