import Dispatch
import Foundation
import MailExample
import StateStore

/// The mail app at a terminal: the `Application` and its `Window`, the screens, what the
/// keyboard does, and the drawing.
@MainActor
final class TerminalMailApp {
    /// A terminal cell in the window's points: 80 × 25 cells make a compact × regular window,
    /// 70 columns or more and 25 rows or more a regular × regular one.
    static let pointsPerColumn = 10.0
    static let pointsPerRow = 20.0

    /// Rendered inbox previews and wrapped message bodies: recreated on demand, purged on
    /// memory warnings (the shared registry), shown in the status line.
    static let rows = RecreatableCache<String, String>(name: "mail.rows") { $0.utf8.count }
    static let wrapped = RecreatableCache<String, [String]>(name: "mail.wrapped") {
        $0.reduce(0) { $0 + $1.utf8.count }
    }
    static var cacheSummary: String {
        let count = rows.count + wrapped.count
        let cost = rows.totalCost + wrapped.totalCost
        return "\(count) entries, \(bytes(cost))"
    }

    /// `512 B`, `3.4 KB`.
    static func bytes(_ count: Int) -> String {
        count < 1024 ? "\(count) B" : String(format: "%.1f KB", Double(count) / 1024)
    }

    let application: Application
    let window: Window
    let monitor: MemoryPressureMonitor
    let databasePath: String
    /// What the status line says last happened.
    private var notice = ""
    private var draftEdits = 0
    /// How many problems the store has reported.
    private var errorCount = 0

    /// The terminal's size in columns and rows, asked at each drawing and resize.
    let terminalSize: () -> (columns: Int, rows: Int)
    /// Where a drawn screen goes: the terminal.
    let output: @MainActor (String) -> Void

    /// The app on the database at `database`, drawing on the process's terminal.
    convenience init(database: String, monitor: MemoryPressureMonitor) throws {
        self.init(store: try StateStore(path: database), databasePath: database, monitor: monitor)
    }

    /// The app on `store` (opened on `databasePath`), drawing at `terminalSize` to `output`:
    /// the process's terminal by default; the tests give a terminal of their own.
    init(
        store: StateStore, databasePath: String, monitor: MemoryPressureMonitor,
        terminalSize: @escaping () -> (columns: Int, rows: Int) = Terminal.size,
        output: @escaping @MainActor (String) -> Void = { Terminal.write($0) }
    ) {
        self.databasePath = databasePath
        self.monitor = monitor
        self.terminalSize = terminalSize
        self.output = output
        let storyboard = Storyboard()
        storyboard.register("tabs") { TabBarController() }
        storyboard.register("mail") { NavigationController() }
        storyboard.register("inbox") { InboxScreen() }
        storyboard.register("message") { MessageScreen() }
        storyboard.register("compose") { ComposeScreen() }
        storyboard.register("settings") { SettingsScreen() }
        application = Application(store: store, storyboard: storyboard, memoryMonitor: monitor)
        let (columns, rows) = terminalSize()
        window = Window(size: Self.size(columns: columns, rows: rows), orientation: .portrait, application: application)
        application.restorationCoordinator?.errorHandler = { [weak self] error in
            guard let self else { return }
            errorCount += 1
            notice = "error: \(error)"
            // Reported at exit when it is the final save's (see `reportUnsavedAtExit`).
            if application.isTerminated { Self.unsavedAtExit = "mail: the last changes could not be saved: \(error)\n" }
            // Drawn once what reported it has finished with the hierarchy.
            DispatchQueue.main.async { [weak self] in MainActor.assumeIsolated { self?.draw() } }
        }
        application.addObserver(WarningObserver(app: self))
    }

    static func size(columns: Int, rows: Int) -> Size {
        Size(width: Double(columns) * pointsPerColumn, height: Double(rows) * pointsPerRow)
    }

    /// Back where the user left off, or the inbox. A second instance on the same database gets
    /// a window scene of its own (the scene of an instance that is gone, or a new one), and
    /// says so: the two never save over each other's drafts.
    func launch() throws {
        if try application.restoreHierarchy(in: window) {
            notice = "restored"
        } else {
            let tabs = try make("tabs", as: TabBarController.self)
            let mail = try make("mail", as: NavigationController.self)
            mail.setViewControllers([try make("inbox", as: InboxScreen.self)], animated: false)
            tabs.viewControllers = [mail, try make("settings", as: SettingsScreen.self)]
            window.rootViewController = tabs
            window.makeKeyAndVisible()
        }
        if let held = window.sceneAssignment?.passedOver {
            let holder = held.processIdentifier.map { "process \($0)" } ?? "another process"
            notice =
                "scene \(window.sceneIdentifier) (\(held.scene) is open in \(holder))"
                + (notice.isEmpty ? "" : ", " + notice)
        }
        settings?.app = self
        draw()
    }

    private func make<Controller: ViewController>(_ identifier: String, as type: Controller.Type) throws -> Controller {
        guard let made = try application.storyboard.instantiateViewController(withIdentifier: identifier) as? Controller
        else {
            throw CocoaError(.coderValueNotFound)
        }
        return made
    }

    var tabs: TabBarController? { window.rootViewController as? TabBarController }
    var mail: NavigationController? { tabs?.viewControllers.first as? NavigationController }
    var settings: SettingsScreen? { tabs?.viewControllers.last as? SettingsScreen }
    var compose: ComposeScreen? { tabs?.presentedViewController as? ComposeScreen }

    /// The screen that takes keys: the sheet when one is presented, else the selected tab's top.
    var front: (any TerminalScreen)? {
        if let compose { return compose }
        if let navigation = tabs?.selectedViewController as? NavigationController {
            return navigation.topViewController as? any TerminalScreen
        }
        return tabs?.selectedViewController as? any TerminalScreen
    }

    // MARK: Events

    /// The terminal was resized (SIGWINCH): the window takes the new size, and the lifecycle
    /// sends the size transition and layout before the redraw.
    func terminalResized() {
        let (columns, rows) = terminalSize()
        window.resize(to: Self.size(columns: columns, rows: rows))
        draw()
    }

    /// Returns `false` when the key asks to quit.
    func handle(_ keys: [Key]) -> Bool {
        var index = keys.startIndex
        while index < keys.endIndex {
            let key = keys[index]
            index += 1
            if key == .control("q") { return false }
            if let compose, let text = Self.typed(key) {
                // A run of typed keys (a paste arrives as one read) is one edit, not one a key.
                var run = text
                while index < keys.endIndex, let more = Self.typed(keys[index]) {
                    run += more
                    index += 1
                }
                compose.insert(run, in: self)
                continue
            }
            if let front, front.handle(key, in: self) { continue }
            switch key {
            case .character("q"): return false
            case .tab:
                guard let tabs else { break }
                tabs.selectedIndex = (tabs.selectedIndex + 1) % tabs.viewControllers.count
                settings?.app = self
            default: break
            }
        }
        draw()
        return true
    }

    /// The text a key types in compose, if it types any.
    private static func typed(_ key: Key) -> String? {
        switch key {
        case .character(let character): String(character)
        case .enter: "\n"
        case .paste(let text): text
        default: nil
        }
    }

    func open(_ message: MailMessage) {
        guard let mail, let screen = try? make("message", as: MessageScreen.self) else { return }
        screen.opening = message.id
        mail.pushViewController(screen, animated: false)
    }

    func back() {
        _ = mail?.popViewController(animated: false)
    }

    /// What the final save could not save, said on stderr at exit.
    nonisolated(unsafe) private static var unsavedAtExit: String?

    /// Says on stderr, once the terminal is back, what the final save could not save, on every
    /// way out that terminates the application: quitting, and SIGTERM, SIGINT (ctrl-c) or
    /// SIGHUP through the termination handlers. Registered after raw mode is entered, so it
    /// runs first at exit.
    static func reportUnsavedAtExit() {
        atexit {
            guard let report = TerminalMailApp.unsavedAtExit else { return }
            Terminal.restore()
            Terminal.write(report, to: 2)
        }
    }

    /// Saves what is visible and tears the hierarchy down. Returns the exit status: 0, or 1
    /// when the final save failed (the reason is said at exit).
    func quit() -> Int32 {
        application.terminate()
        return Self.unsavedAtExit == nil ? 0 : 1
    }

    func reply(to screen: MessageScreen) {
        guard let tabs, let compose = try? make("compose", as: ComposeScreen.self) else { return }
        compose.replyingTo = screen.message
        compose.modalPresentationStyle = .pageSheet
        tabs.present(compose, animated: false)
        // The new draft, addressed, is saved with the sheet: a relaunch before the first
        // keystroke's autosave opens the reply to the same message, not a blank sheet.
        application.saveVisibleState()
    }

    func closeCompose(sent: Bool) {
        guard let compose else { return }
        // The draft is done with either way: an empty one is what the next reply restores.
        compose.restorableState = ComposeScreen.Draft()
        compose.dismiss(animated: false)
        notice = sent ? "sent" : "draft discarded"
    }

    /// How long typing must pause before the draft is saved: 300 ms, or `$MAIL_AUTOSAVE_MS`.
    let autosaveDelay = Int(ProcessInfo.processInfo.environment["MAIL_AUTOSAVE_MS"] ?? "") ?? 300

    /// A keystroke changed the draft: it is saved once typing pauses (a flush point, like a
    /// disappearance), so a crash or `kill -9` loses at most the keys typed since the pause.
    func draftChanged() {
        draftEdits += 1
        notice = "editing"
        let edits = draftEdits
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(autosaveDelay)) { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.draftEdits == edits, self.compose != nil else { return }
                let errors = self.errorCount
                self.application.saveVisibleState()
                // A save that failed leaves its error on the status line, not "draft saved".
                if self.errorCount == errors { self.notice = "draft saved" }
                self.draw()
            }
        }
    }

    /// A memory warning was handled: say what it released.
    func warningHandled(_ report: MemoryWarningReport) {
        let released = Self.bytes(report.cacheCostReleased)
        notice = "memory warning (\(report.level)): caches released \(released)"
        draw()
    }

    // MARK: Drawing

    func draw() {
        // Suspended (ctrl-z): the terminal is the shell's until `fg`, which redraws.
        if Terminal.isSuspended { return }
        let (columns, rows) = terminalSize()
        let traits = TraitCollection(windowSize: window.size)
        var lines: [String] = []
        let selected = tabs?.selectedIndex ?? 0
        let tabTitles = ["Mail", "Settings"].enumerated().map {
            $0.offset == selected ? "[\($0.element)]" : " \($0.element) "
        }
        lines.append(fit(tabTitles.joined(separator: " ") + "   StateStore mail", columns))
        // The title, and on the right what last happened.
        let title = front?.title ?? ""
        let room = columns - TextWidth.of(title) - 2
        lines.append(
            notice.isEmpty || room < 8
                ? fit(title, columns)
                : title + String(repeating: " ", count: max(2, room - min(TextWidth.of(notice), room) + 2))
                    + fit(notice, room))
        let height = max(0, rows - 4)
        var content = front?.draw(width: columns, height: height, traits: traits) ?? []
        content = Array(content.prefix(height))
        lines += content + Array(repeating: "", count: height - content.count)
        lines.append(fit(front?.help ?? "", columns))
        lines.append(
            fit("\(columns)×\(rows) \(traits) · memory \(monitor.level) · cache \(Self.cacheSummary)", columns))
        var screen = "\u{1B}[?25l\u{1B}[H"
        for (index, line) in lines.prefix(rows).enumerated() {
            let style = index == 0 || index == rows - 1 ? "\u{1B}[7m" : ""
            screen += style + line + String(repeating: " ", count: max(0, columns - TextWidth.of(line))) + "\u{1B}[0m"
            if index < rows - 1 { screen += "\r\n" }
        }
        if let front, let cursor = front.cursor(width: columns), 2 + cursor.row < rows - 2 {
            screen += "\u{1B}[\(3 + cursor.row);\(1 + cursor.column)H\u{1B}[?25h"
        }
        output(screen)
    }
}

/// Tells the app when a memory warning was handled, to show it.
@MainActor
private final class WarningObserver: LifecycleObserver {
    weak var app: TerminalMailApp?
    init(app: TerminalMailApp) { self.app = app }
    func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {
        app?.warningHandled(report)
    }
}
