// Two instances of the mail app on one database, each in a process of its own: which scene
// each window gets, what it restores, and what it saves.
import Foundation
import Logging
import MailExample
import StateStore

@MainActor
enum SceneInstances {
    /// The mail app's window, as `MailApp` makes it, with `policy` for a held scene.
    /// A window that waits logs to stdout (`... waiting for a held scene ...`), so a test knows
    /// when it has found the scene held.
    static func launch(
        database: String, policy: SceneConflictPolicy
    ) throws -> (Application, Window, HierarchyRestoration) {
        var options = StateStore.Options()
        if case .wait = policy {
            options.logger = Logger(
                label: "statestore-worker", factory: { label in StreamLogHandler.standardOutput(label: label) })
        }
        let store = try StateStore(path: database, options: options)
        let application = Application(store: store, storyboard: MailStoryboard.make())
        let window = Window(size: Size(width: 390, height: 844), whenHeld: policy, application: application)
        let restoration = try application.restoreHierarchyWithReport(in: window)
        if !restoration.restored {
            let storyboard = application.storyboard
            let tabs =
                try storyboard.instantiateViewController(withIdentifier: MailStoryboard.tabs) as! TabBarController
            let mail =
                try storyboard.instantiateViewController(withIdentifier: MailStoryboard.mail) as! NavigationController
            mail.setViewControllers(
                [try storyboard.instantiateViewController(withIdentifier: MailStoryboard.inbox)], animated: false)
            tabs.viewControllers = [
                mail, try storyboard.instantiateViewController(withIdentifier: MailStoryboard.settings),
            ]
            window.rootViewController = tabs
            window.makeKeyAndVisible()
        }
        return (application, window, restoration)
    }

    /// `scene=ID outcome=claimed|read-only|not-claimed passed=SCENE@PID,... waited_ms=N`.
    static func describe(_ window: Window) -> String {
        guard let assignment = window.sceneAssignment else { return "scene=\(window.sceneIdentifier) outcome=none" }
        let outcome =
            switch assignment.outcome {
            case .claimed: "claimed"
            case .readOnly: "read-only"
            case .notClaimed: "not-claimed"
            }
        let passed = assignment.passedOver.map { "\($0.scene)@\($0.processIdentifier.map(String.init) ?? "?")" } ?? "-"
        let waited = assignment.waited.saturatingMilliseconds
        return "scene=\(window.sceneIdentifier) outcome=\(outcome) passed=\(passed) waited_ms=\(waited)"
    }

    /// The draft the window shows, or `none`.
    static func draft(in window: Window) -> String {
        guard let compose = window.rootViewController?.presentedViewController as? ComposeController else {
            return "none"
        }
        return compose.restorableState.body
    }

    /// An instance that opens a reply and types `draft` into it (unless it restored one, which it keeps),
    /// saves, prints `ready` and what it got, then types and saves each line it reads, until
    /// killed, or terminated by SIGTERM (which saves what is visible).
    static func session(database: String, draft: String, policy: SceneConflictPolicy) -> Never {
        do {
            let (application, window, restoration) = try launch(database: database, policy: policy)
            if !restoration.restored || Self.draft(in: window) == "none" {
                let tabs = window.rootViewController as! TabBarController
                let storyboard = application.storyboard
                let compose =
                    try storyboard.instantiateViewController(withIdentifier: MailStoryboard.compose)
                    as! ComposeController
                tabs.present(compose, animated: false)
                compose.type(to: "grace@example.org", subject: "Re: scenes", body: draft)
            }
            application.saveVisibleState()
            application.installTerminationHandlers()
            emit("ready \(describe(window)) restored=\(restoration.restored)")
            // Each line on standard input is typed as the draft's new body and saved (a flush
            // point): "saved TEXT" once it is written.
            let input = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
            nonisolated(unsafe) var pending = Data()
            input.setEventHandler {
                MainActor.assumeIsolated {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    let count = read(0, &buffer, buffer.count)
                    guard count > 0 else {
                        input.cancel()
                        return
                    }
                    pending.append(contentsOf: buffer.prefix(count))
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let text = String(decoding: pending[..<newline], as: UTF8.self)
                        pending.removeSubrange(...newline)
                        guard let compose = window.rootViewController?.presentedViewController as? ComposeController
                        else { continue }
                        compose.type(
                            to: compose.restorableState.to, subject: compose.restorableState.subject, body: text)
                        application.saveVisibleState()
                        emit("saved \(text)")
                    }
                }
            }
            input.resume()
            runEventLoop(keeping: application, input)
        } catch {
            fail("\(error)")
        }
    }

    /// An instance that prints what it restored (`scene=... restored=BOOL draft=TEXT`, after the
    /// log lines of a window that waits), then either
    /// terminates (saving nothing new: it changed nothing) or, with `hold`, runs until killed.
    /// While it holds: `ballastMegabytes` of memory written to, so a kill takes the kernel a
    /// while to tear it down; `lingerMilliseconds` keeps its scene's claim that long after its
    /// death (``lingerClaim(of:in:milliseconds:)``).
    static func report(
        database: String, policy: SceneConflictPolicy, hold: Bool, ballastMegabytes: Int = 0,
        lingerMilliseconds: Int = 0
    ) -> Never {
        do {
            let (application, window, restoration) = try launch(database: database, policy: policy)
            emit("\(describe(window)) restored=\(restoration.restored) draft=\(draft(in: window))")
            for error in application.restorationCoordinator?.recentErrors ?? [] { emit("error=\(error)") }
            if hold {
                application.installTerminationHandlers()
                if ballastMegabytes > 0 {
                    // Its own pages, written once (small pages: each is one more to free at exit).
                    let size = ballastMegabytes << 20
                    let memory = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                    guard let memory, memory != MAP_FAILED else { fail("no ballast: errno \(errno)") }
                    _ = madvise(memory, size, MADV_NOHUGEPAGE)
                    memset(memory, 1, size)
                }
                if lingerMilliseconds > 0, let folder = application.store?.sceneClaimFolder {
                    try lingerClaim(of: window.sceneIdentifier, in: folder, milliseconds: lingerMilliseconds)
                }
                emit("holding")
                runEventLoop(keeping: application)
            }
            application.terminate()
            exit(0)
        } catch {
            fail("\(error)")
        }
    }

    /// Keeps this process's claim on `scene` (in the claim folder `folder`) for `milliseconds`
    /// after the process dies, as the kernel keeps a killed process's lock until it has torn the
    /// process down, only longer: `/bin/sh` is given the claim file's open file description (as
    /// descriptor 3), which holds the lock as long as one process has it, and a pipe only this
    /// process writes to (as 4); once the pipe ends, it sleeps, then lets go.
    static func lingerClaim(of scene: String, in folder: String, milliseconds: Int) throws {
        let claimFile = folder + "/" + scene + ".lock"
        var claim: Int32 = -1
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let descriptor = Int32(name),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
                target == claimFile, fcntl(descriptor, F_GETFL) & O_ACCMODE == O_RDWR
            else { continue }
            claim = descriptor
        }
        guard claim >= 0 else { fail("no descriptor of \(claimFile) holds its claim") }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { fail("pipe: errno \(errno)") }
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, claim, 3)
        posix_spawn_file_actions_adddup2(&actions, ends[0], 4)
        // Nothing else (glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's
        // Glibc module does not declare): a pipe of the test's would stay open in it.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 5)
        }
        let seconds = String(format: "%.3f", Double(milliseconds) / 1000)
        let words: [String] = ["/bin/sh", "-c", "cat <&4 >/dev/null; exec sleep \(seconds)"]
        let argv = words.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ) == 0 else { fail("posix_spawn /bin/sh") }
        close(ends[0])
        // The write end stays open, unwritten, until this process dies.
    }

    /// `another`, `read-only` or `wait:MILLISECONDS`.
    nonisolated static func policy(_ text: String) -> SceneConflictPolicy? {
        switch text {
        case "another": return .openAnotherScene
        case "read-only": return .openReadOnly
        default:
            guard text.hasPrefix("wait:"), let milliseconds = Int(text.dropFirst(5)) else { return nil }
            return .wait(timeout: .milliseconds(milliseconds))
        }
    }
}
