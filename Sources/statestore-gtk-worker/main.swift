// A small program the GTK adapter's tests run as separate processes, on a D-Bus daemon of their
// own standing in for the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`):
//
//     statestore-gtk-worker low-memory-monitor
//         owns org.freedesktop.LowMemoryMonitor, as the low-memory-monitor service does, prints
//         "owned", then emits its LowMemoryWarning signal with each level read from stdin (a
//         number a line), printing "emitted N" after each.
//     statestore-gtk-worker glib-warnings ROOT
//         a MemoryPressureMonitor on the fixture tree ROOT (a stand-in for /), refreshed once,
//         fed GLib's GMemoryMonitor warnings through GLibMemoryWarnings; prints a line for each
//         event the monitor raises and for each warning GLib gives, and runs GLib's main loop.
import Foundation
import StateStore
import StateStoreGTK
import StateStoreGTK4

/// Writes a line to stdout at once (the tests read it while the program runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("statestore-gtk-worker: \(message)\n".utf8))
    exit(1)
}

func describe(_ event: MemoryPressureEvent?) -> String {
    guard let event else { return "none" }
    let external = event.externalWarning.map { " external=\($0.sender)" } ?? ""
    return
        "\(event.level) previous=\(event.previousLevel) trigger=\(event.trigger.rawValue) source=\(event.source.rawValue)"
        + external
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "low-memory-monitor":
    var error: UnsafeMutablePointer<GError>?
    guard let connection = g_bus_get_sync(G_BUS_TYPE_SYSTEM, nil, &error) else {
        fail("no system bus: \(error.map { String(cString: $0.pointee.message) } ?? "?")")
    }
    let request = g_variant_new_tuple(
        [g_variant_new_string("org.freedesktop.LowMemoryMonitor"), g_variant_new_uint32(4)], 2)  // DO_NOT_QUEUE
    guard
        let reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
            request, nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
    else { fail("RequestName failed: \(error.map { String(cString: $0.pointee.message) } ?? "?")") }
    let result = g_variant_get_uint32(g_variant_get_child_value(reply, 0))
    guard result == 1 else { fail("org.freedesktop.LowMemoryMonitor is owned already (\(result))") }
    say("owned")
    while let line = readLine() {
        guard let level = UInt8(line.trimmingCharacters(in: .whitespaces)) else { continue }
        let parameters = g_variant_new_tuple([g_variant_new_byte(level)], 1)
        guard
            g_dbus_connection_emit_signal(
                connection, nil, "/org/freedesktop/LowMemoryMonitor", "org.freedesktop.LowMemoryMonitor",
                "LowMemoryWarning", parameters, &error) != 0
        else { fail("LowMemoryWarning not emitted: \(error.map { String(cString: $0.pointee.message) } ?? "?")") }
        g_dbus_connection_flush_sync(connection, nil, nil)
        say("emitted \(level)")
    }
    exit(0)

case "glib-warnings":
    guard arguments.count == 2 else { fail("usage: statestore-gtk-worker glib-warnings ROOT") }
    MainActor.assumeIsolated {
        let monitor: MemoryPressureMonitor
        do {
            monitor = try MemoryPressureMonitor(configuration: .init(root: arguments[1]))
        } catch { fail("\(error)") }
        monitor.onEvent { event in say("event \(describe(event))") }
        do { try monitor.refresh() } catch { fail("\(error)") }
        let warnings = GLibMemoryWarnings(feeding: monitor)
        warnings.onWarning = { warning in
            say("glib \(warning.glibLevel) level=\(warning.level) raised=\(describe(warning.event))")
        }
        say("watching")
        withExtendedLifetime(warnings) {
            g_main_loop_run(g_main_loop_new(nil, 0))
        }
    }

default:
    fail("usage: statestore-gtk-worker low-memory-monitor | glib-warnings ROOT")
}
