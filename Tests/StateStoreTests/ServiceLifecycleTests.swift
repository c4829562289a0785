import Foundation
import ServiceLifecycle
import ServiceLifecycleTestKit
import StateStoreCrypto
import StateStoreSQLite
import StateStoreServiceLifecycle
import Testing

@testable import StateStore

/// The mail app run by a real `ServiceGroup` in a real process (`statestore-service-worker`):
/// the group owns SIGTERM and SIGINT, and its graceful shutdown flushes the application.
@Suite("A ServiceGroup owns SIGTERM and SIGINT", .hangGuard(minutes: 10))
struct ServiceLifecycleProcessTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("mail.sqlite") }

    struct Run {
        var status: Int32
        var reason: Process.TerminationReason
        /// Every line printed, "ready" included.
        var lines: [String]
        var standardError: String
    }

    /// Runs `statestore-service-worker MODE DB`; once it printed "ready", sends `signal`.
    func run(_ mode: String, signal: Int32?) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-service-worker"))
        process.arguments = [mode, database]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var lines: [String] = []
        while let line = output.fileHandleForReading.availableLine() {
            lines.append(line)
            if line == "ready" { break }
        }
        if let signal, lines.last == "ready" { kill(process.processIdentifier, signal) }
        let rest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        lines += rest.split(separator: "\n").map(String.init)
        let standardError = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, reason: process.terminationReason, lines: lines,
            standardError: standardError)
    }

    /// What a relaunch of the mail app (`statestore-worker app-report`) restored.
    func relaunch() throws -> [String: String] {
        try relaunchMailApp(database: database).values
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func theGroupsGracefulShutdownSavesTheUnsavedEdit(signal: Int32) throws {
        let run = try run("session", signal: signal)
        // The group caught the signal and returned: a clean exit, not death by the signal.
        #expect(run.reason == .exit)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.lines == ["ready", "monitor running=false"])
        let restored = try relaunch()
        #expect(restored["restored"] == "true")
        #expect(restored["stack"] == "inbox,message")
        #expect(restored["presented"] == "compose")
        #expect(restored["compose"] == "grace@example.org|Hello, world")
    }

    @Test func theStateServiceIsRefusedWhenTheApplicationInstalledItsHandlersFirst() throws {
        let run = try run("handlers-first", signal: nil)
        #expect(run.status == 1)
        #expect(
            run.standardError.contains(
                "SIGTERM and SIGINT are already handled by installTerminationHandlers(), so a ServiceGroup (ApplicationStateService) was refused"
            ))
        // Nothing was lost by the refusal: the last save is there.
        let store = try StateStore(path: database, options: .init(readOnly: true))
        let draft = try #require(try store.entries().first { $0.path.rawValue.hasSuffix("compose") })
        #expect(try store.restore(Draft.self, for: draft.path)?.body == "Hello")
    }

    @Test func installingTheHandlersWhileTheGroupRunsIsRefusedAndReported() throws {
        let run = try run("handlers-during", signal: SIGTERM)
        #expect(run.lines.first == "installed=false")
        #expect(
            run.lines.contains {
                $0.hasPrefix(
                    "error=SIGTERM and SIGINT are already handled by a ServiceGroup (ApplicationStateService), so installTerminationHandlers() was refused"
                )
            })
        // The group still owns the signals and flushes.
        #expect(run.reason == .exit && run.status == 0)
        #expect(try relaunch()["compose"] == "grace@example.org|Hello, world")
    }

    /// Two groups, each with a state service: the one shut down first releases its claim, and
    /// the signals stay with the group still running.
    @Test func aSecondGroupEndingLeavesTheSignalsWithTheGroupStillRunning() throws {
        let run = try run("two-groups", signal: SIGTERM)
        #expect(run.lines.first == "second terminated=true", "\(run)")
        #expect(run.lines.dropFirst().first == "installed=false", "\(run)")
        #expect(run.reason == .exit && run.status == 0, "\(run)")
        #expect(try relaunch()["compose"] == "grace@example.org|Hello, world")
    }

    /// Storage whose syncs fail from "ready" on: the final save commits the edit and cannot
    /// sync it, so the group's `run()` throws (the program does not end as if it were safe
    /// from a power cut), and the edit is in the database.
    @Test func aFinalSaveThatCannotBeSyncedIsThrownFromRun() throws {
        let run = try run("sync-fails", signal: SIGTERM)
        #expect(run.reason == .exit && run.status == 1, "\(run)")
        #expect(
            run.standardError.contains(
                "The application's state was committed at shutdown, but could not be synced to storage, so a power cut may take back what changed since its last sync: "
            ), "\(run.standardError)")
        #expect(run.standardError.contains("disk I/O error"), "\(run.standardError)")
        #expect(try relaunch()["compose"] == "grace@example.org|Hello, world")
    }

    /// The final save is kept out by a lock held past the busy timeout, and the sync after it
    /// fails too: `run()` throws what kept the save out, not the failed sync, which would say the
    /// edit was committed.
    @Test func aFinalSaveKeptOutIsThrownAsSuchWhenTheSyncAfterItFailsToo() throws {
        let run = try run("sync-fails-locked", signal: SIGTERM)
        #expect(run.reason == .exit && run.status == 1, "\(run)")
        #expect(
            run.standardError.contains(
                "The application's state could not be saved at shutdown, so what changed since its last save is lost: "
            ), "\(run.standardError)")
        #expect(run.standardError.contains("locked"), "\(run.standardError)")
        #expect(try relaunch()["compose"] != "grace@example.org|Hello, world")
    }

    struct Draft: Codable, Sendable { var body: String }
}

/// `ApplicationStateService` and `MemoryPressureMonitorService` under ServiceLifecycleTestKit's
/// graceful shutdown, in this process.
@Suite("ServiceLifecycle services, graceful shutdown in process", .serialized)
struct ServiceLifecycleServiceTests {
    let folder = TemporaryFolder()

    /// An application whose window shows a `NoteController` made from a storyboard, with
    /// "typed, never saved" typed into it and never saved by a disappearance; `flushedFirst`
    /// makes a flush point before the typing.
    @MainActor static func noteApplication(_ store: StateStore, flushedFirst: Bool = false) throws -> Application {
        let storyboard = Storyboard()
        storyboard.register("note") { NoteController() }
        let application = Application(store: store, storyboard: storyboard)
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let note = try #require(try storyboard.instantiateViewController(withIdentifier: "note") as? NoteController)
        window.rootViewController = note
        window.makeKeyAndVisible()
        if flushedFirst { application.restorationCoordinator?.flush() }
        note.uncommittedText = "typed, never saved"
        return application
    }

    @Test func gracefulShutdownCommitsTheVisibleStateBeforeRunReturns() async throws {
        let database = folder.file("state.sqlite")
        let application = try await MainActor.run { try Self.noteApplication(try StateStore(path: database)) }

        // The test kit's shutdown traps no signal, so the service claims none (other tests in
        // this process install the application's own handlers).
        try await testGracefulShutdown { trigger in
            async let running: Void = ApplicationStateService(application: application, claimsTerminationSignals: false)
                .run()
            trigger.triggerGracefulShutdown()
            try await running
        }
        #expect(await application.isTerminated)
        // Another connection reads it: committed, not only handed to the writer.
        let reader = try StateStore(path: database, options: .init(readOnly: true))
        let entry = try #require(try reader.entries().first)
        #expect(try reader.restore(NoteController.State.self, for: entry.path)?.text == "typed, never saved")
    }

    /// Another process holds the database's write lock past the busy timeout: the final save
    /// fails, and `run()` throws rather than return as if it had been made.
    @Test func aFinalSaveThatFailsIsThrownFromRun() async throws {
        let database = folder.file("locked.sqlite")
        let application = try await MainActor.run {
            try Self.noteApplication(
                try StateStore(path: database, options: .init(busyTimeout: .milliseconds(50))), flushedFirst: true)
        }
        beforeRawSQLite()
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        await #expect {
            try await testGracefulShutdown { trigger in
                async let running: Void = ApplicationStateService(
                    application: application, claimsTerminationSignals: false
                ).run()
                trigger.triggerGracefulShutdown()
                try await running
            }
        } throws: { error in
            guard let unsaved = error as? UnsavedStateError, case .store(.busy) = unsaved.problem else { return false }
            return "\(unsaved)".hasPrefix(
                "The application's state could not be saved at shutdown, so what changed since its last save is lost: ")
        }
        #expect(await application.isTerminated)
        // Read while the lock is still held (a reader of a WAL database is not blocked): the
        // edit is not in the database. (Released, a retry the writer still has queued may land.)
        let reader = try StateStore(path: database, options: .init(readOnly: true))
        for entry in try reader.entries() where entry.typeName.contains("NoteController") {
            #expect(try reader.restore(NoteController.State.self, for: entry.path)?.text != "typed, never saved")
        }
        try #require(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
    }

    /// A visible screen whose saves are refused (its path's stored state, of another type,
    /// could not be set aside under a lock): its edit at shutdown is not in the database, and
    /// `run()` throws.
    @Test func aFinalSaveRefusedToProtectAStoredStateIsThrownFromRun() async throws {
        let database = folder.file("protected.sqlite")
        let application: Application = try await MainActor.run {
            let seed = try StateStore(path: database)
            try seed.save(
                encoded: Data(#"{"secret":"s3cret","text":"precious"}"#.utf8), encoding: .json, typeName: "Old.State",
                version: 1, for: "nav/detail")
            let store = try StateStore(path: database, options: .init(busyTimeout: .milliseconds(200)))
            let storyboard = Storyboard()
            storyboard.register("root") { ViewController() }
            storyboard.register("detail") { NoteController() }
            let application = Application(store: store, storyboard: storyboard)
            application.restorationCoordinator?.errorHandler = { _ in }
            let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
            let navigation = NavigationController(
                rootViewController: try storyboard.instantiateViewController(withIdentifier: "root"))
            navigation.restorationIdentifier = "nav"
            window.rootViewController = navigation
            window.makeKeyAndVisible()
            application.restorationCoordinator?.flush()
            beforeRawSQLite()
            var handle: OpaquePointer?
            try #require(sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
            defer { sqlite3_close_v2(handle) }
            try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
            let detail = try #require(
                try storyboard.instantiateViewController(withIdentifier: "detail") as? NoteController)
            navigation.pushViewController(detail, animated: false)
            try #require(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
            detail.restorableState.text = "typed, never saved"
            return application
        }
        await #expect(throws: UnsavedStateError.self) {
            try await testGracefulShutdown { trigger in
                async let running: Void = ApplicationStateService(
                    application: application, claimsTerminationSignals: false
                ).run()
                trigger.triggerGracefulShutdown()
                try await running
            }
        }
        let row = try StateStore(path: database, options: .init(readOnly: true)).state(at: "nav/detail")
        let stored = String(decoding: row?.bytes ?? Data(), as: UTF8.self)
        #expect(stored.contains("s3cret"))
    }

    /// A final save refused for good (the database records a key the store was not given) is
    /// not carried for a retry, and is thrown as well.
    @Test func aFinalSaveRefusedForGoodIsThrownFromRun() async throws {
        let database = folder.file("sealed.sqlite")
        let key = try testKey(1)
        try StateStore.rekey(at: database, from: nil, to: StateKeyring(key))
        let application = try await MainActor.run { try Self.noteApplication(try StateStore(path: database)) }
        await #expect {
            try await testGracefulShutdown { trigger in
                async let running: Void = ApplicationStateService(
                    application: application, claimsTerminationSignals: false
                ).run()
                trigger.triggerGracefulShutdown()
                try await running
            }
        } throws: { error in
            guard let unsaved = error as? UnsavedStateError, case .store(.keyRequired(_, let keyID)) = unsaved.problem
            else { return false }
            return keyID == key.id
        }
        #expect(try StateStore(path: database, options: .init(readOnly: true)).entries().isEmpty)
    }

    @Test func theMonitorServiceStopsAndJoinsTheMonitorAtGracefulShutdown() async throws {
        let monitor = try MemoryPressureMonitor(configuration: try MonitorThreads.fixture(in: folder))
        let thread = try await testGracefulShutdown { trigger in
            async let running: Void = MemoryPressureMonitorService(monitor: monitor).run()
            let thread = try await MonitorThreads.started(monitor)
            #expect(MonitorThreads.exists(thread))
            trigger.triggerGracefulShutdown()
            try await running
            return thread
        }
        #expect(!monitor.isRunning)
        #expect(MonitorThreads.gone(thread))
    }
}

/// The monitor's thread as `/proc/self/task` shows it.
enum MonitorThreads {
    /// A fixture root with a roomy meminfo, so a monitor reads nothing of the machine's.
    static func fixture(in folder: TemporaryFolder) throws -> MemoryPressureMonitor.Configuration {
        let root = folder.file("root-\(UUID().uuidString)")
        try MemoryFixtures.write(
            MemoryFixtures.meminfo(totalKB: 8_000_000, availableKB: 6_000_000), to: "/proc/meminfo", in: root)
        return MemoryPressureMonitor.Configuration(root: root)
    }

    /// The kernel id of `monitor`'s thread, once it has started.
    static func started(_ monitor: MemoryPressureMonitor) async throws -> Int32 {
        for _ in 0..<2_000 {
            if let id = monitor.threadID { return id }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw RawSQLFailure(message: "the monitor thread did not start")
    }

    static func exists(_ id: Int32) -> Bool {
        FileManager.default.fileExists(atPath: "/proc/self/task/\(id)")
    }

    /// Whether the thread is gone, allowing the kernel a moment to drop its `/proc` entry
    /// after the join.
    static func gone(_ id: Int32) -> Bool {
        for _ in 0..<200 {
            if !exists(id) { return true }
            usleep(10_000)
        }
        return false
    }
}
