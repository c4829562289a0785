import Foundation
import StateStore
import StateStoreCrypto
import Testing

/// `statectl` on storage whose sync fails: the real binary, with `fdatasync` of every `-wal`
/// failing with EIO (a shim preloaded into it, as failing storage reports), beside an
/// application that holds the database open with its WAL begun. Each maintenance command
/// commits, cannot sync, and says so with exit 4; the change is in the database.
@Suite("statectl on storage whose sync fails", .serialized)
struct CLISyncFailureTests {
    let folder = TemporaryFolder("sync-fails-cli")

    /// The shim: `fdatasync` fails with EIO for files whose name ends in `-wal`, and is the
    /// C library's for every other file. Built with the toolchain's clang.
    static let shim: String? = {
        let source = """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>
            int fdatasync(int fd) {
                char link[64], path[4096];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, path, sizeof path - 1);
                if (n > 4) {
                    path[n] = 0;
                    if (strcmp(path + n - 4, "-wal") == 0) { errno = EIO; return -1; }
                }
                int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
                return real(fd);
            }
            """
        let folder = FileManager.default.temporaryDirectory.appending(path: "statestore-sync-shim-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "shim.c").path
        let library = folder.appending(path: "libfailsync.so").path
        guard FileManager.default.createFile(atPath: file, contents: Data(source.utf8)), let clang = clang() else {
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: clang)
        process.arguments = ["-shared", "-fPIC", "-o", library, file, "-ldl"]
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        return process.terminationStatus == 0 ? library : nil
    }()

    /// `clang` on the PATH, or beside `swift` (the toolchain carries it).
    static func clang() -> String? {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for folder in folders {
            for name in ["clang", "swift"] {
                let candidate = folder + "/" + name
                guard FileManager.default.isExecutableFile(atPath: candidate) else { continue }
                let resolved = URL(fileURLWithPath: candidate).resolvingSymlinksInPath().deletingLastPathComponent()
                    .appending(path: "clang").path
                if name == "clang" { return candidate }
                if FileManager.default.isExecutableFile(atPath: resolved) { return resolved }
            }
        }
        return nil
    }

    struct Note: Codable, Sendable, Equatable { var text: String }

    /// An application's store, open with a WAL that already holds frames: the command's commit
    /// appends to it (the header of a WAL SQLite begins is synced, and would fail the commit).
    func openApp(_ db: String) throws -> StateStore {
        let app = try StateStore(path: db, options: .init(backgroundCheck: .off))
        try app.save(Note(text: "old"), for: "app/old")
        return app
    }

    func failingSyncs(_ arguments: [String]) throws -> CLIResult {
        let shim = try #require(Self.shim, "the sync-failing shim could not be built with clang")
        return try CLI.run(arguments, environment: ["LD_PRELOAD": shim])
    }

    func expectNotSynced(_ result: CLIResult, _ db: String) {
        #expect(result.status == 4, "\(result)")
        #expect(
            result.stderr.hasPrefix(
                "statectl: the change was made and committed to \(db), but syncing it to storage failed ("), "\(result)"
        )
        #expect(result.stderr.contains("Do not run the command again"), "\(result)")
    }

    @Test func anImportThatCannotBeSyncedExitsFourWithTheStatesImported() throws {
        let db = folder.file("import.sqlite")
        let app = try openApp(db)
        let source = try StateStore.inMemory()
        try source.save(Note(text: "imported"), for: "imported/note")
        let document = folder.file("document.json")
        #expect(FileManager.default.createFile(atPath: document, contents: try StateExport(store: source).encoded()))
        expectNotSynced(try failingSyncs(["import", "--db", db, document]), db)
        #expect(try app.restore(Note.self, for: "imported/note") == Note(text: "imported"))
    }

    @Test func aPruneThatCannotBeSyncedExitsFourWithTheStatesRemoved() throws {
        let db = folder.file("prune.sqlite")
        let app = try openApp(db)
        try app.save(Note(text: "kept"), for: "app/kept")
        expectNotSynced(try failingSyncs(["prune", "--db", db, "--path", "app/old"]), db)
        #expect(try app.entries().map(\.path.rawValue) == ["app/kept"])
    }

    @Test func aRekeyThatCannotBeSyncedExitsFourWithTheStatesSealed() throws {
        let db = folder.file("rekey.sqlite")
        let app = try openApp(db)
        let keyFile = folder.file("new.key")
        #expect(
            FileManager.default.createFile(
                atPath: keyFile, contents: Data((0..<32).map { UInt8($0) &* 7 &+ 1 }),
                attributes: [.posixPermissions: 0o600]))
        expectNotSynced(try failingSyncs(["rekey", "--db", db, "--new-key-file", keyFile]), db)
        #expect(try app.state(at: "app/old")?.keyID == (try StateKey.file(keyFile)).id)
    }

    /// The same commands on storage that syncs: exit 0 (the shim is what fails them).
    @Test func withoutTheShimThePruneExitsZero() throws {
        let db = folder.file("plain.sqlite")
        let app = try openApp(db)
        let result = try CLI.run(["prune", "--db", db, "--path", "app/old"])
        #expect(result.status == 0, "\(result)")
        #expect(try app.entries().isEmpty)
    }
}
