// statestore-worker: the process StateStore's tests and `statectl soak` start, stop and kill.
//
//     statestore-worker save-loop DB [PATHS]    save forever; print "ack PATH GENERATION CHECKSUM" after each save returns
//     statestore-worker app-session DB [kill|sigterm]   launch the mail app (Examples/Mail), run a session, print
//                                                "ready", then wait to be killed (after an explicit save) or for SIGTERM
//     statestore-worker app-report DB              relaunch the mail app; print what was restored, one key=value a line
//                                                (each app-* mode seals with the key in STATESTORE_KEY_FILE when set)
//     statestore-worker app-peak DB              launch the mail app, print "error=..." lines,
//                                                terminate, print "peak_rss_kib=N" (VmHWM)
//     statestore-worker code-session DB          the app built in code (CodeBuiltApp): session, "ready", wait to be killed
//     statestore-worker code-report DB           relaunch it; print what was restored, one key=value a line
//     statestore-worker scenes-session DB [keep|close-first]   two windows on the same paths; "ready", wait to be killed
//     statestore-worker scenes-report DB         relaunch one window per saved scene; print "window=..." lines
//     statestore-worker scene-session DB DRAFT [another|read-only|wait:MS]   one instance of the mail app:
//                                                a reply with DRAFT typed, saved; "ready scene=... outcome=...
//                                                passed=... waited_ms=... restored=...", then types and saves each
//                                                stdin line as the draft ("saved TEXT"), until killed or SIGTERM
//     statestore-worker scene-report DB [another|read-only|wait:MS] [hold]   one instance: print
//                                                "scene=... restored=... draft=...", then terminate (with `hold`:
//                                                "holding", then run until killed or SIGTERM)
//     statestore-worker rename-session DB / rename-report DB   a controller renamed by a new app version
//                                                (STATESTORE_APP_VERSION=1|2)
//     statestore-worker rebuild-timing N DB [restoring]   time restoreHierarchy of an archive of N plain
//                                                children (with `restoring`, state-restoring ones)
//     statestore-worker hostile-archive KIND DB  a mail-app session, then a hostile archive (two-presentations,
//                                                million, deep) in its place, for timing `app-report DB` by hand
//     statestore-worker writebehind-kill DB STEPS PADDING [exit|threadless|one-spare-thread]   push and
//                                                pop STEPS times after one flush point, then SIGKILL itself
//                                                right after the last disappearance (with `exit`: exit(0),
//                                                without terminate(); with `threadless`: at its thread limit
//                                                from the start; with `one-spare-thread`: one thread short of it)
//     statestore-worker ballast                  hold as many MiB as each stdin line says (grow or shrink),
//                                                answer "ok MIB" after each; EOF frees everything and exits
//     statestore-worker contend DB SECONDS NAME   save and restore shared and own paths for SECONDS;
//                                                print "done SAVES RESTORES ERRORS", and each error
//     statestore-worker check-after-chdir FIRST SECOND NAME   open NAME (a relative path) in folder FIRST,
//                                                move to folder SECOND, wait for the check after open;
//                                                print "status=..." (what it checked: the file opened)
//
// Every line is flushed as soon as it is written, so a parent reading the pipe
// knows exactly which saves were acknowledged before it killed the worker.
import StateStoreLinux
import Foundation
import MailExample
import StateStore

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
                  memory != MAP_FAILED else { break }
            var offset = 0
            while offset < chunk {
                memory.storeBytes(of: UInt8(truncatingIfNeeded: offset / pageSize | 1), toByteOffset: offset, as: UInt8.self)
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
            let path = try RestorationPath(validating: shared ? "root/shared/c\(counter % 20)" : "root/\(name)/c\(counter % 20)")
            try store.save(LoopState(counter: counter, payload: String(repeating: "p", count: 200 + counter % 3000)), for: path)
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
        if ending == "sigterm" {
            // Typed into the editor after the last save: only the SIGTERM handler's terminate,
            // which makes compose disappear and so commits the editor, can save this edit.
            app.compose?.editor.text = "Hello, world"
            app.application.installTerminationHandlers()
            emit("ready")
            dispatchMain()
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

/// Launches the mail app on `database`, prints each problem reported, terminates it, then prints the process's peak resident set (`VmHWM`, KiB).
@MainActor func appPeak(database: String) -> Never {
    func peak() -> String {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return String(line.split(separator: " ").dropFirst().first ?? "?")
    }
    do {
        let app = try MailSession.launch(database: database)
        for error in app.application.restorationCoordinator?.recentErrors ?? [] { emit("error=\(error)") }
        app.application.terminate()
        emit("peak_rss_kib=\(peak())")
        exit(0)
    } catch {
        fail("\(error)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "save-loop":
    guard arguments.count >= 2 else { fail("usage: save-loop DB [PATHS]") }
    saveLoop(database: arguments[1], pathCount: arguments.count > 2 ? max(1, Int(arguments[2]) ?? 50) : 50)
case "app-session":
    guard arguments.count >= 2 else { fail("usage: app-session DB [kill|sigterm]") }
    MainActor.assumeIsolated { appSession(database: arguments[1], ending: arguments.count > 2 ? arguments[2] : "kill") }
case "app-report":
    guard arguments.count >= 2 else { fail("usage: app-report DB") }
    MainActor.assumeIsolated { appReport(database: arguments[1]) }
case "app-peak":
    guard arguments.count >= 2 else { fail("usage: app-peak DB") }
    MainActor.assumeIsolated { appPeak(database: arguments[1]) }
case "scene-session":
    guard arguments.count >= 3, let policy = SceneInstances.policy(arguments.count > 3 ? arguments[3] : "another") else {
        fail("usage: scene-session DB DRAFT [another|read-only|wait:MS]")
    }
    MainActor.assumeIsolated { SceneInstances.session(database: arguments[1], draft: arguments[2], policy: policy) }
case "scene-report":
    let options = arguments.dropFirst(2)
    guard arguments.count >= 2, let policy = SceneInstances.policy(options.first { $0 != "hold" } ?? "another") else {
        fail("usage: scene-report DB [another|read-only|wait:MS] [hold]")
    }
    MainActor.assumeIsolated { SceneInstances.report(database: arguments[1], policy: policy, hold: options.contains("hold")) }
case "code-session", "scenes-session", "rename-session":
    guard arguments.count >= 2 else { fail("usage: \(arguments[0]) DB") }
    MainActor.assumeIsolated {
        do {
            switch arguments[0] {
            case "code-session":
                let (application, window, _) = try CodeBuiltApp.launch(database: arguments[1])
                CodeBuiltApp.session(application, window)
                application.saveVisibleState()
                emit("ready")
            case "scenes-session":
                emit("ready \(try ScenesApp.session(database: arguments[1], ending: arguments.count > 2 ? arguments[2] : "keep"))")
            default:
                try RenameApp.session(database: arguments[1])
                emit("ready")
            }
        } catch {
            fail("\(error)")
        }
    }
    while true { sleep(60) }
case "code-report", "scenes-report", "rename-report":
    guard arguments.count >= 2 else { fail("usage: \(arguments[0]) DB") }
    MainActor.assumeIsolated {
        do {
            switch arguments[0] {
            case "code-report":
                let (application, window, restoration) = try CodeBuiltApp.launch(database: arguments[1])
                for (key, value) in CodeBuiltApp.report(window, restoration).sorted(by: { $0.key < $1.key }) { emit("\(key)=\(value)") }
                for error in application.restorationCoordinator?.recentErrors ?? [] { emit("error=\(error)") }
                application.terminate()
            case "scenes-report":
                for line in try ScenesApp.report(database: arguments[1]) { emit(line) }
            default:
                for (key, value) in try RenameApp.report(database: arguments[1]).sorted(by: { $0.key < $1.key }) { emit("\(key)=\(value)") }
            }
        } catch {
            fail("\(error)")
        }
    }
    exit(0)
case "rebuild-timing":
    guard arguments.count >= 3, let count = Int(arguments[1]) else { fail("usage: rebuild-timing N DB [restoring]") }
    MainActor.assumeIsolated {
        do {
            emit(try RebuildTiming.run(count: count, database: arguments[2], restoring: arguments.count > 3 && arguments[3] == "restoring"))
        } catch {
            fail("\(error)")
        }
    }
    exit(0)
case "hostile-archive":
    guard arguments.count >= 3 else { fail("usage: hostile-archive two-presentations|million|deep DB") }
    MainActor.assumeIsolated {
        do {
            try HostileArchive.write(arguments[1], database: arguments[2])
        } catch {
            fail("\(error)")
        }
    }
    exit(0)
case "writebehind-kill":
    guard arguments.count >= 4, let steps = Int(arguments[2]), let padding = Int(arguments[3]),
          arguments.count < 5 || ["exit", "threadless", "one-spare-thread"].contains(arguments[4])
    else {
        fail("usage: writebehind-kill DB STEPS PADDING [exit|threadless|one-spare-thread]")
    }
    let ending = arguments.count >= 5 ? arguments[4] : ""
    MainActor.assumeIsolated {
        WriteBehindKill.run(
            database: arguments[1], steps: steps, padding: padding, exitingNormally: ending == "exit",
            spareThreads: ending == "threadless" ? 0 : ending == "one-spare-thread" ? 1 : nil
        )
    }
case "power-cut":
    guard arguments.count >= 5, let points = Int(arguments[2]), let seed = UInt64(arguments[3]) else {
        fail("usage: power-cut full|normal|full-writebehind|normal-writebehind POINTS SEED FOLDER")
    }
    PowerCut.run(mode: arguments[1], points: points, seed: seed, folder: arguments[4])
case "power-cut-beside-app":
    guard arguments.count >= 2 else { fail("usage: power-cut-beside-app FOLDER") }
    PowerCutBesideApp.run(folder: arguments[1])
case "sync-fails":
    guard arguments.count >= 2 else { fail("usage: sync-fails FOLDER") }
    SyncFailure.run(folder: arguments[1])
case "power-save", "power-verify":
    guard arguments.count >= 3, ["full", "normal"].contains(arguments[2]) else { fail("usage: \(arguments[0]) DB full|normal") }
    if arguments[0] == "power-save" {
        PowerCutGuest.save(database: arguments[1], mode: arguments[2])
    } else {
        PowerCutGuest.verify(database: arguments[1], mode: arguments[2])
    }
case "power-recover-template":
    guard arguments.count >= 2 else { fail("usage: power-recover-template FILE") }
    RecoveryPowerCut.template(at: arguments[1])
case "power-recover":
    guard arguments.count >= 3 else { fail("usage: power-recover DB TEMPLATE") }
    RecoveryPowerCut.loop(database: arguments[1], template: arguments[2])
case "power-recover-verify":
    guard arguments.count >= 3, let expected = Int(arguments[2]) else { fail("usage: power-recover-verify DB EXPECTED") }
    RecoveryPowerCut.verify(database: arguments[1], expected: expected)
case "ballast":
    ballast()
case "contend":
    guard arguments.count >= 4, let seconds = Double(arguments[2]) else { fail("usage: contend DB SECONDS NAME") }
    contend(database: arguments[1], seconds: seconds, name: arguments[3])
case "check-after-chdir":
    guard arguments.count >= 4 else { fail("usage: check-after-chdir FIRST SECOND NAME") }
    guard chdir(arguments[1]) == 0 else { fail("cannot enter \(arguments[1])") }
    do {
        let store = try StateStore(path: arguments[3], options: .init(backgroundCheck: .quick(after: .seconds(2))))
        // At once: the check begins 2 s after the open, in the second folder.
        guard chdir(arguments[2]) == 0 else { fail("cannot enter \(arguments[2])") }
        emit("status=\(store.waitForBackgroundCheck(timeout: .seconds(60)))")
    } catch {
        fail("\(error)")
    }
    exit(0)
default:
    fail("usage: statestore-worker save-loop DB [PATHS] | app-session DB [kill|sigterm] | app-report DB | ballast | contend DB SECONDS NAME")
}
