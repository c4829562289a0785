import Foundation
import Testing

/// A process its parent started with SIGTERM blocked (a `posix_spawn` from a thread that blocks
/// it, as libdispatch's worker threads do, passes the mask on) still terminates on SIGTERM once
/// its application installed the termination handlers: they unblock the signal.
@Suite("Termination handlers in a process started with the signals blocked", .hangGuard(minutes: 10))
struct BlockedSignalTests {
    /// Starts `statestore-worker arguments` with `blocked` signals blocked, its output in `output`.
    func spawnWorker(_ arguments: [String], blocking blocked: [Int32], output: String) throws -> pid_t {
        let executable = try builtProduct("statestore-worker")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in blocked { sigaddset(&mask, signal) }
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        try #require(code == 0, "posix_spawn: \(code)")
        return pid
    }

    /// The process's exit status once it ends within `seconds`; `nil` (and the process killed)
    /// when it does not.
    func exitStatus(of pid: pid_t, within seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return nil
    }

    /// Served by `dispatchMain()`, which unblocks signals on the main thread itself, and by
    /// Foundation's run loop on the main thread (as GTK's or any event loop of the app's own),
    /// which does not.
    @Test(arguments: ["sigterm", "sigterm-runloop"])
    func aBlockedSIGTERMStillTerminatesTheApplication(ending: String) throws {
        let folder = TemporaryFolder()
        let database = folder.file("state.sqlite")
        let output = folder.file("out")
        let pid = try spawnWorker(["app-session", database, ending], blocking: [SIGTERM, SIGINT], output: output)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, (try? String(contentsOfFile: output, encoding: .utf8))?.contains("ready") != true {
            usleep(20_000)
        }
        let started = try String(contentsOfFile: output, encoding: .utf8)
        try #require(started.contains("ready"), "the worker did not get ready: \(started)")
        kill(pid, SIGTERM)
        let status = exitStatus(of: pid, within: 20)
        #expect(
            status == 128 + SIGTERM,
            "SIGTERM stayed pending: the handler never ran (status \(String(describing: status)))")
        // The handler's terminate() saved the edit typed after the last save.
        #expect(
            try rawRows(database, "SELECT count(*) FROM states WHERE CAST(bytes AS TEXT) LIKE '%Hello, world%'")
                == [["1"]])
    }
}
