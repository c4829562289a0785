// The mail app (Examples/Mail) run by a ServiceGroup, as a server-side program runs it; the
// tests send it SIGTERM or SIGINT and relaunch it with `statestore-worker app-report DB`.
//
//     statestore-service-worker session DB             a reply typed in compose, the last edit unsaved; prints
//                                                      "ready" once the group traps SIGTERM/SIGINT, exits 0
//                                                      after the group's graceful shutdown
//     statestore-service-worker handlers-first DB      installTerminationHandlers() before the group runs: the
//                                                      state service is refused (its error on stderr, exit 1)
//     statestore-service-worker handlers-during DB     installTerminationHandlers() while the group runs: prints
//                                                      "installed=false" and the error reported, then "ready"
//     statestore-service-worker two-groups DB          a second group, with an application of its own (DB-second),
//                                                      runs and shuts down while the first runs; then as
//                                                      handlers-during: its release leaves the first group's claim
//     statestore-service-worker sync-fails DB          as session, on storage whose syncs fail from "ready" on (the
//                                                      crash VFS): the final save commits and cannot be synced, so
//                                                      the group's run() throws (on stderr, exit 1)
//     statestore-service-worker sync-fails-locked DB   as sync-fails, with another connection holding the write
//                                                      lock past the app's 100 ms busy timeout: the final save
//                                                      is not made, and run() throws that, not the failed sync
import Foundation
import Logging
import MailExample
import ServiceLifecycle
import StateStore
import StateStoreCrashVFS
import StateStoreServiceLifecycle

/// Prints "ready" once it runs (the group traps its signals before it starts any service),
/// after `prepare`, then waits for shutdown.
struct ReadyService: Service {
    let prepare: @Sendable () async -> Void
    func run() async throws {
        // Services start concurrently: wait for the state service's claim on the signals.
        while TerminationSignalClaim.owner == nil { try? await Task.sleep(for: .milliseconds(1)) }
        await prepare()
        emit("ready")
        try? await gracefulShutdown()
    }
}

/// One line on standard output, unbuffered.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

@main
@MainActor
struct ServiceWorker {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 2,
            ["session", "handlers-first", "handlers-during", "two-groups", "sync-fails", "sync-fails-locked"].contains(
                arguments[0])
        else {
            FileHandle.standardError.write(
                Data(
                    "usage: statestore-service-worker session|handlers-first|handlers-during|two-groups|sync-fails|sync-fails-locked DB\n"
                        .utf8))
            exit(2)
        }
        let mode = arguments[0]
        if mode.hasPrefix("sync-fails") {
            // Every file of the database's folder goes through the crash VFS from its open on,
            // synced as usual until "ready"; nothing is ever cut.
            guard statestore_crashvfs_register(1) == 0 else { exit(3) }
            statestore_crashvfs_begin(
                (arguments[1] as NSString).deletingLastPathComponent, 1, 0, STATESTORE_CRASH_KEEP_ALL)
        }
        do {
            let monitor = try MemoryPressureMonitor()
            let busyTimeout: Duration =
                mode == "sync-fails-locked" ? .milliseconds(100) : StateStore.Options().busyTimeout
            let app = MailApp(
                store: try StateStore(path: arguments[1], options: .init(busyTimeout: busyTimeout)),
                memoryMonitor: monitor)
            try app.launch()
            try app.open(MailMessage.mailbox[7])
            try app.reply()
            app.compose?.type(to: "grace@example.org", subject: "", body: "Hello")
            app.application.saveVisibleState()
            // Typed after the last save: only the group's graceful shutdown, which terminates the
            // application (compose disappears and commits its editor), can save this edit.
            app.compose?.editor.text = "Hello, world"
            if mode == "handlers-first" { app.application.installTerminationHandlers() }
            let application = app.application
            var logger = Logger(label: "statestore-service-worker")
            logger.logLevel = .critical
            let second =
                mode == "two-groups"
                ? MailApp(store: try StateStore(path: arguments[1] + "-second"), memoryMonitor: monitor).application
                : nil
            let ready = ReadyService { [logger] in
                if mode == "sync-fails-locked" {
                    // Holds the write lock from before "ready" until after the group has ended.
                    let holder = try? StateStore(path: arguments[1])
                    let locked = DispatchSemaphore(value: 0)
                    Thread.detachNewThread {
                        _ = try? holder?.write { (_) throws(StateStoreError) in
                            locked.signal()
                            sleep(30)
                        }
                    }
                    locked.wait()
                }
                if mode.hasPrefix("sync-fails") { statestore_crashvfs_fail_syncs(1) }
                guard mode == "handlers-during" || mode == "two-groups" else { return }
                if let second {
                    // Another group's state service claims the signals too, and releases its claim
                    // when that group shuts down, while this one still runs.
                    let other = ServiceGroup(
                        configuration: .init(
                            services: [.init(service: ApplicationStateService(application: second))], logger: logger))
                    async let otherRun: Void = other.run()
                    try? await Task.sleep(for: .milliseconds(50))
                    await other.triggerGracefulShutdown()
                    try? await otherRun
                    emit("second terminated=\(await second.isTerminated)")
                }
                // The state service has claimed the signals by now (see `run()`'s wait).
                await MainActor.run {
                    emit("installed=\(application.installTerminationHandlers())")
                    for error in application.restorationCoordinator?.recentErrors ?? [] { emit("error=\(error)") }
                }
            }
            let group = ServiceGroup(
                configuration: .init(
                    services: [
                        .init(service: MemoryPressureMonitorService(monitor: monitor)),
                        .init(service: ApplicationStateService(application: application)),
                        .init(service: ready),
                    ],
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger
                ))
            try await group.run()
            emit("monitor running=\(monitor.isRunning)")
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("statestore-service-worker: \(error)\n".utf8))
            exit(1)
        }
    }
}
