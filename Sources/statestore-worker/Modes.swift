import Foundation
import MailExample
import StateStore
// What each of statestore-worker's modes does (see Worker.swift for how they are called).
import StateStoreLinux

/// What the main queue's event loop serves, kept for as long as the process runs.
nonisolated(unsafe) private var servedByTheEventLoop: [Any] = []

/// Runs the main queue until the process exits, keeping `objects` (the application, its
/// sources) where a leak checker sees them: `dispatchMain()` ends the main thread
/// (`pthread_exit`), and the stack its callers' locals live on no longer counts.
func runEventLoop(keeping objects: Any...) -> Never {
    servedByTheEventLoop = objects
    dispatchMain()
}

/// Writes one line to standard output with a single unbuffered write(2).
func emit(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 { exit(3) }
        offset += written
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("statestore-worker: \(message)\n".utf8))
    exit(2)
}

/// The state the save loop writes: a counter and enough payload to span a few pages.
struct LoopState: Codable, Sendable {
    var counter: Int
    var payload: String
}

func saveLoop(database: String, pathCount: Int) -> Never {
    let store: StateStore
    do {
        store = try StateStore(path: database)
    } catch {
        fail("\(error)")
    }
    var counter = 0
    var generator = SystemRandomNumberGenerator()
    while true {
        counter += 1
        let path: RestorationPath
        do {
            path = try RestorationPath(validating: "root/loop/c\(counter % pathCount)")
        } catch {
            fail("\(error)")
        }
        let size = Int.random(in: 100...6000, using: &generator)
        let state = LoopState(counter: counter, payload: String(repeating: "abcdefgh".randomElement()!, count: size))
        do {
            let result = try store.save(state, for: path)
            let stored = try store.state(at: path)
            emit("ack \(path) \(result.generation) \(stored?.checksum ?? 0)")
        } catch {
            emit("error \(error)")
        }
    }
}

/// `statectl soak`'s wave ballast: memory that rises and falls on command.
///
/// Each 1 MiB chunk is its own anonymous `mmap`, touched page by page so it is resident and
/// charged to the memory cgroup at once, and `munmap`ped on shrink so the pages go back to
/// the kernel immediately (no allocator in between keeps them). The supervisor sets the
/// target; this process only obeys, so the supervisor can give memory back the moment the
/// harness nears its limit.
func ballast() -> Never {
    let chunk = 1 << 20
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    var chunks: [UnsafeMutableRawPointer] = []
    // The cgroup's OOM killer should pick the ballast, never the harness beside it.
    try? "1000\n".write(toFile: "/proc/self/oom_score_adj", atomically: false, encoding: .utf8)
    // Die with the supervisor.
    _ = clinux_set_parent_death_signal(SIGKILL)
    while let line = readLine() {
        guard let target = Int(line.trimmingCharacters(in: .whitespaces)), target >= 0 else {
            emit("error bad target \(line)")
            continue
        }
        while chunks.count > target {
            munmap(chunks.removeLast(), chunk)
        }
        while chunks.count < target {
            guard let memory = mmap(nil, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                memory != MAP_FAILED
            else { break }
            var offset = 0
            while offset < chunk {
                memory.storeBytes(
                    of: UInt8(truncatingIfNeeded: offset / pageSize | 1), toByteOffset: offset, as: UInt8.self)
                offset += pageSize
            }
            chunks.append(memory)
        }
        emit("ok \(chunks.count)")
    }
    exit(0)
}

func contend(database: String, seconds: Double, name: String) -> Never {
    let store: StateStore
    do {
        store = try StateStore(path: database)
    } catch {
        fail("\(error)")
    }
    let deadline = Date().addingTimeInterval(seconds)
    var saves = 0, restores = 0, errors = 0, counter = 0
    while Date() < deadline {
        counter += 1
        do {
            // Half the traffic on paths both processes write, half on this process's own.
            let shared = counter.isMultiple(of: 2)
            let path = try RestorationPath(
                validating: shared ? "root/shared/c\(counter % 20)" : "root/\(name)/c\(counter % 20)")
            try store.save(
                LoopState(counter: counter, payload: String(repeating: "p", count: 200 + counter % 3000)), for: path)
            saves += 1
            _ = try store.restore(LoopState.self, for: path)
            _ = try store.entries(under: "root/shared")
            restores += 1
        } catch {
            errors += 1
            emit("error \(error)")
        }
    }
    emit("done \(saves) \(restores) \(errors)")
    exit(errors == 0 ? 0 : 1)
}

@MainActor
func appSession(database: String, ending: String) -> Never {
    do {
        let app = try MailSession.launch(database: database)
        try MailSession.session(app)
        if ending == "sigterm" || ending == "sigterm-runloop" {
            // Typed into the editor after the last save: only the SIGTERM handler's terminate,
            // which makes compose disappear and so commits the editor, can save this edit.
            app.compose?.editor.text = "Hello, world"
            app.application.installTerminationHandlers()
            emit("ready")
            if ending == "sigterm-runloop" {
                // The main thread stays this loop's: signals it started with blocked stay
                // blocked unless the handlers unblocked them (dispatchMain() unblocks them).
                servedByTheEventLoop = [app]
                while true { _ = RunLoop.main.run(mode: .default, before: .distantFuture) }
            }
            runEventLoop(keeping: app)
        }
        app.application.saveVisibleState()
        emit("ready")
        while true { sleep(60) }
    } catch {
        fail("\(error)")
    }
}

@MainActor
func appReport(database: String) -> Never {
    do {
        let app = try MailSession.launch(database: database)
        for (key, value) in MailSession.report(app).sorted(by: { $0.key < $1.key }) {
            emit("\(key)=\(value)")
        }
        for error in app.application.restorationCoordinator?.recentErrors ?? [] { emit("error=\(error)") }
        app.application.terminate()
        exit(0)
    } catch {
        fail("\(error)")
    }
}

/// Launches the mail app on `database`, prints "launched" as the launch returns, then waits to be
/// killed: what the writer was handed (a row set aside at launch) goes on until the kill.
@MainActor func appLaunch(database: String) -> Never {
    do {
        let app = try MailSession.launch(database: database)
        emit("launched")
        while true { withExtendedLifetime(app) { _ = sleep(60) } }
    } catch {
        fail("\(error)")
    }
}

/// Launches the mail app on `database`, prints each problem reported, terminates it, then prints
/// the process's peak resident set (`VmHWM`, KiB).
@MainActor func appPeak(database: String) -> Never {
    func peak() -> String {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return String(line.split(separator: " ").dropFirst().first ?? "?")
    }
    do {
        let app = try MailSession.launch(database: database)
        // A row over the size limit is set aside by the writer after the launch returned: it is
        // reported once the writer is done.
        app.application.restorationCoordinator?.store.waitForWriteBehind()
        for error in app.application.restorationCoordinator?.recentErrors ?? [] { emit("error=\(error)") }
        app.application.terminate()
        emit("peak_rss_kib=\(peak())")
        exit(0)
    } catch {
        fail("\(error)")
    }
}
