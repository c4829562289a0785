import Foundation
import Logging
import Testing

@testable import StateStore

/// A swift-log handler that keeps every record in memory, for asserting what the library logs.
final class RecordingLogHandler: LogHandler, Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let storage = Lock<[Record]>([])
    private let state = Lock<(Logger.Level, Logger.Metadata)>((.trace, [:]))

    var records: [Record] { storage.withLock { $0 } }

    var logLevel: Logger.Level {
        get { state.withLock { $0.0 } }
        set { state.withLock { $0.0 = newValue } }
    }

    var metadata: Logger.Metadata {
        get { state.withLock { $0.1 } }
        set { state.withLock { $0.1 = newValue } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        storage.withLock {
            $0.append(
                Record(level: event.level, message: event.message.description, metadata: merged.mapValues { "\($0)" }))
        }
    }

    /// A logger whose records this handler keeps.
    func logger(_ label: String = "test") -> Logger { Logger(label: label, factory: { _ in self }) }
}

/// The library logs as swift-log asks: to the logger the application gives it, at info or
/// below, with structured metadata.
@Suite struct LoggingTests {
    @Test func aQuarantineIsLoggedWithItsPathAndReason() throws {
        let handler = RecordingLogHandler()
        let store = try StateStore.inMemory(options: .init(logger: handler.logger()))
        try store.save(Draft(to: [], subject: "s", body: ""), for: "root/a")
        #expect(try store.quarantine("root/a", reason: "newer version"))
        let record = try #require(handler.records.first { $0.message == "state quarantined" })
        #expect(record.level == .info)
        #expect(record.metadata["statestore.path"] == "root/a")
        #expect(record.metadata["statestore.reason"] == "newer version")
        #expect(handler.records.allSatisfy { $0.level <= .info })
    }

    @Test func aRecoveryMoveIsLoggedWithBothPlaces() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x42, count: 8192)))
        let handler = RecordingLogHandler()
        let (_, recovery) = try StateStore.openOrRecover(path: path, options: .init(logger: handler.logger()))
        let moved = try #require(recovery).movedTo
        let record = try #require(handler.records.first { $0.message == "database moved aside" })
        #expect(record.level == .info)
        #expect(record.metadata["statestore.database"] == path)
        #expect(record.metadata["statestore.moved_to"] == moved)
        #expect(record.metadata["statestore.reason"]?.contains("not an SQLite database") == true)
    }

    @Test func sqlitesOwnLogReachesTheLogger() throws {
        let handler = RecordingLogHandler()
        #expect(StateStore.routeSQLiteLog(to: handler.logger("sqlite")))
        defer { StateStore.routeSQLiteLog(to: StateStore.silentLogger) }
        let folder = TemporaryFolder()
        let path = folder.file("garbage.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x42, count: 8192)))
        #expect(throws: StateStoreError.self) { try StateStore(path: path) }
        let record = try #require(handler.records.first { $0.metadata["sqlite.result_code"] == "26" })
        #expect(record.level == .debug)
        #expect(record.message.contains("not a database"))
    }

    @Test func theDefaultLoggerWritesNothing() throws {
        // No logger given: nothing reaches stderr or any handler (a library never logs uninvited).
        let store = try StateStore.inMemory()
        try store.save(Draft(to: [], subject: "s", body: ""), for: "root/a")
        #expect(try store.quarantine("root/a", reason: "test"))
        #expect(store.options.logger.handler is SwiftLogNoOpLogHandler)
    }
}

/// The monitor says how it is woken, and why it falls back to polling.
@Suite struct MonitorLoggingTests {
    @Test func aMonitorWithoutPSIFallsBackToPollingAndSaysWhy() async throws {
        // A tree with /proc/meminfo and no PSI file: no trigger can be armed.
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.file("proc"), withIntermediateDirectories: true)
        try "MemTotal: 8000000 kB\nMemFree: 6000000 kB\nMemAvailable: 7000000 kB\n"
            .write(toFile: folder.file("proc/meminfo"), atomically: true, encoding: .utf8)
        let handler = RecordingLogHandler()
        let monitor = try MemoryPressureMonitor(
            configuration: .init(root: folder.path, readsCgroup: false, usesSystemdPressureWatch: false),
            logger: handler.logger()
        )
        monitor.start()
        defer { monitor.stop() }
        for _ in 0..<500 where !handler.records.contains(where: { $0.message.hasPrefix("memory pressure:") }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let record = try #require(handler.records.first { $0.message.hasPrefix("memory pressure:") })
        #expect(record.message == "memory pressure: polling only")
        #expect(record.level == .info)
        #expect(record.metadata["statestore.watch"]?.hasPrefix("polling") == true)
        #expect(record.metadata["statestore.root"] == folder.path)
    }
}

@MainActor
@Suite struct LifecycleLoggingTests {
    @Test func aViolationIsLoggedToTheApplicationsLoggerWithItsDetails() {
        let handler = RecordingLogHandler()
        let application = Application(logger: handler.logger())
        application.violationHandler = { _ in }  // the default stops a debug build
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = NavigationController()
        let page = ViewController()
        page.restorationIdentifier = "page"
        navigation.setViewControllers([page], animated: false)
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        navigation.pushViewController(page, animated: false)  // already in the stack: misuse
        #expect(application.lifecycleViolations.count == 1)
        let record = handler.records.first { $0.message == "lifecycle violation" }
        #expect(record?.level == .info)
        #expect(record?.metadata["statestore.type"] == "NavigationController")
        #expect(record?.metadata["statestore.reason"]?.isEmpty == false)
    }

    @Test func anApplicationOnAStoreLogsToTheStoresLogger() throws {
        let handler = RecordingLogHandler()
        let store = try StateStore.inMemory(options: .init(logger: handler.logger()))
        let application = Application(store: store)
        application.logger.info("hello")
        #expect(handler.records.contains { $0.message == "hello" })
    }
}
