import Foundation
import StateStore

/// The guest's side of the VM lane's real power cuts (`scripts/vm-cgroup2`): `power-save DB
/// MODE` saves `seq` = 1, 2, 3 … (after what the file already holds) round-robin to seven
/// paths, printing `LANE-PC-ACK MODE SEQ` after each save returns, until the VM is killed;
/// `power-verify DB MODE` opens what the disk kept after the cut and prints `LANE-PC-FOUND`
/// with the highest sequence found, whether the seven rows are exactly the state after that
/// save (a prefix of the saves), the integrity check and the checksums.
enum PowerCutGuest {
    struct Value: Codable, Sendable {
        var seq: Int
        var padding: String
    }
    static let paths = 7

    static func values(in store: StateStore) throws -> [Int?] {
        try (0..<paths).map { index in
            try store.restore(Value.self, for: RestorationPath(validating: "p/\(index)"))?.seq
        }
    }

    static func save(database: String, mode: String) -> Never {
        do {
            let store = try StateStore(
                path: database, options: .init(synchronous: mode == "full" ? .full : .normal, backgroundCheck: .off))
            var seq = try values(in: store).compactMap { $0 }.max() ?? 0
            let padding = String(repeating: "s", count: 200)
            emit("LANE-PC-SAVING \(mode) from=\(seq)")
            while true {
                seq += 1
                try store.save(Value(seq: seq, padding: padding), for: RestorationPath(validating: "p/\(seq % paths)"))
                emit("LANE-PC-ACK \(mode) \(seq)")
            }
        } catch {
            emit("LANE-PC-ERROR \(mode) \(error)")
            exit(1)
        }
    }

    static func verify(database: String, mode: String) -> Never {
        guard FileManager.default.fileExists(atPath: database) else {
            emit("LANE-PC-FOUND \(mode) opened=absent highest=0 prefix=yes integrity=ok checksums=ok")
            exit(0)
        }
        do {
            let store = try StateStore(
                path: database, options: .init(synchronous: mode == "full" ? .full : .normal, backgroundCheck: .off))
            let health = try store.check()
            let found = try values(in: store)
            let highest = found.compactMap { $0 }.max() ?? 0
            // After save K, path i holds the last seq <= K with seq % 7 == i (none if there is none).
            let expected: [Int?] = (0..<paths).map { index in
                let seq = highest - ((highest - index) % paths + paths) % paths
                return seq >= 1 ? seq : nil
            }
            emit(
                "LANE-PC-FOUND \(mode) opened=yes highest=\(highest) prefix=\(found == expected ? "yes" : "no")"
                    + " integrity=\(health.integrity == ["ok"] ? "ok" : "failed") checksums=\(health.checksumMismatches.isEmpty ? "ok" : "failed")"
                    + (found == expected
                        ? "" : " found=\(found.map { $0.map(String.init) ?? "-" }.joined(separator: ","))")
            )
            exit(0)
        } catch {
            emit(
                "LANE-PC-FOUND \(mode) opened=no error=\(String(describing: error).replacingOccurrences(of: "\n", with: " "))"
            )
            exit(1)
        }
    }
}

/// The guest's side of the VM lane's power cuts during recoveries. The host builds the damaged
/// database once (`power-recover-template FILE`: 2,000 states of 1 KB, a page in its middle
/// overwritten), recovers a copy of it and prints how many states that keeps, and puts both
/// in the guest's initramfs. `power-recover DB TEMPLATE` then puts a copy of the template at
/// `DB` and recovers it with `StateStore.openOrRecover`, again and again, printing
/// `LANE-PC-DAMAGED N` once the damaged file is in place and synced and `LANE-PC-RECOVERED N`
/// once the recovery returned, until the VM is killed. `power-recover-verify DB EXPECTED`
/// opens what the disk kept as an application would (`openOrRecover`, with the full check)
/// and prints `LANE-PC-RECOVER` with the states found, whether each is the one written at its
/// path, and the integrity check: a cut at any moment of a recovery must leave the damaged
/// file or the whole recovered one (EXPECTED states), never a copy cut short.
enum RecoveryPowerCut {
    struct Value: Codable, Sendable {
        var index: Int
        var padding: String
    }
    static let count = 2_000
    static let options = StateStore.Options(openCheck: .full, backgroundCheck: .off)

    static func padding(_ index: Int) -> String {
        String(repeating: String(UnicodeScalar(UInt8(97 + index % 26))), count: 1_000)
    }

    /// Builds the damaged database at `path`, and prints how many states a recovery keeps of it.
    static func template(at path: String) -> Never {
        do {
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            do {
                let store = try StateStore(path: path, options: .init(backgroundCheck: .off))
                try store.write { (transaction) throws(StateStoreError) in
                    for index in 0..<count {
                        try transaction.save(
                            Value(index: index, padding: padding(index)),
                            for: try RestorationPath(validating: "r/\(index)"))
                    }
                }
            }
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: (size / 4096 / 2) * 4096)
            handle.write(Data(repeating: 0xEE, count: 4096))
            try handle.close()
            let scratch = path + ".expected"
            unlink(scratch)
            try FileManager.default.copyItem(atPath: path, toPath: scratch)
            let kept = try StateStore.openOrRecover(path: scratch, options: options).recovery?.salvage.states ?? -1
            for name in try FileManager.default.contentsOfDirectory(
                atPath: (path as NSString).deletingLastPathComponent)
            where name.hasPrefix((scratch as NSString).lastPathComponent) {
                unlink((path as NSString).deletingLastPathComponent + "/" + name)
            }
            print(kept)
            exit(kept > 0 ? 0 : 1)
        } catch {
            fail("power-recover-template: \(error)")
        }
    }

    static func loop(database: String, template: String) -> Never {
        let folder = (database as NSString).deletingLastPathComponent
        do {
            var round = 0
            while true {
                round += 1
                // What earlier rounds moved aside, then the damaged file, put in place whole.
                for name in try FileManager.default.contentsOfDirectory(atPath: folder)
                where name.hasPrefix((database as NSString).lastPathComponent + ".broken-") {
                    unlink(folder + "/" + name)
                }
                let staged = database + ".staged"
                unlink(staged)
                try FileManager.default.copyItem(atPath: template, toPath: staged)
                let handle = try FileHandle(forUpdating: URL(fileURLWithPath: staged))
                try handle.synchronize()
                try handle.close()
                for suffix in ["-wal", "-shm"] { unlink(database + suffix) }
                guard rename(staged, database) == 0 else {
                    throw PowerCut.Failure(message: "rename: \(String(cString: strerror(errno)))")
                }
                let directory = open(folder, O_RDONLY | O_DIRECTORY)
                fsync(directory)
                close(directory)
                emit("LANE-PC-DAMAGED \(round)")
                let (_, recovery) = try StateStore.openOrRecover(path: database, options: options)
                emit("LANE-PC-RECOVERED \(round) states=\(recovery?.salvage.states ?? -1)")
            }
        } catch {
            emit("LANE-PC-ERROR recover \(error)")
            exit(1)
        }
    }

    static func verify(database: String, expected: Int) -> Never {
        guard
            FileManager.default.fileExists(atPath: database)
                || FileManager.default.fileExists(atPath: database + ".recovering")
        else {
            emit("LANE-PC-RECOVER opened=absent")
            exit(0)
        }
        do {
            let (store, recovery) = try StateStore.openOrRecover(path: database, options: options)
            let health = try store.check()
            var found = 0, wrong = 0
            for index in 0..<count {
                guard let value = try store.restore(Value.self, for: RestorationPath(validating: "r/\(index)")) else {
                    continue
                }
                found += 1
                if value.index != index || value.padding != padding(index) { wrong += 1 }
            }
            let extra = try store.entries().count - found
            emit(
                "LANE-PC-RECOVER opened=yes recovered=\(recovery == nil ? "no" : "yes") found=\(found) expected=\(expected)"
                    + " values=\(wrong == 0 && extra == 0 ? "ok" : "bad(\(wrong)-wrong,\(extra)-others)")"
                    + " integrity=\(health.integrity == ["ok"] ? "ok" : "failed") checksums=\(health.checksumMismatches.isEmpty ? "ok" : "failed")"
            )
            exit(0)
        } catch {
            emit(
                "LANE-PC-RECOVER opened=no error=\(String(describing: error).replacingOccurrences(of: "\n", with: " "))"
            )
            exit(1)
        }
    }
}
