// statestore-worker: the process StateStore's tests, `statectl soak` and the VM lane start, stop
// and kill. One subcommand a mode; `statestore-worker help MODE` says what each takes. Every line
// it prints is flushed as soon as it is written, so a parent reading the pipe knows exactly which
// saves were acknowledged before it killed the worker.
import ArgumentParser
import Foundation
import StateStore

@main
struct Worker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statestore-worker",
        abstract: "The process StateStore's tests and statectl soak start, stop and kill.",
        subcommands: [
            SaveLoop.self, AppSession.self, AppReport.self, AppPeak.self, AppLaunch.self,
            SceneSession.self, SceneReport.self,
            CodeSession.self, CodeReport.self, ScenesSession.self, ScenesReport.self, RenameSession.self,
            RenameReport.self,
            RebuildTimingMode.self, HostileArchiveMode.self, WriteBehindKillMode.self,
            PowerCutMode.self, PowerCutBesideAppMode.self, SyncFails.self, PowerSave.self, PowerVerify.self,
            PowerRecoverTemplate.self, PowerRecover.self, PowerRecoverVerify.self,
            Ballast.self, Contend.self, CheckAfterChdir.self, MemoryFlatMode.self,
        ]
    )
}

/// The database every mode works on.
struct DatabaseArgument: ParsableArguments {
    @Argument(help: "The state database.") var database: String
}

struct SaveLoop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save-loop",
        abstract: "Save forever; print \"ack PATH GENERATION CHECKSUM\" after each save returns.")
    @OptionGroup var db: DatabaseArgument
    @Argument(help: "How many paths the saves cycle through.") var paths = 50
    func run() { saveLoop(database: db.database, pathCount: max(1, paths)) }
}

/// How an `app-session` waits for its end: killed, or SIGTERM with the main queue served by
/// `dispatchMain()` (`sigterm`) or by Foundation's run loop on the main thread
/// (`sigterm-runloop`, as an app with an event loop of its own serves it).
enum SessionEnding: String, ExpressibleByArgument {
    case kill, sigterm
    case sigtermRunLoop = "sigterm-runloop"
}

struct AppSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-session",
        abstract:
            "Launch the mail app, run a session, print \"ready\", then wait to be killed (after an explicit save) or for SIGTERM (under dispatchMain, or the run loop with sigterm-runloop).",
        discussion: "Each app-* mode seals with the key in STATESTORE_KEY_FILE when it is set.")
    @OptionGroup var db: DatabaseArgument
    @Argument var ending = SessionEnding.kill
    func run() { MainActor.assumeIsolated { appSession(database: db.database, ending: ending.rawValue) } }
}

struct AppReport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-report", abstract: "Relaunch the mail app; print what was restored, one key=value a line.")
    @OptionGroup var db: DatabaseArgument
    func run() { MainActor.assumeIsolated { appReport(database: db.database) } }
}

struct AppPeak: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-peak",
        abstract: "Launch the mail app, print \"error=...\" lines, terminate, print \"peak_rss_kib=N\" (VmHWM).")
    @OptionGroup var db: DatabaseArgument
    func run() { MainActor.assumeIsolated { appPeak(database: db.database) } }
}

struct AppLaunch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-launch",
        abstract: "Launch the mail app, print \"launched\", then wait to be killed while the writer goes on.")
    @OptionGroup var db: DatabaseArgument
    func run() { MainActor.assumeIsolated { appLaunch(database: db.database) } }
}

/// `another`, `read-only` or `wait:MILLISECONDS`.
struct ScenePolicy: ExpressibleByArgument {
    let policy: SceneConflictPolicy
    init?(argument: String) {
        guard let policy = SceneInstances.policy(argument) else { return nil }
        self.policy = policy
    }
    init(_ policy: SceneConflictPolicy) { self.policy = policy }
    var defaultValueDescription: String { "another" }
}

struct SceneSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scene-session",
        abstract: "One instance of the mail app: a reply with DRAFT typed and saved.",
        discussion: """
            Prints "ready scene=... outcome=... passed=... waited_ms=... restored=...", then types and saves each \
            standard-input line as the draft ("saved TEXT"), until killed or SIGTERM.
            """)
    @OptionGroup var db: DatabaseArgument
    @Argument var draft: String
    @Argument(help: "another, read-only or wait:MS: what the window does when its scene is held.")
    var policy = ScenePolicy(.openAnotherScene)
    func run() {
        MainActor.assumeIsolated { SceneInstances.session(database: db.database, draft: draft, policy: policy.policy) }
    }
}

struct SceneReport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scene-report",
        abstract:
            "One instance: print \"scene=... restored=... draft=...\", then terminate (with hold: \"holding\", then run until killed or SIGTERM)."
    )
    @OptionGroup var db: DatabaseArgument
    @Argument(
        help: """
            another, read-only or wait:MS, and hold, in any order; with hold, ballast:MB (memory written to, \
            which a kill takes a while to free) and linger:MS (the scene's claim outlives the process by MS).
            """)
    var options: [String] = []
    /// The number after `prefix` in an option, or 0.
    func value(_ prefix: String) -> Int {
        options.first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }
    func validate() throws {
        for option in options where option != "hold" && SceneInstances.policy(option) == nil {
            guard ["ballast:", "linger:"].contains(where: { option.hasPrefix($0) }),
                Int(option.drop { $0 != ":" }.dropFirst()) != nil
            else {
                throw ValidationError("\(option) is not another, read-only, wait:MS, hold, ballast:MB or linger:MS")
            }
        }
    }
    func run() {
        let policy =
            options.first { $0 != "hold" && SceneInstances.policy($0) != nil }.flatMap(SceneInstances.policy)
            ?? .openAnotherScene
        let (ballast, linger) = (value("ballast:"), value("linger:"))
        MainActor.assumeIsolated {
            SceneInstances.report(
                database: db.database, policy: policy, hold: options.contains("hold"), ballastMegabytes: ballast,
                lingerMilliseconds: linger)
        }
    }
}

/// A session that ends waiting to be killed, its first line starting with "ready".
private func waitToBeKilled(_ session: @MainActor () throws -> Void) -> Never {
    MainActor.assumeIsolated {
        do { try session() } catch { fail("\(error)") }
    }
    while true { sleep(60) }
}

/// A relaunch that prints what it found, then exits.
private func report(_ lines: @MainActor () throws -> [String]) -> Never {
    MainActor.assumeIsolated {
        do {
            for line in try lines() { emit(line) }
        } catch {
            fail("\(error)")
        }
    }
    exit(0)
}

struct CodeSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code-session",
        abstract: "The app built in code (CodeBuiltApp): session, \"ready\", wait to be killed.")
    @OptionGroup var db: DatabaseArgument
    func run() {
        waitToBeKilled {
            let (application, window, _) = try CodeBuiltApp.launch(database: db.database)
            CodeBuiltApp.session(application, window)
            application.saveVisibleState()
            emit("ready")
        }
    }
}

struct CodeReport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "code-report",
        abstract: "Relaunch the app built in code; print what was restored, one key=value a line.")
    @OptionGroup var db: DatabaseArgument
    func run() {
        report {
            let (application, window, restoration) = try CodeBuiltApp.launch(database: db.database)
            var lines = CodeBuiltApp.report(window, restoration).sorted(by: { $0.key < $1.key }).map {
                "\($0.key)=\($0.value)"
            }
            lines += (application.restorationCoordinator?.recentErrors ?? []).map { "error=\($0)" }
            application.terminate()
            return lines
        }
    }
}

enum ScenesEnding: String, ExpressibleByArgument {
    case keep
    case closeFirst = "close-first"
}

struct ScenesSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenes-session", abstract: "Two windows on the same paths; \"ready SCENE\", wait to be killed.")
    @OptionGroup var db: DatabaseArgument
    @Argument var ending = ScenesEnding.keep
    func run() {
        waitToBeKilled { emit("ready \(try ScenesApp.session(database: db.database, ending: ending.rawValue))") }
    }
}

struct ScenesReport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenes-report", abstract: "Relaunch one window per saved scene; print \"window=...\" lines.")
    @OptionGroup var db: DatabaseArgument
    func run() { report { try ScenesApp.report(database: db.database) } }
}

struct RenameSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename-session",
        abstract: "A controller renamed by a new app version (STATESTORE_APP_VERSION=1|2): the session.")
    @OptionGroup var db: DatabaseArgument
    func run() {
        waitToBeKilled {
            try RenameApp.session(database: db.database)
            emit("ready")
        }
    }
}

struct RenameReport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename-report",
        abstract: "A controller renamed by a new app version: the relaunch, key=value lines.")
    @OptionGroup var db: DatabaseArgument
    func run() {
        report {
            try RenameApp.report(database: db.database).sorted(by: { $0.key < $1.key }).map { "\($0.key)=\($0.value)" }
        }
    }
}

struct RebuildTimingMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild-timing",
        abstract: "Time restoreHierarchy of an archive of N plain children (with `restoring`, state-restoring ones).")
    @Argument var count: Int
    @OptionGroup var db: DatabaseArgument
    @Argument var restoring: String?
    func validate() throws {
        if let restoring, restoring != "restoring" { throw ValidationError("the last word is `restoring`, or nothing") }
    }
    func run() { report { [try RebuildTiming.run(count: count, database: db.database, restoring: restoring != nil)] } }
}

enum HostileArchiveKind: String, ExpressibleByArgument {
    case twoPresentations = "two-presentations"
    case million, deep
}

struct HostileArchiveMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile-archive",
        abstract: "A mail-app session, then a hostile archive in its place, for timing `app-report DB` by hand.")
    @Argument var kind: HostileArchiveKind
    @OptionGroup var db: DatabaseArgument
    func run() {
        report {
            try HostileArchive.write(kind.rawValue, database: db.database)
            return []
        }
    }
}

enum WriteBehindKillEnding: String, ExpressibleByArgument {
    case exit, threadless
    case oneSpareThread = "one-spare-thread"
}

struct WriteBehindKillMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writebehind-kill",
        abstract:
            "Push and pop STEPS times after one flush point, then SIGKILL itself right after the last disappearance.",
        discussion: """
            exit: exit(0) instead, without terminate(); threadless: at its thread limit from the start; \
            one-spare-thread: one thread short of it.
            """)
    @OptionGroup var db: DatabaseArgument
    @Argument var steps: Int
    @Argument var padding: Int
    @Argument var ending: WriteBehindKillEnding?
    func run() {
        MainActor.assumeIsolated {
            WriteBehindKill.run(
                database: db.database, steps: steps, padding: padding, exitingNormally: ending == .exit,
                spareThreads: ending == .threadless ? 0 : ending == .oneSpareThread ? 1 : nil
            )
        }
    }
}

enum PowerCutKind: String, ExpressibleByArgument {
    case full, normal
    case fullWriteBehind = "full-writebehind"
    case normalWriteBehind = "normal-writebehind"
}

struct PowerCutMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-cut", abstract: "Simulated power cuts under the crash VFS.")
    @Argument var mode: PowerCutKind
    @Argument var points: Int
    @Argument var seed: UInt64
    @Argument var folder: String
    func run() { PowerCut.run(mode: mode.rawValue, points: points, seed: seed, folder: folder) }
}

struct PowerCutBesideAppMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-cut-beside-app", abstract: "A simulated power cut beside the mail app.")
    @Argument var folder: String
    func run() { PowerCutBesideApp.run(folder: folder) }
}

struct SyncFails: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-fails", abstract: "A sync that fails under the crash VFS.")
    @Argument var folder: String
    func run() { SyncFailure.run(folder: folder) }
}

enum SynchronousMode: String, ExpressibleByArgument { case full, normal }

struct PowerSave: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-save", abstract: "The VM guest's saves before a real power cut.")
    @OptionGroup var db: DatabaseArgument
    @Argument var mode: SynchronousMode
    func run() { PowerCutGuest.save(database: db.database, mode: mode.rawValue) }
}

struct PowerVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-verify", abstract: "The VM guest's check after a real power cut.")
    @OptionGroup var db: DatabaseArgument
    @Argument var mode: SynchronousMode
    func run() { PowerCutGuest.verify(database: db.database, mode: mode.rawValue) }
}

struct PowerRecoverTemplate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-recover-template",
        abstract: "The damaged database the VM's power cuts recover over and over.")
    @Argument var file: String
    func run() { RecoveryPowerCut.template(at: file) }
}

struct PowerRecover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-recover", abstract: "Recover a copy of TEMPLATE at DB, over and over.")
    @OptionGroup var db: DatabaseArgument
    @Argument var template: String
    func run() { RecoveryPowerCut.loop(database: db.database, template: template) }
}

struct PowerRecoverVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-recover-verify", abstract: "Check what a recovery cut by a power loss kept.")
    @OptionGroup var db: DatabaseArgument
    @Argument var expected: Int
    func run() { RecoveryPowerCut.verify(database: db.database, expected: expected) }
}

struct Ballast: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ballast",
        abstract:
            "Hold as many MiB as each standard-input line says (grow or shrink), answering \"ok MIB\"; EOF frees everything."
    )
    func run() { ballast() }
}

struct Contend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contend",
        abstract:
            "Save and restore shared and own paths for SECONDS; print \"done SAVES RESTORES ERRORS\", and each error.")
    @OptionGroup var db: DatabaseArgument
    @Argument var seconds: Double
    @Argument var name: String
    func run() { contend(database: db.database, seconds: seconds, name: name) }
}

struct CheckAfterChdir: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-after-chdir",
        abstract:
            "Open NAME (a relative path) in folder FIRST, move to folder SECOND, wait for the check after open; print \"status=...\"."
    )
    @Argument var first: String
    @Argument var second: String
    @Argument var name: String
    func run() {
        guard chdir(first) == 0 else { fail("cannot enter \(first)") }
        do {
            let store = try StateStore(path: name, options: .init(backgroundCheck: .quick(after: .seconds(2))))
            // At once: the check begins 2 s after the open, in the second folder.
            guard chdir(second) == 0 else { fail("cannot enter \(second)") }
            emit("status=\(store.waitForBackgroundCheck(timeout: .seconds(60)))")
        } catch {
            fail("\(error)")
        }
        Foundation.exit(0)
    }
}
