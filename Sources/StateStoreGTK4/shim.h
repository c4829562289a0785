#ifndef STATESTORE_GTK4_SHIM_H
#define STATESTORE_GTK4_SHIM_H

#include <gtk/gtk.h>
#include <glib-unix.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

// GObject's casts (GTK_WINDOW(), G_APPLICATION(), ...) and g_signal_connect() are macros,
// which Swift does not import. These thin static inline functions give the few StateStoreGTK
// needs a fixed, typed signature.

/// `G_OBJECT(pointer)`.
static inline GObject *cgtk_object(gpointer pointer) { return G_OBJECT(pointer); }
/// `G_APPLICATION(application)`.
static inline GApplication *cgtk_application(GtkApplication *application) { return G_APPLICATION(application); }
/// `GTK_WINDOW(widget)`.
static inline GtkWindow *cgtk_window(GtkWidget *widget) { return GTK_WINDOW(widget); }
/// `GTK_WIDGET(window)`.
static inline GtkWidget *cgtk_widget(GtkWindow *window) { return GTK_WIDGET(window); }
/// `GTK_TEXT_VIEW(widget)`.
static inline GtkTextView *cgtk_text_view(GtkWidget *widget) { return GTK_TEXT_VIEW(widget); }
/// `GTK_BOX(widget)`.
static inline GtkBox *cgtk_box(GtkWidget *widget) { return GTK_BOX(widget); }
/// `GTK_SCROLLED_WINDOW(widget)`.
static inline GtkScrolledWindow *cgtk_scrolled_window(GtkWidget *widget) { return GTK_SCROLLED_WINDOW(widget); }
/// `GTK_NATIVE(window)`.
static inline GtkNative *cgtk_native(GtkWindow *window) { return GTK_NATIVE(window); }
/// Whether `surface` is a toplevel (`GDK_IS_TOPLEVEL`).
static inline gboolean cgtk_is_toplevel(GdkSurface *surface) { return GDK_IS_TOPLEVEL(surface); }
/// `GDK_TOPLEVEL(surface)`.
static inline GdkToplevel *cgtk_toplevel(GdkSurface *surface) { return GDK_TOPLEVEL(surface); }
/// Whether `state` says the toplevel is minimized (iconified).
static inline gboolean cgtk_state_is_minimized(GdkToplevelState state) {
    return (state & GDK_TOPLEVEL_STATE_MINIMIZED) != 0;
}

/// `g_signal_connect()` for a signal whose handler takes only its instance and the user data
/// (`activate`, `shutdown`, `show`, `hide`, `realize`, `changed`, ...).
static inline gulong cgtk_connect(gpointer instance, const char *signal,
                                  void (*handler)(gpointer instance, gpointer data), gpointer data) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, NULL, 0);
}

/// `g_signal_connect()` for a signal whose handler returns a `gboolean` (`close-request`).
static inline gulong cgtk_connect_boolean(gpointer instance, const char *signal,
                                          gboolean (*handler)(gpointer instance, gpointer data), gpointer data) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, NULL, 0);
}

/// `g_signal_connect()` for `notify::<property>`: the handler gets the instance, the
/// property's `GParamSpec` and the user data.
static inline gulong cgtk_connect_notify(gpointer instance, const char *signal,
                                         void (*handler)(gpointer instance, GParamSpec *property, gpointer data),
                                         gpointer data) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, NULL, 0);
}

/// `g_signal_connect()` for a `GSimpleAction`'s `activate`: the handler gets the action, its
/// parameter (or `NULL`) and the user data.
static inline gulong cgtk_connect_action(GSimpleAction *action,
                                         void (*handler)(GSimpleAction *action, GVariant *parameter, gpointer data),
                                         gpointer data) {
    return g_signal_connect_data(action, "activate", G_CALLBACK(handler), data, NULL, 0);
}

/// `g_signal_connect()` for `GMemoryMonitor`'s `low-memory-warning`: the handler gets the
/// monitor, GLib's warning level (50, 100, 255) and the user data.
static inline gulong cgtk_connect_low_memory_warning(GMemoryMonitor *monitor,
                                                     void (*handler)(GMemoryMonitor *monitor,
                                                                     GMemoryMonitorWarningLevel level, gpointer data),
                                                     gpointer data) {
    return g_signal_connect_data(monitor, "low-memory-warning", G_CALLBACK(handler), data, NULL, 0);
}

/// `G_ACTION_MAP(application)`.
static inline GActionMap *cgtk_action_map(GtkApplication *application) { return G_ACTION_MAP(application); }
/// `G_ACTION(action)`.
static inline GAction *cgtk_action(GSimpleAction *action) { return G_ACTION(action); }

// libdispatch's main queue, as Foundation's run loop serves it on Linux: an eventfd that
// becomes readable when work is queued on the main queue, and the call that runs that work on
// the main thread. Exported by the toolchain's libdispatch (which every Swift program using
// Dispatch links); not declared in its public headers.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

/// The file descriptor that becomes readable when the main dispatch queue has work.
static inline int cgtk_main_queue_handle(void) { return _dispatch_get_main_queue_handle_4CF(); }

/// Empties the main queue's eventfd (without blocking), then runs the work queued on the main
/// dispatch queue. Call it on the main thread only.
static inline void cgtk_drain_main_queue(void) {
    uint64_t count;
    ssize_t ignored = read(_dispatch_get_main_queue_handle_4CF(), &count, sizeof count);
    (void)ignored;
    _dispatch_main_queue_callback_4CF(NULL);
}

#endif
