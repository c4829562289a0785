// The mail app at a real terminal: raw mode, ANSI drawing, and a real event loop.
//
//     mail [--db PATH]
//
// The database defaults to $MAIL_DB, else StateStore.defaultPath(appName: "mail")
// ($XDG_STATE_HOME/mail/state.sqlite). $MAIL_MONITOR_ROOT points the memory-pressure monitor at
// a folder standing in for / (a fixture tree), as `statectl monitor --root` does;
// $MAIL_AUTOSAVE_MS is how long typing pauses before the draft is saved (default 300);
// $MAIL_ESCAPE_MS how long a lone ESC waits for the rest of an arrow or Alt+key (default 50).
//
// Everything arrives on the main queue under dispatchMain(): keys (standard input's
// readability), SIGWINCH (a resize), SIGCONT (continued after ctrl-z), and SIGTERM, SIGINT
// and SIGHUP (through Application.installTerminationHandlers, which saves what is visible and
// exits). Nothing polls.
import Dispatch
import Foundation
import StateStore

var arguments = Array(CommandLine.arguments.dropFirst())
var database = ProcessInfo.processInfo.environment["MAIL_DB"] ?? StateStore.defaultPath(appName: "mail")
if let index = arguments.firstIndex(of: "--db"), index + 1 < arguments.count {
    database = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
}
guard arguments.isEmpty else {
    Terminal.write("usage: mail [--db PATH]\n", to: 2)
    exit(2)
}

/// The app and its dispatch sources, for as long as the process runs.
nonisolated(unsafe) var running: [Any] = []

TextWidth.prepare()
MainActor.assumeIsolated {
    guard Terminal.enterRawMode() else {
        Terminal.write("mail: standard input is not a terminal; run it in one\n", to: 2)
        exit(2)
    }
    let app: TerminalMailApp
    do {
        let root = ProcessInfo.processInfo.environment["MAIL_MONITOR_ROOT"] ?? "/"
        app = try TerminalMailApp(
            database: database, monitor: try MemoryPressureMonitor(configuration: .init(root: root)))
        try app.launch()
        TerminalMailApp.reportUnsavedAtExit()
    } catch {
        Terminal.restore()
        Terminal.write("mail: \(error)\n", to: 2)
        exit(1)
    }
    // SIGTERM, SIGINT (ctrl-c reaches the app as a key, and is raised as SIGINT) and SIGHUP
    // (the terminal went away): the visible state is saved, then exit() puts the terminal back.
    app.application.installTerminationHandlers(signals: [SIGTERM, SIGINT, SIGHUP])

    signal(SIGWINCH, SIG_IGN)
    let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .main)
    resize.setEventHandler { MainActor.assumeIsolated { app.terminalResized() } }
    resize.resume()

    // SIGCONT: the process continues after a stop (ctrl-z then `fg`, or `kill -STOP`/`-CONT`):
    // the terminal is taken again and the screen redrawn (at its size now).
    signal(SIGCONT, SIG_IGN)
    let continued = DispatchSource.makeSignalSource(signal: SIGCONT, queue: .main)
    continued.setEventHandler { MainActor.assumeIsolated { if Terminal.continued() { app.terminalResized() } } }
    continued.resume()

    /// Keys in the order they were typed. Those before a ctrl-c are handled first; then SIGINT,
    /// process-directed, not raise(): under dispatchMain() the main thread may block signals,
    /// and a thread-directed one would wait there forever.
    /// Ctrl-z the same way: the keys before it are handled, then the app suspends.
    @MainActor func handle(_ keys: [Key]) {
        let interrupt = keys.firstIndex { $0 == .control("c") || $0 == .control("z") }
        if !app.handle(Array(keys[..<(interrupt ?? keys.endIndex)])) { exit(app.quit()) }
        guard let interrupt else { return }
        if keys[interrupt] == .control("c") {
            kill(getpid(), SIGINT)
            return
        }
        // What is visible is saved first: a stopped process may never be continued.
        app.application.saveVisibleState()
        Terminal.suspend()
        // Stopped by now, and this runs once continued. Without job control SIGTSTP is
        // discarded and nothing stopped: the app takes its screen back.
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(50)) {
            MainActor.assumeIsolated { if Terminal.resumed() { app.terminalResized() } }
        }
    }
    let escapeDelay = Int(ProcessInfo.processInfo.environment["MAIL_ESCAPE_MS"] ?? "") ?? 50
    nonisolated(unsafe) var decoder = KeyDecoder()
    nonisolated(unsafe) var reads = 0
    let input = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
    input.setEventHandler {
        MainActor.assumeIsolated {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(0, &buffer, buffer.count)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
            if count < 0 && errno == EIO && !Terminal.isForeground {
                // Read from the background (the job was continued with `bg`): wait stopped
                // for `fg`, as a program reading its terminal from the background does.
                kill(getpid(), SIGTTIN)
                return
            }
            guard count > 0 else {
                // End of input: the terminal is gone.
                exit(app.quit())
            }
            reads += 1
            handle(decoder.decode(Array(buffer.prefix(count))))
            if decoder.inPaste {
                // A paste whose end marker does not come within a second ends there, so the
                // keys after it (ctrl-q, Escape) are keys again.
                let read = reads
                DispatchQueue.main.asyncAfter(deadline: .now() + .seconds(1)) {
                    MainActor.assumeIsolated {
                        if reads == read { handle(decoder.endPaste()) }
                    }
                }
            } else if decoder.endsInEscape {
                // Escape, unless the rest of an arrow or Alt+key arrives in time.
                let read = reads
                DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(escapeDelay)) {
                    MainActor.assumeIsolated {
                        if reads == read { handle(decoder.flush()) }
                    }
                }
            }
        }
    }
    input.resume()
    // dispatchMain() ends the main thread (pthread_exit) and serves the main queue from then
    // on; this closure's locals would then live on a stack that no longer counts, and a leak
    // checker at exit would report the app and its sources as leaked.
    running = [app, resize, continued, input]
    dispatchMain()
}
