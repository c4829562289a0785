import Foundation
import StateStore
import Testing

/// `statectl check` on each broken file the fault suite makes, and the file unchanged:
/// damage inside a readable file is a finding (exit 1, in the report); a file that cannot
/// be opened at all is exit 3 with one line on stderr.
@Suite(.hangGuard(minutes: 10)) struct CLIFaultCheckTests {
    /// A closed database of 300 states of about 900 bytes.
    static func populated(_ path: String) throws {
        let store = try StateStore(path: path)
        try store.write { (transaction) throws(StateStoreError) in
            for index in 0..<300 {
                try transaction.save(
                    String(repeating: "x", count: 900), for: try RestorationPath(validating: "root/item\(index)"))
            }
        }
    }

    @Test(arguments: [
        ("damaged pages", Int32(1), "is damaged"),
        ("truncated", Int32(1), "is damaged"),
        ("not SQLite", Int32(3), "is not an SQLite database"),
        ("missing WAL", Int32(3), "write-ahead log"),
        ("newer schema", Int32(3), "newer than the"),
    ])
    func checkReportsEachBrokenFile(_ damage: String, _ status: Int32, _ message: String) throws {
        let folder = TemporaryFolder()
        let db = folder.file("state.sqlite")
        var keepAlive: StateStore?
        switch damage {
        case "missing WAL":
            // A live writer's files, copied without the -wal.
            let live = folder.file("live.sqlite")
            keepAlive = try StateStore(path: live)
            try keepAlive?.save("only in the WAL", for: "root")
            for suffix in ["", "-shm"] { try FileManager.default.copyItem(atPath: live + suffix, toPath: db + suffix) }
        default:
            try Self.populated(db)
            var bytes = fileBytes(db)
            switch damage {
            case "damaged pages":
                for offset in (4096 * 6)..<(4096 * 9) { bytes[offset] = UInt8(truncatingIfNeeded: offset) }
            case "truncated": bytes = Array(bytes.prefix(bytes.count / 2))
            case "not SQLite": bytes = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
            default: try rawSQL(db, "PRAGMA user_version = 99")
            }
            if damage != "newer schema" { try Data(bytes).write(to: URL(fileURLWithPath: db)) }
        }
        let before = FileSnapshot(db)
        let result = try CLI.run(["check", "--db", db])
        #expect(result.status == status, "\(result)")
        if status == 3 {
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.hasPrefix("statectl: ") && result.stderr.contains(message), "\(result)")
        } else {
            #expect(result.stdout.contains("Problems found:") && result.stdout.contains(message), "\(result)")
        }
        #expect(FileSnapshot(db) == before)
        _ = keepAlive
    }
}
