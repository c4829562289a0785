// The mail app in a GTK 4 window: for now one screen, the reply being written, in a text view.
//
//     mail-gtk [--db PATH]
//
// The database defaults to $MAIL_DB, else StateStore.defaultPath(appName: "mail-gtk").
// $MAIL_MONITOR_ROOT points the memory-pressure monitor at a folder standing in for / (a fixture
// tree); $MAIL_AUTOSAVE_MS is how long typing pauses before the draft is saved (default 300).
//
// The first launch opens the first message of the inbox and replies to it; every later launch
// (after quitting, or after kill -9) rebuilds the tabs, the message and the reply from the store,
// with the draft's text, in a window of the size it had. Ctrl+Q quits. The first frame's time after the
// process started is written to stderr.
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

/// The reply's text view, kept in step with the compose controller's draft.
@MainActor
final class ReplyEditor {
    let mail: MailApp
    let buffer: UnsafeMutablePointer<GtkTextBuffer>
    let textView: UnsafeMutablePointer<GtkWidget>
    private var edits = 0

    init(mail: MailApp) {
        self.mail = mail
        textView = gtk_text_view_new()
        buffer = gtk_text_view_get_buffer(cgtk_text_view(textView))
        gtk_text_view_set_wrap_mode(cgtk_text_view(textView), GTK_WRAP_WORD_CHAR)
        gtk_text_buffer_set_text(buffer, mail.compose?.restorableState.body ?? "", -1)
        cgtk_connect(
            UnsafeMutableRawPointer(buffer), "changed",
            { _, data in
                MainActor.assumeIsolated { Unmanaged<ReplyEditor>.fromOpaque(data!).takeUnretainedValue().changed() }
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    var text: String {
        var start = GtkTextIter(), end = GtkTextIter()
        gtk_text_buffer_get_bounds(buffer, &start, &end)
        guard let characters = gtk_text_buffer_get_text(buffer, &start, &end, 0) else { return "" }
        defer { g_free(characters) }
        return String(cString: characters)
    }

    /// Typing edits the draft at once; the draft is saved when typing pauses (a flush point),
    /// from the main dispatch queue, which GLib's loop serves.
    private func changed() {
        guard let compose = mail.compose else { return }
        compose.restorableState.body = text
        compose.editor.text = compose.restorableState.body
        edits += 1
        let edit = edits
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(autosave)) {
            MainActor.assumeIsolated {
                guard edit == self.edits else { return }
                self.mail.application.saveVisibleState()
            }
        }
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
        let window = gtk.makeWindow(for: mail.window, title: "Mail")
        try mail.launch()
        if mail.compose == nil, let first = MailMessage.mailbox.first {
            try mail.open(first)
            try mail.reply()
        }
        // SIGTERM and SIGINT save what is visible and exit; their pipe is read on the main queue.
        mail.application.installTerminationHandlers()

        let editor = ReplyEditor(mail: mail)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)
        let subject = MailMessage.find(mail.message?.restorableState.messageID)?.subject ?? ""
        let heading = gtk_label_new("Re: \(subject) (\(mail.restored ? "restored" : "new"))")
        gtk_box_append(cgtk_box(box), heading)
        let scrolled = gtk_scrolled_window_new()
        gtk_widget_set_vexpand(scrolled, 1)
        gtk_scrolled_window_set_child(cgtk_scrolled_window(scrolled), editor.textView)
        gtk_box_append(cgtk_box(box), scrolled)
        gtk_window_set_child(window.pointer, box)
        gtk_widget_grab_focus(editor.textView)

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
        running = [mail, editor]
        return mail.application
    }
    running.append(gtk)
    exit(gtk.run())
}
