import Foundation
import Testing

/// A tmux server of its own (its own socket), one session running `sh` in a real terminal.
/// `sh` (dash) does not put the terminal back after a program it ran, so what the terminal
/// looks like after the app exits is the app's doing.
final class TerminalSession {
    let socket = "statestore-\(getpid())-\(UUID().uuidString.prefix(8))"
    let folder: TemporaryFolder
    private var screens = 0

    init(folder: TemporaryFolder, columns: Int = 100, rows: Int = 30) throws {
        self.folder = folder
        try tmux(["new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", "sh"])
    }

    deinit { _ = try? tmux(["kill-server"]) }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        // posix_spawn and waitpid: the client `new-session` runs starts a server that keeps
        // the descriptors it was given, so the output goes to a file, never a pipe.
        let outputFile = folder.file("tmux-\(UUID().uuidString).out")
        defer { unlink(outputFile) }
        let candidates: [String] = ["/usr/bin/tmux", "/usr/local/bin/tmux"]
        let executable = candidates.first { access($0, X_OK) == 0 } ?? candidates[0]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else: a pipe another test opened for its own child at the same moment would
        // stay open in the server, and that test would wait for its end for ever.
        // (glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module
        // does not declare.)
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
        }
        let argv = ([executable, "-L", socket, "-f", "/dev/null"] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        // The server and the shell it starts begin with no signal blocked and every signal at its
        // default, whatever the spawning thread of this process blocks: a server that inherits a
        // blocked SIGHUP or SIGCHLD never sees its shell end, and outlives `kill-server`.
        let attributes = SpawnAttributes()
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, &attributes.value, argv, environ) == 0 else {
            throw RawSQLFailure(message: "tmux could not be started (scripts/bootstrap installs it)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            throw RawSQLFailure(message: "tmux \(arguments.joined(separator: " ")) failed (status \(status))")
        }
        return (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
    }

    /// Keys by tmux's names (`Enter`, `Down`, `C-c`).
    func press(_ keys: String...) throws { try tmux(["send-keys"] + keys) }
    /// Text, typed as it is.
    func type(_ text: String) throws { try tmux(["send-keys", "-l", text]) }
    /// What a person sees now.
    func screen() throws -> String { try tmux(["capture-pane", "-p"]) }
    /// Where the terminal's cursor is (column, row), as a person sees it blink.
    func cursor() throws -> [Int] {
        try tmux(["display-message", "-p", "#{cursor_x} #{cursor_y}"]).split(whereSeparator: \.isWhitespace).compactMap
        { Int($0) }
    }
    func resize(columns: Int, rows: Int) throws { try tmux(["resize-window", "-x", "\(columns)", "-y", "\(rows)"]) }

    /// Runs `command` in the shell, recording the terminal's settings before and after it,
    /// and its exit status.
    /// `preparing` runs first (to mend a terminal a killed program left raw).
    func run(_ command: String, as name: String, preparing: String = "true") throws {
        let before = folder.file("\(name).before"), after = folder.file("\(name).after"),
            status = folder.file("\(name).status")
        try type("\(preparing); stty -g > \(before); \(command); echo $? > \(status); stty -g > \(after)")
        // A newline (ctrl-j), not Enter's carriage return: a terminal left raw by a killed
        // program does not turn one into the other, and the shell would wait for the line's end.
        try press("C-j")
    }

    /// Waits (up to 60 s: the machine may be busy) until the screen satisfies `condition`;
    /// otherwise writes the screen to a file and records a failure naming it.
    @discardableResult
    func waitForScreen(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: (String) -> Bool
    ) throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        var text = ""
        while ContinuousClock.now < deadline {
            text = try screen()
            if condition(text) { return text }
            usleep(50_000)
        }
        screens += 1
        // Kept after the test's own folder is removed.
        let kept = FileManager.default.temporaryDirectory.appending(path: "statestore-terminal-screens").path
        try? FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
        let file = kept + "/\(socket)-\(screens).txt"
        try? text.write(toFile: file, atomically: true, encoding: .utf8)
        Issue.record(
            "the screen never showed \(what); what it showed is in \(file):\n\(text)", sourceLocation: sourceLocation)
        return text
    }

    func waitForScreen(containing text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try waitForScreen("“\(text)”", sourceLocation: sourceLocation) { $0.contains(text) }
    }

    /// From the inbox as launched, the first message selected: opens message `number` and
    /// replies to it, waiting for each screen as a person would.
    func openReply(to number: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try waitForScreen(containing: "> Status report #1", sourceLocation: sourceLocation)
        try tmux(["send-keys"] + Array(repeating: "Down", count: number - 1) + ["Enter"])
        try waitForScreen(containing: "Subject: Status report #\(number)", sourceLocation: sourceLocation)
        try press("r")
        try waitForScreen(containing: "Compose › Re: Status report #\(number)", sourceLocation: sourceLocation)
    }

    /// Waits until the command started by ``run(_:as:)`` ended; returns its exit status and
    /// whether the terminal's settings after it are the ones before it.
    func waitForExit(of name: String) throws -> (status: Int?, terminalRestored: Bool) {
        let after = folder.file("\(name).after")
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, (try? String(contentsOfFile: after, encoding: .utf8))?.isEmpty ?? true {
            usleep(50_000)
        }
        let read = { (suffix: String) in
            (try? String(contentsOfFile: self.folder.file("\(name).\(suffix)"), encoding: .utf8)) ?? ""
        }
        let status = Int(read("status").trimmingCharacters(in: .whitespacesAndNewlines))
        return (status, !read("before").isEmpty && read("before") == read("after"))
    }

    /// The process id of the program the shell is running now.
    func foregroundProcess() throws -> pid_t? {
        let shell = try tmux(["display-message", "-p", "#{pane_pid}"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let children = (try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").compactMap { pid_t($0) }.last
    }
}

/// The terminal mail app (`Examples/MailTerminal`, the `mail` executable) driven through a real
/// terminal as a person would: keys, a resize, a memory warning from the monitor, `kill -9`,
/// signals and the quit key, read back from the screen.
@Suite("The mail app at a real terminal", .hangGuard(minutes: 10))
struct TerminalAppTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("mail.sqlite") }

    /// A stand-in for / with a roomy meminfo, for the app's memory-pressure monitor.
    func monitorRoot(availableKB: Int) throws -> String {
        let root = folder.file("root")
        try FileManager.default.createDirectory(atPath: root + "/proc", withIntermediateDirectories: true)
        try "MemTotal: 8000000 kB\nMemFree: \(availableKB / 2) kB\nMemAvailable: \(availableKB) kB\n"
            .write(toFile: root + "/proc/meminfo", atomically: true, encoding: .utf8)
        return root
    }

    /// The app on the test's database and monitor root; `autosave` is how long typing must pause
    /// before the draft is saved.
    func command(autosaveMilliseconds: Int = 300, escapeMilliseconds: Int = 50) throws -> String {
        "MAIL_DB=\(database) MAIL_MONITOR_ROOT=\(try monitorRoot(availableKB: 6_000_000)) MAIL_AUTOSAVE_MS=\(autosaveMilliseconds) "
            + "MAIL_ESCAPE_MS=\(escapeMilliseconds) "
            + (try builtProduct("mail"))
    }

    @Test func aDraftTypedAtTheTerminalSurvivesKill9WithItsCursor() throws {
        let terminal = try TerminalSession(folder: folder)
        try terminal.run(try command(), as: "first")
        try terminal.openReply(to: 3)
        try terminal.type("Hello half a dra")
        try terminal.press("Left", "Left")
        // Saved after the cursor moved: an earlier autosave (a pause between keys on a busy
        // machine) shows "draft saved" too, with the cursor still at the end.
        try terminal.waitForScreen("the draft saved with the cursor moved back") {
            $0.contains("draft saved") && $0.contains("cursor 14 of 16")
        }
        #expect(try terminal.cursor() == [14, 5])

        let app = try #require(try terminal.foregroundProcess())
        #expect(kill(app, SIGKILL) == 0)
        let killed = try terminal.waitForExit(of: "first")
        #expect(killed.status == 128 + Int(SIGKILL))
        // Nothing could put the terminal back: that is what `reset` is for.
        #expect(!killed.terminalRestored)

        try terminal.run(try command(), as: "second", preparing: "stty sane; clear")
        let restored = try terminal.waitForScreen("the compose sheet with the draft") {
            $0.contains("Compose › Re: Status report #3") && $0.contains("Hello half a dra")
                && $0.contains("cursor 14 of 16")
        }
        #expect(restored.hasPrefix("[Mail]"))
        #expect(try terminal.cursor() == [14, 5])
        // Under the sheet, the stack: the message, then the inbox with its selection.
        try terminal.press("Escape")
        try terminal.waitForScreen(containing: "Subject: Status report #3")
        try terminal.press("Left")
        try terminal.waitForScreen(containing: "> Status report #3")
        try terminal.press("q")
        let quit = try terminal.waitForExit(of: "second")
        #expect(quit.status == 0)
        #expect(quit.terminalRestored)
    }

    /// Two terminals on the default database, as a person with two windows open would: each
    /// instance saves its own draft, `kill -9` takes both, and two relaunches bring both back.
    @Test func twoTerminalsKeepTwoDraftsThroughKill9AndTwoRelaunches() throws {
        let left = try TerminalSession(folder: folder)
        let right = try TerminalSession(folder: folder)
        try left.run(try command(), as: "left")
        try left.openReply(to: 3)
        try left.type("DRAFT-FROM-A")
        try left.waitForScreen(containing: "draft saved")
        let leftApp = try #require(try left.foregroundProcess())

        try right.run(try command(), as: "right")
        // The second instance says it got a scene of its own, and whose the first one is.
        try right.waitForScreen(containing: "scene window1 (main is open in process \(leftApp))")
        try right.openReply(to: 5)
        try right.type("DRAFT-FROM-B")
        try right.waitForScreen(containing: "draft saved")
        let rightApp = try #require(try right.foregroundProcess())

        #expect(kill(leftApp, SIGKILL) == 0)
        #expect(kill(rightApp, SIGKILL) == 0)
        #expect(try left.waitForExit(of: "left").status == 128 + Int(SIGKILL))
        #expect(try right.waitForExit(of: "right").status == 128 + Int(SIGKILL))

        // Each relaunch is waited for by what only it shows ("restored", and the process that
        // holds main): the killed app's last screen stays up until the shell clears it.
        try left.run(try command(), as: "left-again", preparing: "stty sane; clear")
        try left.waitForScreen("the first draft back") {
            $0.contains("Compose › Re: Status report #3") && $0.contains("DRAFT-FROM-A") && $0.contains("restored")
        }
        let leftAgain = try #require(try left.foregroundProcess())
        try right.run(try command(), as: "right-again", preparing: "stty sane; clear")
        let screen = try right.waitForScreen("the second draft back") {
            $0.contains("Compose › Re: Status report #5") && $0.contains("DRAFT-FROM-B")
                && $0.contains("scene window1 (main is open in process \(leftAgain)), restored")
        }
        #expect(!screen.contains("DRAFT-FROM-A"))
        try left.press("C-q")
        let leftExit = try left.waitForExit(of: "left-again").status
        let leftScreen = try left.screen()
        #expect(leftExit == 0, "\(leftScreen)")
        try right.press("C-q")
        let rightExit = try right.waitForExit(of: "right-again").status
        let rightScreen = try right.screen()
        #expect(rightExit == 0, "\(rightScreen)")
    }

    @Test func anArrowOrACharacterSplitAcrossReadsIsOneKey() throws {
        let terminal = try TerminalSession(folder: folder)
        // A lone ESC waits 2 s for what may follow: each half below is a tmux process of its
        // own, which a loaded machine may start late.
        try terminal.run(try command(escapeMilliseconds: 2000), as: "app")
        try terminal.openReply(to: 1)
        try terminal.type("ab")
        try terminal.waitForScreen(containing: "cursor 2 of 2")
        // An arrow whose ESC ends one read and whose "[D" starts the next (two tmux calls, a
        // pause between them): the cursor moves; nothing is discarded, nothing typed.
        try terminal.press("-H", "1b")
        Thread.sleep(forTimeInterval: 0.02)
        try terminal.type("[D")
        try terminal.waitForScreen(containing: "cursor 1 of 2")
        // A character whose two UTF-8 bytes arrive in two reads.
        try terminal.press("-H", "c3")
        Thread.sleep(forTimeInterval: 0.02)
        try terminal.press("-H", "a9")
        try terminal.waitForScreen(containing: "cursor 2 of 3")
        #expect(try terminal.screen().contains("aéb"))
        // A lone Escape still closes the sheet, once nothing follows it.
        try terminal.press("Escape")
        try terminal.waitForScreen(containing: "Subject: Status report #1")
        try terminal.press("q")
        #expect(try terminal.waitForExit(of: "app").status == 0)
    }

    @Test func aResizeAndAMemoryWarningReachTheScreen() throws {
        let terminal = try TerminalSession(folder: folder)
        try terminal.run(try command(), as: "app")
        try terminal.waitForScreen(containing: "100×30 regular×regular")
        // Regular width: a preview line under each subject.
        #expect(try terminal.screen().contains("    Paragraph 1: all systems nominal."))
        try terminal.resize(columns: 60, rows: 20)
        try terminal.waitForScreen(containing: "60×20 compact×compact")
        #expect(try !terminal.screen().contains("    Paragraph 1:"))

        // Memory runs short where the monitor reads: it raises a warning on its own thread, the
        // application handles it on the main queue, and the screen says what the caches gave back.
        _ = try monitorRoot(availableKB: 40_000)
        try terminal.waitForScreen(containing: "memory warning (critical): caches released")
        try terminal.waitForScreen(containing: "memory critical")
        try terminal.press("q")
        let quit = try terminal.waitForExit(of: "app")
        #expect(quit.status == 0)
        #expect(quit.terminalRestored)
    }

    @Test(arguments: [("TERM", SIGTERM), ("INT", SIGINT), ("ctrl-c", SIGINT)])
    func aSignalSavesTheDraftAndPutsTheTerminalBack(name: String, signal: Int32) throws {
        let terminal = try TerminalSession(folder: folder)
        // No autosave within the test: only the signal's flush can save the draft.
        try terminal.run(try command(autosaveMilliseconds: 600_000), as: "app")
        try terminal.openReply(to: 1)
        // Typed and never saved (no pause, no disappearance): the signal's flush saves it.
        try terminal.type("signed off by \(name)")
        try terminal.waitForScreen(containing: "signed off by \(name)")
        #expect(try !terminal.screen().contains("draft saved"))
        if name == "ctrl-c" {
            try terminal.press("C-c")
        } else {
            let app = try #require(try terminal.foregroundProcess())
            #expect(kill(app, signal) == 0)
        }
        let ended = try terminal.waitForExit(of: "app")
        #expect(ended.status == 128 + Int(signal))
        #expect(ended.terminalRestored)

        try terminal.run(try command(), as: "again", preparing: "clear")
        try terminal.waitForScreen(containing: "signed off by \(name)")
        try terminal.press("C-q")
        #expect(try terminal.waitForExit(of: "again").terminalRestored)
    }

    /// Two instances of the app on one database: a reply started in one never opens with the
    /// draft the other is writing for another message, though both sheets are at the same place.
    @Test func aReplyNeverOpensWithAnotherMessagesDraft() throws {
        let reading = try TerminalSession(folder: folder)
        try reading.run(try command(), as: "reading")
        try reading.waitForScreen(containing: "> Status report #1")
        let writing = try TerminalSession(folder: folder)
        try writing.run(try command(autosaveMilliseconds: 100), as: "writing")
        try writing.openReply(to: 3)
        try writing.type("meant for three")
        try writing.waitForScreen(containing: "draft saved")

        try reading.openReply(to: 1)
        let screen = try reading.screen()
        #expect(
            screen.contains("To: ") && !screen.contains("meant for three") && screen.contains("cursor 0 of 0"),
            "\(screen)")
        for (terminal, name) in [(reading, "reading"), (writing, "writing")] {
            try terminal.press("C-q")
            #expect(try terminal.waitForExit(of: name).status == 0)
        }
    }

    /// A disk that fills while the app runs: the failed save's error stays on the status line
    /// (not "draft saved"), quitting says on stderr what was not saved and exits 1, and what was
    /// saved before is all there at the next launch.
    @Test(
        .enabled(
            if: FaultFileTests.canMountTmpfs, "needs to mount a small tmpfs (root, and a mount the system allows)"),
        arguments: [("C-q", 1), ("C-c", 128 + Int(SIGINT))])
    func aFullDiskIsShownAndQuittingSaysWhatWasNotSaved(key: String, status: Int) throws {
        let mountPoint = folder.file("tmpfs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(mounted.output)")
        defer { _ = try? runProgram("/bin/umount", ["-l", mountPoint]) }
        let app = try command(autosaveMilliseconds: 100).replacingOccurrences(
            of: "MAIL_DB=\(database)", with: "MAIL_DB=\(mountPoint)/mail.sqlite")
        let terminal = try TerminalSession(folder: folder)
        try terminal.run(app, as: "full")
        try terminal.openReply(to: 2)

        // Every free block taken beside the database.
        let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o600)
        try #require(filler >= 0)
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)

        try terminal.type(String(repeating: "no room for this draft ", count: 40))
        try terminal.waitForScreen(containing: "error:")
        #expect(try !terminal.screen().contains("draft saved"))
        try terminal.press(key)
        let quit = try terminal.waitForExit(of: "full")
        #expect(quit.status == status)
        #expect(quit.terminalRestored)
        try terminal.waitForScreen(containing: "mail: the last changes could not be saved:")

        // Space returns: the next launch is where the last successful save left the app, the
        // reply opened before the disk filled, without what was typed after.
        try FileManager.default.removeItem(atPath: mountPoint + "/filler")
        try terminal.run(app, as: "again", preparing: "clear")
        try terminal.waitForScreen(containing: "Compose › Re: Status report #2")
        #expect(try !terminal.screen().contains("no room for this draft"))
        try terminal.press("Escape")
        try terminal.waitForScreen(containing: "Subject: Status report #2")
        try terminal.press("C-q")
        #expect(try terminal.waitForExit(of: "again").status == 0)
    }

    /// Ctrl-z gives the terminal back to the shell as it found it and stops the app; `fg`
    /// continues it in raw mode on its own screen, with the draft as it was.
    @Test func ctrlZSuspendsAndFgResumesInRawMode() throws {
        let terminal = try TerminalSession(folder: folder)
        try terminal.run(try command(autosaveMilliseconds: 600_000), as: "app")
        try terminal.openReply(to: 1)
        try terminal.type("before the stop")
        try terminal.waitForScreen(containing: "cursor 15 of 15")
        try terminal.press("C-z")
        // The shell has its terminal back, as it was, while the app is stopped.
        let stopped = try terminal.waitForExit(of: "app")
        #expect(stopped.status == 128 + Int(SIGTSTP))
        #expect(stopped.terminalRestored)
        try terminal.waitForScreen(containing: "Stopped")

        // `bg` continues it in the background: it stops again at once, the terminal stays the shell's.
        // `fg` is typed only once the shell has listed the jobs and is back at its prompt: the
        // job's own stop is reported as it happens, before the listing, and keys typed then
        // may not reach the next prompt.
        try terminal.type("clear; bg; sleep 1; jobs; echo jobs-listed")
        try terminal.press("C-j")
        let background = try terminal.waitForScreen("the job stopped again") {
            $0.contains("Stopped (tty output)") && $0.contains("\njobs-listed")
        }
        #expect(!background.contains("Compose ›"), "\(background)")

        try terminal.type("fg")
        try terminal.press("C-j")
        try terminal.waitForScreen(containing: "before the stop")
        // Each key reaches the app as it is typed (raw): the app's own status line counts it.
        try terminal.type("!")
        try terminal.waitForScreen(containing: "cursor 16 of 16")
        try terminal.press("C-q")
        try terminal.waitForScreen("the shell's prompt after the app quit") { !$0.contains("cursor 16 of 16") }
        // The terminal the next command finds is the one the app found.
        try terminal.run("true", as: "next")
        let next = try terminal.waitForExit(of: "next")
        #expect(next.status == 0)
        let read = { (name: String) in (try? String(contentsOfFile: self.folder.file(name), encoding: .utf8)) ?? "" }
        #expect(!read("app.before").isEmpty && read("app.before") == read("next.before"))

        // What is visible is saved at the suspend: a stopped app killed there loses nothing.
        try terminal.run(try command(autosaveMilliseconds: 600_000), as: "again", preparing: "clear")
        try terminal.waitForScreen(containing: "cursor 16 of 16")
        try terminal.type("?")
        try terminal.waitForScreen(containing: "cursor 17 of 17")
        try terminal.press("C-z")
        #expect(try terminal.waitForExit(of: "again").status == 128 + Int(SIGTSTP))
        try terminal.run("kill -9 %1; wait", as: "kill")
        _ = try terminal.waitForExit(of: "kill")
        try terminal.run(try command(), as: "last", preparing: "clear")
        try terminal.waitForScreen(containing: "before the stop!?")
        try terminal.press("C-q")
        #expect(try terminal.waitForExit(of: "last").status == 0)
    }

    /// Text as a terminal draws it: wide characters take two columns, a combining mark joins the
    /// character before it, a long body scrolls with the cursor, a paste is one edit, and a
    /// narrow window keeps every line within its width.
    @Test func textIsMeasuredInColumnsAndTheBodyScrollsWithTheCursor() throws {
        let terminal = try TerminalSession(folder: folder, columns: 40, rows: 16)
        try terminal.run(try command(autosaveMilliseconds: 600_000), as: "app")
        try terminal.openReply(to: 1)
        // 30 characters, 60 columns: 20 on the first line of 40 columns, 10 on the second.
        try terminal.type(String(repeating: "日本語", count: 10))
        let wide = try terminal.waitForScreen("30 characters typed") { $0.contains("cursor 30 of 30") }
        let lines = wide.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count > 6 && lines[5] == String(repeating: "日本語", count: 6) + "日本", "\(wide)")
        #expect(try terminal.cursor() == [20, 6])

        // A combining acute typed between "a" and "b" makes "á" and leaves the cursor after it.
        try terminal.type("ab")
        try terminal.waitForScreen(containing: "cursor 32 of 32")
        try terminal.press("Left")
        try terminal.waitForScreen(containing: "cursor 31 of 32")
        try terminal.type("\u{301}")
        try terminal.waitForScreen(containing: "cursor 31 of 32")
        #expect(try terminal.screen().contains("a\u{301}b") || terminal.screen().contains("\u{E1}b"))
        #expect(try terminal.cursor() == [21, 6])

        // More lines than the sheet shows: the body scrolls, the cursor's line stays in view.
        try terminal.press("Right")
        for _ in 0..<20 { try terminal.press("Enter") }
        try terminal.type("last line")
        let scrolled = try terminal.waitForScreen("the last line typed") { $0.contains("cursor 61 of 61") }
        #expect(scrolled.contains("last line"), "\(scrolled)")
        let cursor = try terminal.cursor()
        #expect(cursor.first == 9 && (cursor.last ?? 99) < 14, "\(cursor)")

        // A paste of 20,000 characters (five tmux commands) arrives in a few reads, each one edit.
        for _ in 0..<5 { try terminal.type(String(repeating: "x", count: 4000)) }
        try terminal.waitForScreen(containing: "cursor 20061 of 20061")

        // Back to the message in a window of 8 columns: every line fits, nothing scrolls away.
        try terminal.press("Escape")
        try terminal.waitForScreen(containing: "Subject: Status report #1")
        try terminal.resize(columns: 8, rows: 12)
        let narrow = try terminal.waitForScreen("the message at 8 columns") { $0.contains("8×12") }
        let rows = narrow.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(rows.first?.hasPrefix("[Mail]") == true, "\(narrow)")
        #expect(rows.filter { !$0.isEmpty }.last?.hasPrefix("8×12") == true, "\(narrow)")
        try terminal.press("q")
        #expect(try terminal.waitForExit(of: "app").status == 0)
    }

    /// Under a wrapping script, ctrl-z stops the whole job (as the terminal's own ctrl-z
    /// would), so the shell gets its prompt back; `fg` continues both.
    @Test func ctrlZUnderAScriptStopsTheJob() throws {
        let terminal = try TerminalSession(folder: folder)
        try terminal.run("sh -c '\(try command()); echo wrapped'", as: "script")
        try terminal.waitForScreen(containing: "> Status report #1")
        try terminal.press("C-z")
        #expect(try terminal.waitForExit(of: "script").status == 128 + Int(SIGTSTP))
        try terminal.waitForScreen("the shell's prompt with the job stopped") {
            $0.contains("Stopped") && !$0.contains("> Status report #1")
        }
        try terminal.type("fg")
        try terminal.press("C-j")
        try terminal.waitForScreen(containing: "> Status report #1")
        try terminal.press("q")
        // The script goes on after the app, and no job is left.
        try terminal.waitForScreen(containing: "wrapped")
        let jobs = folder.file("jobs.txt")
        try terminal.run("jobs > \(jobs)", as: "jobs", preparing: "clear")
        _ = try terminal.waitForExit(of: "jobs")
        #expect(try String(contentsOfFile: jobs, encoding: .utf8).isEmpty)
    }

    /// A paste (bracketed: tmux's `paste-buffer -p`) is text, whatever it holds: a tab, a
    /// ctrl-s or a ctrl-z inside it never sends, suspends or quits. And a flag takes two columns.
    @Test func aPasteIsTextAndAFlagTakesTwoColumns() throws {
        let terminal = try TerminalSession(folder: folder, columns: 40, rows: 16)
        try terminal.run(try command(autosaveMilliseconds: 600_000), as: "app")
        try terminal.openReply(to: 1)
        try terminal.tmux(["set-buffer", "one\ttwo\u{13}three\u{1A}four q\nfive"])
        try terminal.tmux(["paste-buffer", "-p"])
        let pasted = try terminal.waitForScreen("the paste in the draft") { $0.contains("cursor 26 of 26") }
        #expect(
            pasted.contains("one    twothreefour q") && pasted.contains("five") && pasted.contains("Compose ›"),
            "\(pasted)")
        // Ten flags after "five": 4 + 20 columns.
        try terminal.type(String(repeating: "\u{1F1FA}\u{1F1F8}", count: 10))
        try terminal.waitForScreen(containing: "cursor 36 of 36")
        #expect(try terminal.cursor() == [24, 6])
        // Sinhala "Sri" (a joiner ends one Swift character, tmux joins what follows it) takes
        // one column: with 39 more, the line is exactly full and nothing wraps.
        let sri = "\u{DC1}\u{DCA}\u{200D}\u{DBB}\u{DD3}"
        try terminal.press("Enter")
        try terminal.type(sri + String(repeating: "a", count: 39))
        let joined = try terminal.waitForScreen("the line with the joiner") {
            $0.contains(String(repeating: "a", count: 39))
        }
        let rows = joined.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(rows.count > 8 && rows[7] == sri + String(repeating: "a", count: 39) && rows[8].isEmpty, "\(joined)")
        // Latin-1 typed into a UTF-8 terminal: the stray byte is dropped, not what follows it.
        try terminal.press("Enter")
        try terminal.press("-H", "42", "e9", "74", "43")
        try terminal.waitForScreen(containing: "BtC")
        // A paste whose end never comes ends after a second; then ctrl-q quits again.
        try terminal.press("-H", "1b", "5b", "32", "30", "30", "7e")
        try terminal.type("zz")
        try terminal.waitForScreen(containing: "BtCzz")
        try terminal.press("C-q")
        #expect(try terminal.waitForExit(of: "app").status == 0)
    }
}
