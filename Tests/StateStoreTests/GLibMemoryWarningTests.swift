import Foundation
import Testing

/// GLib's `GMemoryMonitor` feeding the memory monitor (`GLibMemoryWarnings`), end to end: a D-Bus
/// daemon of the test's own stands in for the system bus, a process owns the low-memory-monitor
/// service's name on it and emits its `LowMemoryWarning` signal, and GLib's real D-Bus memory
/// monitor, in another process, hears it and hands it to a `MemoryPressureMonitor`.
@Suite("GLib's memory warnings", .serialized, .hangGuard(minutes: 10))
struct GLibMemoryWarningTests {
    let folder = TemporaryFolder()

    static let daemonPath = LowMemoryMonitorStandIn.daemonPath

    func root(availablePercent: Int) throws -> String {
        let root = folder.file("root-\(availablePercent)")
        try FileManager.default.createDirectory(atPath: root + "/proc", withIntermediateDirectories: true)
        let total = 8_000_000
        try
            "MemTotal: \(total) kB\nMemFree: \(total * availablePercent / 200) kB\nMemAvailable: \(total * availablePercent / 100) kB\n"
            .write(toFile: root + "/proc/meminfo", atomically: true, encoding: .utf8)
        return root
    }

    /// The service's stand-in, and a watcher whose monitor reads `availablePercent`.
    func start(availablePercent: Int) throws -> (service: LowMemoryMonitorStandIn, watcher: LineProgram) {
        let service = try LowMemoryMonitorStandIn(folder: folder)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = service.address
        let watcher = try LineProgram(
            try builtProduct("statestore-gtk-worker"), ["glib-warnings", try root(availablePercent: availablePercent)],
            environment: environment, output: folder.file("watcher.out"))
        #expect(watcher.waitForLine { $0 == "watching" } != nil, "the watcher never started: \(watcher.lines)")
        return (service, watcher)
    }

    /// Sends `level` until GLib delivers one (its proxy subscribes to the signal asynchronously);
    /// returns the index of the watcher's line for it.
    func firstDelivery(of level: Int, from service: LowMemoryMonitorStandIn, to watcher: LineProgram) -> Int? {
        service.sendUntilDelivered(level) {
            watcher.waitForLine(timeout: .milliseconds(250), { $0.hasPrefix("glib ") })
        }
    }

    @Test(.enabled(if: daemonPath != nil, "needs dbus-daemon (scripts/bootstrap installs it)"))
    func glibsWarningsRaiseTheMonitorsLevelOnceEach() throws {
        let (service, watcher) = try start(availablePercent: 60)
        let first = try #require(
            firstDelivery(of: 50, from: service, to: watcher), "GLib delivered nothing: \(watcher.lines)")
        #expect(
            watcher.lines[first]
                == "glib 50 level=warning raised=warning previous=normal trigger=pressureStall source=manual external=GMemoryMonitor",
            "\(watcher.lines)")
        // Another warning of the same level, or a lower one, raises nothing.
        service.send(100)
        let medium = try #require(watcher.waitForLine(from: first + 1) { $0.hasPrefix("glib 100") })
        #expect(watcher.lines[medium] == "glib 100 level=warning raised=none")
        service.send(255)
        let critical = try #require(watcher.waitForLine(from: medium + 1) { $0.hasPrefix("glib 255") })
        #expect(
            watcher.lines[critical]
                == "glib 255 level=critical raised=critical previous=warning trigger=pressureStall source=manual external=GMemoryMonitor"
        )
        service.send(255)
        let again = try #require(watcher.waitForLine(from: critical + 1) { $0.hasPrefix("glib 255") })
        #expect(watcher.lines[again] == "glib 255 level=critical raised=none")
        // A level GLib does not define (under 50) asks only for a reading: nothing is raised.
        service.send(0)
        let none = try #require(watcher.waitForLine(from: again + 1) { $0.hasPrefix("glib 0") })
        #expect(watcher.lines[none] == "glib 0 level=normal raised=none")
        // The monitor's handlers heard exactly the two events.
        #expect(watcher.lines.filter { $0.hasPrefix("event ") }.count == 2, "\(watcher.lines)")
    }

    @Test(.enabled(if: daemonPath != nil, "needs dbus-daemon (scripts/bootstrap installs it)"))
    func glibsWarningsAreDeduplicatedAgainstTheMonitorsOwnReading() throws {
        let (service, watcher) = try start(availablePercent: 5)
        #expect(watcher.lines.first == "event critical previous=normal trigger=availableMemory source=manual")
        let first = try #require(
            firstDelivery(of: 255, from: service, to: watcher), "GLib delivered nothing: \(watcher.lines)")
        #expect(watcher.lines[first] == "glib 255 level=critical raised=none")
        service.send(50)
        let low = try #require(watcher.waitForLine(from: first + 1) { $0.hasPrefix("glib 50") })
        #expect(watcher.lines[low] == "glib 50 level=warning raised=none")
        #expect(watcher.lines.filter { $0.hasPrefix("event ") }.count == 1, "\(watcher.lines)")
    }
}

/// A program whose stdin the test writes and whose output it reads as it comes.
final class LineProgram {
    let program: SpawnedProgram
    let output: String
    /// The test's end of the socket pair the program reads as its stdin: a socket, so a line
    /// sent to a program that has ended fails with EPIPE (`MSG_NOSIGNAL`) instead of a SIGPIPE.
    private let input: Int32

    init(_ executable: String, _ arguments: [String], environment: [String: String], output: String) throws {
        self.output = output
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw RawSQLFailure(message: "socketpair failed: \(String(cString: strerror(errno)))")
        }
        input = pair[0]
        defer { close(pair[1]) }
        do {
            program = try SpawnedProgram(
                executable, arguments, environment: environment, output: output, input: pair[1])
        } catch {
            close(pair[0])
            throw error
        }
    }

    deinit {
        close(input)
        if program.isRunning { kill(program.pid, SIGKILL) }
        program.wait()
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    var lines: [String] {
        ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits up to `timeout` for a line `condition` accepts, from line `index` on; returns its index.
    func waitForLine(
        from index: Int = 0, timeout: Duration = .seconds(20), _ condition: (String) -> Bool
    ) -> Int? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let lines = self.lines
            if index < lines.count, let found = lines[index...].firstIndex(where: condition) { return found }
            usleep(20_000)
        }
        return nil
    }
}

/// A stand-in for the low-memory-monitor service: a session-policy D-Bus daemon on a socket in
/// the test's folder, standing in for the system bus (a program gets its ``address`` as
/// `$DBUS_SYSTEM_BUS_ADDRESS`), and a process that owns `org.freedesktop.LowMemoryMonitor` on it
/// and emits its `LowMemoryWarning` signal at each ``send(_:)``.
final class LowMemoryMonitorStandIn {
    static let daemonPath = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"].first { (path: String) in
        access(path, X_OK) == 0
    }

    let bus: LineProgram
    let address: String
    let service: LineProgram

    init(folder: TemporaryFolder) throws {
        let daemon = try #require(Self.daemonPath)
        bus = try LineProgram(
            daemon, ["--session", "--nofork", "--print-address=1", "--address=unix:path=\(folder.file("bus"))"],
            environment: ProcessInfo.processInfo.environment, output: folder.file("bus.out"))
        let line = try #require(bus.waitForLine { $0.hasPrefix("unix:") }, "the bus never printed its address")
        address = bus.lines[line]
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        service = try LineProgram(
            try builtProduct("statestore-gtk-worker"), ["low-memory-monitor"], environment: environment,
            output: folder.file("service.out"))
        try #require(
            service.waitForLine { $0 == "owned" } != nil, "the stand-in never owned the name: \(service.lines)")
    }

    /// Emits `LowMemoryWarning` with GLib's `level` (50, 100, 255).
    func send(_ level: Int) {
        service.send("\(level)")
    }

    /// Sends `level` until `delivered` finds that a listener got one (GLib's proxy subscribes to
    /// the signal asynchronously, so a warning sent before that is lost); up to 20 s.
    func sendUntilDelivered<Found>(_ level: Int, _ delivered: () -> Found?) -> Found? {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            send(level)
            if let found = delivered() { return found }
        }
        return nil
    }
}
