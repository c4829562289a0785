import Foundation
import Testing

@testable import StateStore

@Suite("Memory pressure policy")
struct MonitorPolicyTests {
    static let totalKB: UInt64 = 1_000_000

    /// A fixture root whose `/proc/meminfo` the test rewrites between steps.
    final class ScriptedRoot: Sendable {
        let folder = TemporaryFolder("scripted")
        let monitor: MemoryPressureMonitor

        init(configuration: MemoryPressureMonitor.Configuration = .init()) throws {
            var configuration = configuration
            configuration.root = folder.path
            configuration.readsCgroup = false
            monitor = try MemoryPressureMonitor(configuration: configuration)
            try setAvailable(percent: 60)
            try setPressure(some: 0, full: 0)
        }

        func setAvailable(percent: Double) throws {
            let available = UInt64(Double(MonitorPolicyTests.totalKB) * percent / 100)
            try MemoryFixtures.write(
                MemoryFixtures.meminfo(totalKB: MonitorPolicyTests.totalKB, availableKB: available),
                to: "/proc/meminfo", in: folder.path)
        }

        func setPressure(some: Double, full: Double) throws {
            try MemoryFixtures.write(
                "some avg10=\(some) avg60=0.00 avg300=0.00 total=1\nfull avg10=\(full) avg60=0.00 avg300=0.00 total=1\n",
                to: "/proc/pressure/memory", in: folder.path)
        }
    }

    @Test func scriptedSequenceNormalWarningCriticalNormal() throws {
        let script = try ScriptedRoot()
        let configuration = script.monitor.configuration
        let start = ContinuousClock.now
        var state = MemoryPressureMonitor.State()
        // (seconds, available %, expected level after, expected event: (level, previous, trigger)?)
        typealias Step = (
            Int, Double, MemoryPressureLevel, (MemoryPressureLevel, MemoryPressureLevel, MemoryPressureEvent.Trigger)?
        )
        let steps: [Step] = [
            (0, 50, .normal, nil),
            (1, 24, .warning, (.warning, .normal, .availableMemory)),  // ≤ 25 %: warning at once
            (2, 20, .warning, nil),  // same level, repeat not due
            (3, 14, .critical, (.critical, .warning, .availableMemory)),  // ≤ 15 %: escalation is immediate
            (4, 22, .critical, nil),  // better, but held < 5 s
            (9, 22, .warning, (.warning, .critical, .recovery)),  // held 6 s and 22 > 15 + 5
            (10, 28, .warning, nil),  // 28 ≤ 25 + 5: hysteresis keeps warning
            (12, 28, .warning, nil),  // no repeat within 10 s
            (19, 28, .warning, (.warning, .warning, .repeat)),  // 10 s after the last event
            (20, 29, .warning, nil),
            (25, 40, .normal, (.normal, .warning, .recovery)),  // 40 > 30: back to normal
            (26, 40, .normal, nil),
            (60, 40, .normal, nil),  // normal never repeats
        ]
        for (seconds, percent, expectedLevel, expectedEvent) in steps {
            try script.setAvailable(percent: percent)
            let sample = try script.monitor.sample()
            let result = MemoryPressureMonitor.evaluate(
                sample, state: state, configuration: configuration, at: start + .seconds(seconds))
            state = result.state
            #expect(state.level == expectedLevel, "t=\(seconds)s at \(percent)%")
            if let (level, previous, trigger) = expectedEvent {
                #expect(result.event?.level == level, "t=\(seconds)s")
                #expect(result.event?.previousLevel == previous, "t=\(seconds)s")
                #expect(result.event?.trigger == trigger, "t=\(seconds)s")
                #expect(result.event?.availableBytes == sample.effectiveAvailable)
            } else {
                #expect(result.event == nil, "t=\(seconds)s: unexpected \(String(describing: result.event))")
            }
        }
    }

    @Test func instantaneousLevelsAtTheThresholds() throws {
        let script = try ScriptedRoot()
        for (percent, level) in [
            (100.0, MemoryPressureLevel.normal), (25.1, .normal), (25, .warning), (15.1, .warning), (15, .critical),
            (0, .critical),
        ] {
            try script.setAvailable(percent: percent)
            #expect(try script.monitor.sample().level == level, "\(percent)%")
        }
    }

    @Test func oscillationAroundAThresholdDoesNotStorm() throws {
        let script = try ScriptedRoot()
        let configuration = script.monitor.configuration
        let start = ContinuousClock.now
        try script.setAvailable(percent: 24)
        let low = try script.monitor.sample()
        try script.setAvailable(percent: 26)
        let high = try script.monitor.sample()
        var state = MemoryPressureMonitor.State()
        var events: [(Duration, MemoryPressureEvent)] = []
        // Every 100 ms for 60 s the reading flips across the warning threshold.
        for tick in 0..<600 {
            let now = start + .milliseconds(tick * 100)
            let result = MemoryPressureMonitor.evaluate(
                tick.isMultiple(of: 2) ? low : high, state: state, configuration: configuration, at: now)
            state = result.state
            if let event = result.event { events.append((now - start, event)) }
        }
        #expect(events.first?.1.level == .warning)
        #expect(events.allSatisfy { $0.1.level == .warning })
        #expect(events.count == 6 || events.count == 7, "\(events.count) events")
        for (previous, next) in zip(events, events.dropFirst()) {
            #expect(next.0 - previous.0 >= .seconds(10))
        }
    }

    @Test func pressureStallRaisesTheLevel() throws {
        let script = try ScriptedRoot()
        let configuration = script.monitor.configuration
        let start = ContinuousClock.now
        var state = MemoryPressureMonitor.State()

        try script.setPressure(some: 12, full: 1)
        var result = MemoryPressureMonitor.evaluate(
            try script.monitor.sample(), state: state, configuration: configuration, at: start)
        state = result.state
        #expect(result.event?.level == .warning)
        #expect(result.event?.trigger == .pressureStall)

        try script.setPressure(some: 60, full: 35)
        result = MemoryPressureMonitor.evaluate(
            try script.monitor.sample(), state: state, configuration: configuration, at: start + .seconds(1))
        state = result.state
        #expect(result.event?.level == .critical)
        #expect(result.event?.trigger == .pressureStall)

        // Full stalls at 27 % are under the threshold but inside the hysteresis band: stay critical.
        try script.setPressure(some: 20, full: 27)
        result = MemoryPressureMonitor.evaluate(
            try script.monitor.sample(), state: state, configuration: configuration, at: start + .seconds(30))
        #expect(result.state.level == .critical)
        #expect(result.event?.trigger == .repeat)
    }

    @Test func missingPressureFileIsNotAnError() throws {
        let script = try ScriptedRoot()
        try FileManager.default.removeItem(atPath: script.folder.path + "/proc/pressure/memory")
        let sample = try script.monitor.sample()
        #expect(sample.pressure == nil)
        #expect(sample.level == .normal)
    }

    @Test func unreadableMeminfoIsAnError() throws {
        let script = try ScriptedRoot()
        try FileManager.default.removeItem(atPath: script.folder.path + "/proc/meminfo")
        #expect(throws: MemoryError.self) { try script.monitor.sample() }
        try MemoryFixtures.write("MemTotal: oops kB\n", to: "/proc/meminfo", in: script.folder.path)
        #expect(throws: MemoryError.self) { try script.monitor.refresh() }
    }

    /// A PSI trigger that fired is evidence of stall by itself, whatever the lagging `avg10`
    /// says: `some` raises to warning, `full` to critical, and the event says so.
    @Test func firedTriggerRaisesTheLevelByItself() throws {
        let configuration = MemoryPressureMonitor.Configuration()
        let calm = PressureStall(
            some: .init(avg10: 0.5, avg60: 0, avg300: 0, total: 1), full: .init(avg10: 0, avg60: 0, avg300: 0, total: 0)
        )
        var sample = MemorySample(meminfo: MemInfo(total: 1000, available: 900), pressure: calm)
        #expect(configuration.instantaneousLevel(for: sample) == .normal)

        sample.stallTrigger = .warning
        #expect(configuration.instantaneousLevel(for: sample) == .warning)
        let start = ContinuousClock.now
        let (state, event) = MemoryPressureMonitor.evaluate(
            sample, state: .init(), configuration: configuration, at: start,
            source: .pressureStallTrigger)
        #expect(event?.level == .warning)
        #expect(event?.trigger == .pressureStall)
        #expect(event?.source == .pressureStallTrigger)

        sample.stallTrigger = .critical
        let (_, critical) = MemoryPressureMonitor.evaluate(
            sample, state: state, configuration: configuration,
            at: start + .milliseconds(300), source: .pressureStallTrigger)
        #expect(critical?.level == .critical)
        #expect(critical?.previousLevel == .warning)

        // The next timed poll has no trigger behind it: hysteresis holds the level.
        sample.stallTrigger = nil
        let (held, none) = MemoryPressureMonitor.evaluate(
            sample, state: state, configuration: configuration,
            at: start + .seconds(1), source: .poll)
        #expect(none == nil)
        #expect(held.level == .warning)
    }

    @Test func pollingGetsFasterAsHeadroomShrinks() throws {
        let configuration = MemoryPressureMonitor.Configuration()
        func interval(_ percent: Double) -> Duration {
            var sample = MemorySample(meminfo: MemInfo(total: 1000, available: UInt64(percent * 10)))
            sample.level = configuration.instantaneousLevel(for: sample)
            return configuration.pollingInterval(for: sample)
        }
        #expect(interval(100) == .seconds(1))
        #expect(interval(50) == .seconds(1))
        #expect(interval(15) == .milliseconds(100))
        #expect(interval(5) == .milliseconds(100))
        #expect(interval(32.5) == .milliseconds(550))
        #expect(interval(40) < interval(60) || interval(60) == .seconds(1))
        #expect(configuration.pollingInterval(for: nil) == .milliseconds(100))
    }

    @Test func recordPublishesToHandlersAndStreams() async throws {
        let script = try ScriptedRoot()
        let seen = Lock<[MemoryPressureLevel]>([])
        let token = script.monitor.onEvent { event in seen.withLock { $0.append(event.level) } }
        let stream = script.monitor.events
        try script.setAvailable(percent: 10)
        let event = try script.monitor.refresh()
        #expect(event?.level == .critical)
        #expect(event?.source == .manual)
        #expect(script.monitor.level == .critical)
        #expect(seen.withLock { $0 } == [.critical])
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.level == .critical)
        script.monitor.removeHandler(token)
        let later = try script.monitor.record(script.monitor.sample(), at: .now + .seconds(60))
        #expect(later?.trigger == .repeat)
        #expect(seen.withLock { $0 } == [.critical])
    }

    @Test(.hangGuard(minutes: 10))
    func threadDeliversEventsAndStops() async throws {
        let script = try ScriptedRoot(
            configuration: .init(minimumPollingInterval: .milliseconds(20), maximumPollingInterval: .milliseconds(50)))
        let stream = script.monitor.events
        script.monitor.start()
        #expect(script.monitor.isRunning)
        // The thread's first sample: up to 30 s, as other tests may hold the machine's cores.
        for _ in 0..<3000 where script.monitor.lastSample == nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(script.monitor.lastSample != nil)
        #expect(script.monitor.watchDescription.hasPrefix("polling"))  // a fixture file is never given a PSI trigger
        try script.setAvailable(percent: 20)
        var iterator = stream.makeAsyncIterator()
        let event = await iterator.next()
        #expect(event?.level == .warning)
        #expect(event?.source == .poll)
        script.monitor.stop()
        #expect(!script.monitor.isRunning)
    }
}
