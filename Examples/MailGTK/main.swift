// The mail app in a GTK 4 window: the inbox, the message pushed over it, the reply in a modal
// dialog, the settings tab, and a status bar with the caches and the last memory warning.
//
//     mail-gtk [--db PATH]
//
// The database defaults to $MAIL_DB, else StateStore.defaultPath(appName: "mail-gtk").
// $MAIL_MONITOR_ROOT points the memory-pressure monitor at a folder standing in for / (a fixture
// tree); $MAIL_AUTOSAVE_MS is how long typing pauses before the visible state is saved (default 300).
//
// The engine's controllers are the model (Examples/Mail): clicking an inbox row is
// `MailApp.open(_:)`, "Reply" is `MailApp.reply()`, the back button pops the navigation
// controller, closing the reply dialog dismisses the compose controller. StateStoreGTK's
// GTKNavigationStack and GTKPresentation show what the engine holds, so every later launch
// (after quitting, or after kill -9) comes back as it was left: the tab, the page stack, the
// dialog with the draft's text and cursor, in a window of the size it had. Ctrl+Q quits. The
// first frame's time after the process started is written to stderr, and so is each memory
// warning the app handled.
import Dispatch
import Foundation
import MailExample
import StateStore
import StateStoreGTK
import StateStoreGTK4

var arguments = Array(CommandLine.arguments.dropFirst())
var database = ProcessInfo.processInfo.environment["MAIL_DB"] ?? StateStore.defaultPath(appName: "mail-gtk")
if let index = arguments.firstIndex(of: "--db"), index + 1 < arguments.count {
    database = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
}
guard arguments.isEmpty else {
    FileHandle.standardError.write(Data("usage: mail-gtk [--db PATH]\n".utf8))
    exit(2)
}
let autosave = Int(ProcessInfo.processInfo.environment["MAIL_AUTOSAVE_MS"] ?? "") ?? 300

/// `g_signal_connect()` for a signal whose handler gets one argument between its instance and
/// the user data (`row-activated`: the row).
@discardableResult
func connect(
    _ instance: UnsafeMutableRawPointer, _ signal: String,
    _ handler: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void,
    _ data: UnsafeMutableRawPointer?
) -> gulong {
    g_signal_connect_data(instance, signal, unsafeBitCast(handler, to: GCallback.self), data, nil, GConnectFlags(0))
}

/// The window a signal's user data points at.
func mailWindow(_ data: UnsafeMutableRawPointer?) -> MailWindow {
    Unmanaged<MailWindow>.fromOpaque(data!).takeUnretainedValue()
}

/// `GTK_<TYPE>(widget)` for the types whose structs GTK keeps opaque (`GtkListBox`, `GtkStack`, ...).
func opaque(_ widget: UnsafeMutablePointer<GtkWidget>) -> OpaquePointer { OpaquePointer(widget) }

/// A label with its text at the start, wrapped if `wraps`.
func label(_ text: String, wraps: Bool = false) -> UnsafeMutablePointer<GtkWidget> {
    let made = gtk_label_new(text)!
    gtk_label_set_xalign(opaque(made), 0)
    if wraps {
        gtk_label_set_wrap(opaque(made), 1)
        gtk_label_set_wrap_mode(opaque(made), PANGO_WRAP_WORD_CHAR)
    }
    return made
}

/// `512 B`, `3.4 KB`.
func bytes(_ count: Int) -> String {
    count < 1024 ? "\(count) B" : String(format: "%.1f KB", Double(count) / 1024)
}

/// The whole app: the engine's `MailApp`, and the GTK widgets that show it.
@MainActor
final class MailWindow {
    let mail: MailApp
    let window: GTKWindow
    private(set) var navigation: GTKNavigationStack!
    private(set) var presentation: GTKPresentation!
    private let tabStack: OpaquePointer
    private let status: UnsafeMutablePointer<GtkWidget>
    private var messagePages: [ObjectIdentifier: MessagePage] = [:]
    private var inboxList: OpaquePointer?
    private var signatureEntry: OpaquePointer?
    /// Every reply editor made (one per dialog): their signal handlers point at them.
    private var editors: [ReplyEditor] = []
    private var saveGeneration = 0

    init(mail: MailApp, window: GTKWindow) {
        self.mail = mail
        self.window = window
        tabStack = opaque(gtk_stack_new())
        status = label("")
        gtk_label_set_ellipsize(opaque(status), PANGO_ELLIPSIZE_END)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        let bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        gtk_widget_set_size_request(bar, -1, 40)
        let switcher = gtk_stack_switcher_new()!
        gtk_stack_switcher_set_stack(opaque(switcher), tabStack)
        gtk_widget_set_margin_start(switcher, 6)
        gtk_widget_set_valign(switcher, GTK_ALIGN_CENTER)
        gtk_box_append(cgtk_box(bar), switcher)
        gtk_box_append(cgtk_box(box), bar)
        let tabsWidget = UnsafeMutablePointer<GtkWidget>(tabStack)
        gtk_widget_set_vexpand(tabsWidget, 1)
        gtk_box_append(cgtk_box(box), tabsWidget)
        gtk_box_append(cgtk_box(box), gtk_separator_new(GTK_ORIENTATION_HORIZONTAL))
        gtk_widget_set_margin_start(status, 6)
        gtk_widget_set_margin_top(status, 4)
        gtk_widget_set_margin_bottom(status, 4)
        gtk_box_append(cgtk_box(box), status)
        gtk_window_set_child(window.pointer, box)

        if let stack = mail.mail {
            navigation = GTKNavigationStack(navigationController: stack) { navigation, controller in
                self.page(for: controller, in: navigation)
            }
            gtk_stack_add_titled(tabStack, navigation.widget, "mail", "Mail")
        }
        gtk_stack_add_titled(tabStack, settingsPage(), "settings", "Settings")
        showSelectedTab()
        cgtk_connect_notify(
            UnsafeMutableRawPointer(tabStack), "notify::visible-child-name",
            { _, _, data in MainActor.assumeIsolated { mailWindow(data).tabShown() } }, selfPointer)
        if let tabs = mail.tabs {
            presentation = GTKPresentation(
                presenter: tabs, over: window,
                title: { _ in "Reply" },
                content: { controller in self.replyContent(for: controller) })
            presentation.defaultSize = (360, 240)
        }
        mail.application.addObserver(Observer(owner: self))
        refreshStatus()
    }

    private var selfPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: Saving

    /// Saves what is visible once the user pauses (`$MAIL_AUTOSAVE_MS`): a flush point, from the
    /// main dispatch queue, which GLib's loop serves.
    func scheduleSave() {
        saveGeneration += 1
        let generation = saveGeneration
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(autosave)) {
            MainActor.assumeIsolated {
                guard generation == self.saveGeneration else { return }
                self.mail.application.saveVisibleState()
            }
        }
    }

    // MARK: Tabs

    /// The engine's selected tab, shown.
    func showSelectedTab() {
        let name = mail.tabs?.selectedViewController === mail.settings ? "settings" : "mail"
        let shown = gtk_stack_get_visible_child_name(tabStack).map { String(cString: $0) }
        if shown != name { gtk_stack_set_visible_child_name(tabStack, name) }
    }

    /// The user switched tabs: the engine's tab bar selects the same one.
    func tabShown() {
        guard let tabs = mail.tabs, let name = gtk_stack_get_visible_child_name(tabStack).map({ String(cString: $0) })
        else { return }
        let wanted: ViewController? = name == "settings" ? mail.settings : mail.mail
        guard let wanted, tabs.selectedViewController !== wanted else { return }
        tabs.selectedViewController = wanted
        scheduleSave()
    }

    // MARK: Pages

    private func page(
        for controller: ViewController, in navigation: GTKNavigationStack
    ) -> UnsafeMutablePointer<GtkWidget> {
        if controller is InboxController { return inboxPage() }
        if let message = controller as? MessageController {
            let page = MessagePage(controller: message, window: self, navigation: navigation)
            messagePages[ObjectIdentifier(message)] = page
            return page.widget
        }
        return label("\(type(of: controller))")
    }

    /// The inbox: a list of the mailbox, the selected message's row selected.
    private func inboxPage() -> UnsafeMutablePointer<GtkWidget> {
        let list = gtk_list_box_new()!
        inboxList = opaque(list)
        gtk_list_box_set_selection_mode(opaque(list), GTK_SELECTION_SINGLE)
        for message in MailMessage.mailbox {
            let row = label("\(message.subject) — \(message.from)")
            gtk_widget_set_size_request(row, -1, 40)
            gtk_widget_set_margin_start(row, 8)
            gtk_list_box_append(opaque(list), row)
        }
        showInboxSelection()
        connect(
            UnsafeMutableRawPointer(list), "row-activated",
            { _, row, data in
                MainActor.assumeIsolated {
                    let index = Int(gtk_list_box_row_get_index(row?.assumingMemoryBound(to: GtkListBoxRow.self)))
                    mailWindow(data).open(index)
                }
            }, selfPointer)
        let scrolled = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(cgtk_scrolled_window(scrolled), list)
        return scrolled
    }

    /// The inbox's selection, as its controller holds it: a controller under another restores
    /// its state when it first appears, after its page was built.
    func showInboxSelection() {
        guard let inboxList else { return }
        let selected = mail.inbox?.restorableState.selectedMessageID
        if let index = MailMessage.mailbox.firstIndex(where: { $0.id == selected }),
            let row = gtk_list_box_get_row_at_index(inboxList, Int32(index))
        {
            gtk_list_box_select_row(inboxList, row)
        } else {
            gtk_list_box_unselect_all(inboxList)
        }
    }

    /// A click on the inbox's row `index`: the engine opens the message.
    func open(_ index: Int) {
        guard MailMessage.mailbox.indices.contains(index), mail.message == nil else { return }
        do {
            try mail.open(MailMessage.mailbox[index])
        } catch {
            FileHandle.standardError.write(Data("mail-gtk: \(error)\n".utf8))
        }
        if let message = mail.message { messagePages[ObjectIdentifier(message)]?.refresh() }
        refreshStatus()
        scheduleSave()
    }

    /// "Reply": the engine presents a compose controller, which the dialog shows.
    func reply() {
        guard mail.compose == nil else { return }
        do {
            try mail.reply()
        } catch {
            FileHandle.standardError.write(Data("mail-gtk: \(error)\n".utf8))
        }
        scheduleSave()
    }

    /// The settings tab: the signature.
    private func settingsPage() -> UnsafeMutablePointer<GtkWidget> {
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        for margin in [gtk_widget_set_margin_start, gtk_widget_set_margin_end, gtk_widget_set_margin_top] {
            margin(box, 12)
        }
        gtk_box_append(cgtk_box(box), label("Signature"))
        let entry = gtk_entry_new()!
        signatureEntry = opaque(entry)
        showSignature()
        cgtk_connect(
            UnsafeMutableRawPointer(entry), "changed",
            { entry, data in
                MainActor.assumeIsolated {
                    let window = mailWindow(data)
                    let text = gtk_editable_get_text(OpaquePointer(entry)).map { String(cString: $0) } ?? ""
                    window.mail.settings?.restorableState.signature = text
                    window.scheduleSave()
                }
            }, selfPointer)
        gtk_box_append(cgtk_box(box), entry)
        return box
    }

    /// The signature, as the settings controller holds it: restored when the tab first
    /// appears, which may be after its page was built.
    func showSignature() {
        guard let signatureEntry else { return }
        let signature = mail.settings?.restorableState.signature ?? ""
        let shown = gtk_editable_get_text(signatureEntry).map { String(cString: $0) } ?? ""
        if shown != signature { gtk_editable_set_text(signatureEntry, signature) }
    }

    /// The reply dialog's content: the message replied to, and the draft in a text view.
    private func replyContent(for controller: ViewController) -> UnsafeMutablePointer<GtkWidget> {
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        let subject = MailMessage.find(mail.message?.restorableState.messageID)?.subject ?? ""
        let heading = label("Re: \(subject)")
        gtk_widget_set_margin_start(heading, 6)
        gtk_box_append(cgtk_box(box), heading)
        guard let compose = controller as? ComposeController else { return box }
        let editor = ReplyEditor(compose: compose, window: self)
        editors.append(editor)
        let scrolled = gtk_scrolled_window_new()!
        gtk_widget_set_vexpand(scrolled, 1)
        gtk_scrolled_window_set_child(cgtk_scrolled_window(scrolled), editor.textView)
        gtk_box_append(cgtk_box(box), scrolled)
        return box
    }

    // MARK: Status bar

    /// The caches the controllers hold, and the last memory warning.
    var statusText: String {
        let caches = [mail.inbox?.previews, mail.message?.rendered, mail.compose?.preview].compactMap { $0 }
        let entries = caches.reduce(0) { $0 + $1.count }
        let cost = caches.reduce(0) { $0 + $1.totalCost }
        var text = "Caches: \(entries) entries, \(bytes(cost))"
        if let warning = mail.application.lastMemoryWarning {
            let time = warning.raisedAt.formatted(date: .omitted, time: .standard)
            text += " · Memory warning: \(warning.level) at \(time), released \(bytes(warning.cacheCostReleased))"
        } else {
            text += " · No memory warning"
        }
        return text
    }

    func refreshStatus() {
        gtk_label_set_text(opaque(status), statusText)
    }

    func hierarchyChanged() {
        showSelectedTab()
        showInboxSelection()
        showSignature()
        for page in messagePages.values { page.refresh() }
        messagePages = messagePages.filter { $0.value.controller != nil }
        refreshStatus()
    }

    func memoryWarningHandled(_ report: MemoryWarningReport) {
        refreshStatus()
        FileHandle.standardError.write(Data("mail-gtk: memory warning (\(report.level)) handled; \(statusText)\n".utf8))
    }

    /// Tells the window about structural changes and memory warnings.
    private final class Observer: LifecycleObserver {
        weak var owner: MailWindow?
        init(owner: MailWindow) { self.owner = owner }
        func hierarchyDidChange(in window: Window) { owner?.hierarchyChanged() }
        func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {
            owner?.memoryWarningHandled(report)
        }
    }
}

/// A message's page: a back button, "Reply", the subject, the sender and the body.
@MainActor
final class MessagePage {
    weak var controller: MessageController?
    let widget: UnsafeMutablePointer<GtkWidget>
    private let subject: UnsafeMutablePointer<GtkWidget>
    private let from: UnsafeMutablePointer<GtkWidget>
    private let body: UnsafeMutablePointer<GtkWidget>

    init(controller: MessageController, window: MailWindow, navigation: GTKNavigationStack) {
        self.controller = controller
        widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)
        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        gtk_widget_set_margin_start(buttons, 6)
        gtk_widget_set_margin_top(buttons, 6)
        let back = navigation.makeBackButton(label: "‹ Inbox")
        let reply = gtk_button_new_with_label("Reply")!
        for button in [back, reply] {
            gtk_widget_set_size_request(button, 100, 36)
            gtk_box_append(cgtk_box(buttons), button)
        }
        cgtk_connect(
            UnsafeMutableRawPointer(reply), "clicked",
            { _, data in MainActor.assumeIsolated { mailWindow(data).reply() } },
            Unmanaged.passUnretained(window).toOpaque())
        gtk_box_append(cgtk_box(widget), buttons)
        subject = label("")
        from = label("")
        body = label("", wraps: true)
        gtk_widget_set_valign(body, GTK_ALIGN_START)
        for part in [subject, from, body] {
            gtk_widget_set_margin_start(part, 8)
            gtk_widget_set_margin_end(part, 8)
        }
        gtk_box_append(cgtk_box(widget), subject)
        gtk_box_append(cgtk_box(widget), from)
        let scrolled = gtk_scrolled_window_new()!
        gtk_widget_set_vexpand(scrolled, 1)
        gtk_scrolled_window_set_child(cgtk_scrolled_window(scrolled), body)
        gtk_box_append(cgtk_box(widget), scrolled)
        refresh()
    }

    /// Shows the message the controller holds now.
    func refresh() {
        let message = MailMessage.find(controller?.restorableState.messageID)
        gtk_label_set_text(opaque(subject), message?.subject ?? "")
        gtk_label_set_text(opaque(from), message.map { "From: \($0.from)" } ?? "")
        gtk_label_set_text(opaque(body), message?.body ?? "")
    }
}

/// The reply's text view, kept in step with the compose controller's draft: its text and
/// the insertion point's offset.
@MainActor
final class ReplyEditor {
    weak var compose: ComposeController?
    unowned let window: MailWindow
    let buffer: UnsafeMutablePointer<GtkTextBuffer>
    let textView: UnsafeMutablePointer<GtkWidget>

    init(compose: ComposeController, window: MailWindow) {
        self.compose = compose
        self.window = window
        textView = gtk_text_view_new()
        buffer = gtk_text_view_get_buffer(cgtk_text_view(textView))
        gtk_text_view_set_wrap_mode(cgtk_text_view(textView), GTK_WRAP_WORD_CHAR)
        let draft = compose.restorableState
        gtk_text_buffer_set_text(buffer, draft.body, -1)
        var cursor = GtkTextIter()
        if let offset = draft.cursor {
            gtk_text_buffer_get_iter_at_offset(buffer, &cursor, Int32(clamping: offset))
        } else {
            gtk_text_buffer_get_end_iter(buffer, &cursor)
        }
        gtk_text_buffer_place_cursor(buffer, &cursor)
        let data = Unmanaged.passUnretained(self).toOpaque()
        cgtk_connect(
            UnsafeMutableRawPointer(buffer), "changed",
            { _, data in
                MainActor.assumeIsolated { Unmanaged<ReplyEditor>.fromOpaque(data!).takeUnretainedValue().edited() }
            }, data)
        cgtk_connect_notify(
            UnsafeMutableRawPointer(buffer), "notify::cursor-position",
            { _, _, data in
                MainActor.assumeIsolated { Unmanaged<ReplyEditor>.fromOpaque(data!).takeUnretainedValue().edited() }
            }, data)
        // The text view takes the keyboard focus when the dialog shows it.
        cgtk_connect(
            UnsafeMutableRawPointer(textView), "map",
            { view, _ in
                gtk_widget_grab_focus(view?.assumingMemoryBound(to: GtkWidget.self))
            }, nil)
    }

    var text: String {
        var start = GtkTextIter(), end = GtkTextIter()
        gtk_text_buffer_get_bounds(buffer, &start, &end)
        guard let characters = gtk_text_buffer_get_text(buffer, &start, &end, 0) else { return "" }
        defer { g_free(characters) }
        return String(cString: characters)
    }

    var cursor: Int {
        var iter = GtkTextIter()
        gtk_text_buffer_get_iter_at_mark(buffer, &iter, gtk_text_buffer_get_insert(buffer))
        return Int(gtk_text_iter_get_offset(&iter))
    }

    /// Typing and moving the cursor edit the draft at once; it is saved when the user pauses.
    private func edited() {
        guard let compose, window.mail.compose === compose else { return }
        let body = text
        compose.restorableState.body = body
        compose.restorableState.cursor = cursor
        compose.editor.text = body
        compose.preview.setValue(body, forKey: "draft")
        window.scheduleSave()
    }
}

/// Seconds since this process started, from the kernel's records (so the loading of the
/// program and its libraries counts).
func secondsSinceProcessStart() -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
        let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
        let afterName = stat.range(of: ")", options: .backwards)
    else { return nil }
    // Field 22 (starttime, in clock ticks after boot); the fields after the name start at 3.
    let fields = stat[afterName.upperBound...].split(separator: " ")
    guard fields.count > 19, let ticks = Double(fields[19]),
        let now = Double(uptime.split(separator: " ").first ?? "")
    else { return nil }
    return now - ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Whether the first frame's time was written.
nonisolated(unsafe) var firstFrameReported = false

/// The app's objects, for as long as the process runs.
nonisolated(unsafe) var running: [AnyObject] = []

MainActor.assumeIsolated {
    let gtk = GTKApplication(identifier: "org.statestore.MailGTK") { gtk in
        let root = ProcessInfo.processInfo.environment["MAIL_MONITOR_ROOT"] ?? "/"
        let mail = MailApp(
            store: try StateStore(path: database),
            memoryMonitor: try MemoryPressureMonitor(configuration: .init(root: root)))
        // The reply opens in a dialog over the main window, which stays on screen: a sheet, so the
        // engine keeps the controllers under it appeared too (full screen, its default, would make
        // them disappear). Made so at a relaunch as well, before the hierarchy is rebuilt.
        mail.application.storyboard.register(MailStoryboard.compose) {
            let compose = ComposeController()
            compose.modalPresentationStyle = .formSheet
            return compose
        }
        let window = gtk.makeWindow(for: mail.window, title: "Mail")
        try mail.launch()
        // SIGTERM and SIGINT save what is visible and exit; their pipe is read on the main queue.
        mail.application.installTerminationHandlers()
        let mailWindow = MailWindow(mail: mail, window: window)

        // The first frame GTK paints: how long the launch took, as a person sees it.
        cgtk_connect(
            UnsafeMutableRawPointer(window.widget), "map",
            { widget, _ in
                guard let clock = gtk_widget_get_frame_clock(widget?.assumingMemoryBound(to: GtkWidget.self)) else {
                    return
                }
                cgtk_connect(
                    UnsafeMutableRawPointer(clock), "after-paint",
                    { _, _ in
                        guard !firstFrameReported else { return }
                        firstFrameReported = true
                        let seconds = secondsSinceProcessStart() ?? -1
                        FileHandle.standardError.write(
                            Data("mail-gtk: first frame \(Int((seconds * 1000).rounded())) ms after start\n".utf8))
                    }, nil)
            }, nil)
        // Ctrl+Q quits: GTK's shutdown follows, and with it Application.terminate() (the draft is
        // written even when typing has not paused).
        let quit = g_simple_action_new("quit", nil)
        cgtk_connect_action(
            quit, { _, _, data in g_application_quit(data?.assumingMemoryBound(to: GApplication.self)) },
            UnsafeMutableRawPointer(cgtk_application(gtk.pointer)))
        g_action_map_add_action(cgtk_action_map(gtk.pointer), cgtk_action(quit))
        g_object_unref(UnsafeMutableRawPointer(quit))
        let accelerator = strdup("<Control>q")
        var accelerators: [UnsafePointer<CChar>?] = [UnsafePointer(accelerator), nil]
        gtk_application_set_accels_for_action(gtk.pointer, "app.quit", &accelerators)
        free(accelerator)
        window.present()
        running = [mail, mailWindow]
        return mail.application
    }
    running.append(gtk)
    exit(gtk.run())
}
