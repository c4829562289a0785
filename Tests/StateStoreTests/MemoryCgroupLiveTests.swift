import Foundation
import Glibc
import Testing

@testable import StateStore

/// Runs against the real kernel: creates a child memory cgroup (v1) with a 128 MiB limit, moves a
/// helper process (not the test runner) into it, fills it step by step, and checks that a
/// monitor pointed at that cgroup reports warning, then critical — from the cgroup, not the host.
@Suite("Memory cgroup (live)", .serialized)
struct MemoryCgroupLiveTests {
    static let limit: UInt64 = 128 << 20

    /// The runner's own v1 memory cgroup directory, when it is writable.
    static let parentCgroup: String? = {
        guard let cgroup = try? CgroupMemory.discover(), cgroup.version == .v1,
            access(cgroup.path, W_OK) == 0
        else { return nil }
        return cgroup.path
    }()

    static let python: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first { access($0, X_OK) == 0 }
    }()

    static var available: Bool { parentCgroup != nil && python != nil }

    /// The helper: each line on stdin is a number of MiB to allocate (and touch); it answers `ok`.
    static let allocator = """
        import sys
        blocks = []
        for line in sys.stdin:
            line = line.strip()
            if line == "q":
                break
            blocks.append(bytearray(b"\\x01") * (int(line) << 20))
            sys.stdout.write("ok\\n")
            sys.stdout.flush()
        """

    // The limit guards against a hang, not a speed: with the whole suite and other builds on two
    // cores, the 30 allocation steps (each a python write, a read and a monitor refresh) took
    // over 60 s, though a few seconds alone. Every time limit in the suite is such a guard, and
    // 10 minutes for that reason: the suite's tests share two threads, and a test waiting for
    // one behind the long ones (a soak, the power cuts) has its time counted (on a slow machine,
    // a fixture parsing test took 86 s and eight process tests passed 2 minutes that way).
    @Test(.enabled(if: available, "needs a writable cgroup v1 memory controller and python3"), .hangGuard(minutes: 10))
    func monitorReportsWarningThenCriticalFromTheCgroup() throws {
        let parent = try #require(Self.parentCgroup)
        let directory = parent + "/statestore-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let child = Process()
        defer {
            if child.isRunning {
                child.terminate()
                child.waitUntilExit()
            }
            // v1 refuses to remove a cgroup that still has tasks; the child is gone now.
            for _ in 0..<50 where rmdir(directory) != 0 { usleep(20_000) }
            #expect(!FileManager.default.fileExists(atPath: directory), "left \(directory) behind")
        }
        try "\(Self.limit)\n".write(toFile: directory + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)

        child.executableURL = URL(fileURLWithPath: try #require(Self.python))
        child.arguments = ["-u", "-c", Self.allocator]
        let input = Pipe()
        let output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        try child.run()
        try "\(child.processIdentifier)\n".write(
            toFile: directory + "/cgroup.procs", atomically: false, encoding: .utf8)
        let procs = try String(contentsOfFile: directory + "/cgroup.procs", encoding: .utf8)
        #expect(procs.split(separator: "\n").contains("\(child.processIdentifier)"))

        let monitor = try MemoryPressureMonitor(
            configuration: .init(
                cgroupPath: directory,
                warningPressureStallPercent: nil,  // grade by the cgroup's headroom only:
                criticalPressureStallPercent: nil,  // host-wide PSI is not what this test is about
                repeatInterval: nil,  // a slow step under load must not add a repeat
                usesPressureStallTriggers: false,
                usesSystemdPressureWatch: false
            ))
        let events = Lock<[MemoryPressureEvent]>([])
        monitor.onEvent { event in events.withLock { $0.append(event) } }

        let first = try monitor.sample()
        #expect(first.cgroup?.path == directory)
        #expect(first.effectiveTotal == Self.limit)
        #expect(first.level == .normal)

        var allocated = 0
        var levels: [MemoryPressureLevel] = []
        while monitor.level < .critical && allocated < 120 {
            input.fileHandleForWriting.write(Data("4\n".utf8))
            try readLine(output.fileHandleForReading)
            allocated += 4
            try monitor.refresh()
            let sample = try #require(monitor.lastSample)
            levels.append(sample.level)
            #expect(sample.isCgroupBound || sample.level == .normal)
            // The host is nowhere near pressure: whatever the monitor says comes from the cgroup.
            #expect(sample.meminfo.available > 4 * Self.limit)
        }
        input.fileHandleForWriting.write(Data("q\n".utf8))

        let seen = events.withLock { $0 }
        #expect(
            seen.map(\.level) == [.warning, .critical], "levels per 4 MiB step: \(levels), \(allocated) MiB allocated")
        #expect(seen.first?.previousLevel == .normal)
        #expect(seen.allSatisfy { $0.totalBytes == Self.limit && $0.trigger == .availableMemory })
        #expect(seen.last.map { $0.availableBytes <= Self.limit * 15 / 100 } == true)
        #expect(allocated <= 120)
    }

    private func readLine(_ handle: FileHandle) throws {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { throw CocoaError(.fileReadUnknown) }  // the helper died (OOM?)
            line.append(chunk)
        }
    }
}

@Suite("PSI triggers (live)")
struct PressureStallTriggerLiveTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/pressure/memory"), "needs a kernel with PSI"))
    func triggerRegistersOnProcPressure() throws {
        guard let watch = PressureWatch.trigger(file: "/proc/pressure/memory", "some 200000 2000000") else {
            // Kernels may refuse triggers (EPERM without CAP_SYS_RESOURCE for sub-2 s windows,
            // EOPNOTSUPP with psi=0); the monitor then polls. Nothing more to check here.
            return
        }
        close(watch.fd)
        #expect(watch.events == Int16(POLLPRI))
    }

    @Test func fixtureFilesNeverGetTriggers() throws {
        let folder = TemporaryFolder()
        try MemoryFixtures.write(
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", to: "/proc/pressure/memory", in: folder.path)
        #expect(PressureWatch.trigger(file: folder.path + "/proc/pressure/memory", "some 200000 2000000") == nil)
        let text = try String(contentsOfFile: folder.path + "/proc/pressure/memory", encoding: .utf8)
        #expect(text == "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/pressure/memory"), "needs a kernel with PSI"))
    func monitorOnTheRealSystemStartsAndStops() async throws {
        let monitor = try MemoryPressureMonitor(configuration: .init(usesSystemdPressureWatch: false))
        monitor.start()
        for _ in 0..<3000 where monitor.lastSample == nil { try await Task.sleep(for: .milliseconds(10)) }
        let sample = try #require(monitor.lastSample)
        #expect(sample.effectiveTotal > 0)
        #expect(sample.pressure != nil)
        #expect(!monitor.watchDescription.isEmpty)
        monitor.stop()
        #expect(!monitor.isRunning)
    }
}

@Suite("systemd pressure watch")
struct SystemdPressureWatchTests {
    @Test func fifoWatchWakesOnInput() throws {
        let folder = TemporaryFolder()
        let path = folder.file("pressure.fifo")
        #expect(mkfifo(path, 0o600) == 0)
        let watch = try #require(PressureWatch.systemd(path: path, write: nil))
        defer { close(watch.fd) }
        #expect(watch.source == .systemdWatch)
        let writer = open(path, O_WRONLY | O_NONBLOCK)
        defer { close(writer) }
        #expect(write(writer, "x", 1) == 1)
        var descriptor = pollfd(fd: watch.fd, events: watch.events, revents: 0)
        #expect(poll(&descriptor, 1, 1000) == 1)
        watch.drain()
        descriptor.revents = 0
        #expect(poll(&descriptor, 1, 0) == 0)
    }

    @Test func plainFileIsNotAWatch() throws {
        let folder = TemporaryFolder()
        try "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n".write(
            toFile: folder.file("memory.pressure"), atomically: true, encoding: .utf8)
        #expect(
            PressureWatch.systemd(path: folder.file("memory.pressure"), write: Array("some 200000 2000000".utf8)) == nil
        )
        #expect(PressureWatch.systemd(path: folder.file("missing"), write: nil) == nil)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/pressure/memory"), "needs a kernel with PSI"))
    func pressureFileGetsTheTriggerWritten() throws {
        // What systemd puts in $MEMORY_PRESSURE_WRITE by default, base64-decoded.
        if let watch = PressureWatch.systemd(path: "/proc/pressure/memory", write: Array("some 200000 2000000".utf8)) {
            close(watch.fd)
            #expect(watch.events == Int16(POLLPRI))
        }
    }

    /// The running monitor's first wake-up is a real one (it used to be dropped as "possibly
    /// spurious" and counted as a poll), and a watch that fires raises the level by itself:
    /// the host has plenty of memory (a poll grades normal) and polls are a minute apart, so
    /// only the wake-up can raise it, and the event says it came from the watch.
    @Test(.hangGuard(minutes: 10))
    func firstWatchWakeUpRaisesTheLevelBeforeAnyPoll() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("pressure.fifo")
        #expect(mkfifo(path, 0o600) == 0)
        var configuration = MemoryPressureMonitor.Configuration(
            minimumPollingInterval: .seconds(60), maximumPollingInterval: .seconds(60))
        // The monitor's own environment, not the process's: other tests' child processes must not see it.
        configuration.environment = ["MEMORY_PRESSURE_WATCH": path]
        let monitor = try MemoryPressureMonitor(configuration: configuration)
        let events = Lock<[MemoryPressureEvent]>([])
        monitor.onEvent { event in events.withLock { $0.append(event) } }
        monitor.start()
        defer { monitor.stop() }
        for _ in 0..<3000 where !monitor.watchDescription.hasPrefix("systemd watch") {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(monitor.watchDescription == "systemd watch \(path)")
        for _ in 0..<3000 where monitor.lastSample == nil { try await Task.sleep(for: .milliseconds(10)) }
        try #require(monitor.level == .normal, "the host is under memory pressure already; nothing to raise")
        #expect(events.withLock { $0.isEmpty })

        let writer = open(path, O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0)
        defer { close(writer) }
        #expect(write(writer, "x", 1) == 1)
        // Other tests may hold the test runner's threads for a while: wait long enough.
        for _ in 0..<3000 where events.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        let event = try #require(events.withLock { $0.first }, "the wake-up raised nothing")
        #expect(event.source == .systemdWatch)
        #expect(event.level == .warning)
        #expect(event.previousLevel == .normal)
        #expect(event.trigger == .pressureStall)
        let ahead = try #require(event.aheadOfPoll)
        // At the normal level an armed watch stretches the 60 s polling interval fivefold.
        #expect(ahead > .zero && ahead <= .seconds(60 * 5), "the next poll was \(ahead) away")
    }

    @Test func releasingTheMonitorStopsItsThread() async throws {
        let folder = TemporaryFolder()
        try MemoryFixtures.write(
            MemoryFixtures.meminfo(totalKB: 1000, availableKB: 900), to: "/proc/meminfo", in: folder.path)
        weak var released: MemoryPressureMonitor?
        do {
            let monitor = try MemoryPressureMonitor(
                configuration: .init(
                    root: folder.path, minimumPollingInterval: .milliseconds(10),
                    maximumPollingInterval: .milliseconds(20)))
            monitor.start()
            released = monitor
            try await Task.sleep(for: .milliseconds(50))
        }
        for _ in 0..<50 where released != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil)
    }
}
