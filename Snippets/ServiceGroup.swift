// A server program whose state is flushed before it exits: the monitor, the application's
// state and the server as services of one ServiceGroup, which owns SIGTERM and SIGINT and
// stops them in reverse order.

// snippet.hide
import Foundation
import Logging
// snippet.show
import ServiceLifecycle
import StateStore
import StateStoreServiceLifecycle

// snippet.hide
/// What the program serves; here it serves for a moment, then sends its own process SIGTERM,
/// as systemd stopping the service would, and returns at the graceful shutdown.
struct Server: Service {
    func run() async throws {
        try await Task.sleep(for: .milliseconds(200))
        kill(getpid(), SIGTERM)
        try await gracefulShutdown()
    }
}
let server = Server()
let logger = Logger(label: "snippet")
let storyboard = Storyboard()
let folder = FileManager.default.temporaryDirectory.appending(path: "snippet-services-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
setenv("XDG_STATE_HOME", folder.path, 1)
// snippet.show
let store = try StateStore(path: StateStore.defaultPath(appName: "mail"))
let monitor = try MemoryPressureMonitor()
let application = Application(store: store, storyboard: storyboard, memoryMonitor: monitor)
// ... restore the hierarchy or build the first screen, as without a group ...
let group = ServiceGroup(
    configuration: .init(
        services: [
            .init(service: MemoryPressureMonitorService(monitor: monitor)),
            .init(service: ApplicationStateService(application: application)),
            .init(service: server),  // what the program serves, started last, stopped first
        ],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    ))
try await group.run()
// snippet.hide
print("the group ended; the application was terminated: \(application.isTerminated)")
