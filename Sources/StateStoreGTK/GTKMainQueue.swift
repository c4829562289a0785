import Dispatch
import StateStoreGTK4

/// Serves the main dispatch queue (the main actor's executor) from GLib's main loop.
///
/// `dispatchMain()` and GLib's `g_main_loop_run()` both want the main thread. Under GTK, GLib
/// has it, so the work Swift puts on the main queue (the main actor's jobs, `DispatchQueue.main`
/// blocks, the store writer's reports, memory warnings from the monitor's thread) must be run
/// from a GLib source. This one watches the file descriptor libdispatch signals when the main
/// queue gets work (the one Foundation's run loop watches on Linux) and drains the queue when it
/// becomes readable: nothing polls, and an idle app does not wake up for it.
///
/// ``GTKApplication`` installs it before GTK's loop runs; an app that runs GLib's loop itself
/// calls ``install()`` once, on the main thread, first.
public enum GTKMainQueue {
    /// The GLib source's id, once installed.
    @MainActor private static var source: guint = 0

    /// Makes GLib's default main context drain the main dispatch queue whenever it has work.
    /// Installing it again does nothing.
    @MainActor
    public static func install() {
        guard source == 0 else { return }
        let handle = cgtk_main_queue_handle()
        source = g_unix_fd_add(
            handle, G_IO_IN,
            { _, _, _ in
                cgtk_drain_main_queue()
                return gboolean(1)  // G_SOURCE_CONTINUE
            }, nil)
        // Work queued before the watch existed signalled nothing GLib saw: run it now.
        cgtk_drain_main_queue()
    }
}
