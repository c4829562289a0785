import Foundation
import Testing

@testable import StateStore

/// An outside warning (GLib's, a portal's) fed to the monitor with `report(_:)`: the same
/// levels, deduplicated against the monitor's own readings.
@Suite("Outside memory warnings")
struct ExternalMemoryWarningTests {
    typealias Root = MonitorPolicyTests.ScriptedRoot

    final class Delivered: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [MemoryPressureEvent] = []
        func append(_ event: MemoryPressureEvent) { lock.withLock { list.append(event) } }
        var events: [MemoryPressureEvent] { lock.withLock { list } }
    }

    static func glib(_ level: MemoryPressureLevel) -> ExternalMemoryWarning {
        ExternalMemoryWarning(sender: "GMemoryMonitor", level: level, detail: "low-memory-warning")
    }

    @Test func aWarningAboveTheMonitorsOwnReadingRaisesOneEventThatNamesIt() throws {
        let root = try Root()
        let delivered = Delivered()
        root.monitor.onEvent { event in delivered.append(event) }
        #expect(try root.monitor.refresh() == nil, "60 % available reads normal")

        let event = try #require(try root.monitor.report(Self.glib(.critical)))
        #expect(event.level == .critical && event.previousLevel == .normal)
        #expect(event.trigger == .pressureStall && event.source == .manual)
        #expect(event.externalWarning == Self.glib(.critical))
        #expect(event.availableBytes == 600_000 * 1024, "the event carries the fresh sample's reading")
        #expect(root.monitor.level == .critical)
        #expect(delivered.events == [event], "the handlers hear it, as they hear the monitor's own events")
    }

    @Test func aWarningAtOrBelowTheLevelTheMonitorReadsItselfRaisesNothing() throws {
        let root = try Root()
        try root.setAvailable(percent: 10)
        let own = try #require(try root.monitor.refresh())
        #expect(own.level == .critical && own.trigger == .availableMemory && own.externalWarning == nil)
        #expect(try root.monitor.report(Self.glib(.critical)) == nil)
        #expect(try root.monitor.report(Self.glib(.warning)) == nil)
        #expect(root.monitor.level == .critical)
    }

    @Test func theSameWarningAgainIsDeduplicatedAndAHigherOneEscalates() throws {
        let root = try Root()
        #expect(try root.monitor.report(Self.glib(.warning))?.level == .warning)
        #expect(try root.monitor.report(Self.glib(.warning)) == nil)
        #expect(try root.monitor.report(Self.glib(.normal)) == nil, "a normal warning only asks for a reading")
        let escalated = try #require(try root.monitor.report(Self.glib(.critical)))
        #expect(escalated.level == .critical && escalated.previousLevel == .warning)
    }

    @Test func theMonitorsOwnReadingWinsWhenItIsHigher() throws {
        let root = try Root()
        try root.setAvailable(percent: 10)
        let event = try #require(try root.monitor.report(Self.glib(.warning)))
        #expect(event.level == .critical && event.trigger == .availableMemory)
        #expect(event.externalWarning == Self.glib(.warning), "the warning that woke the monitor is named")
    }

    /// The level a warning raised goes down as any level does: once the monitor's own samples
    /// clear the thresholds by the hysteresis margin and the level has been held long enough.
    @Test func aRaisedLevelRecoversThroughTheMonitorsHysteresis() throws {
        let root = try Root()
        let configuration = root.monitor.configuration
        let sample = try root.monitor.sample()
        let start = ContinuousClock.now
        var state = MemoryPressureMonitor.State()
        var result = MemoryPressureMonitor.evaluate(
            sample, state: state, configuration: configuration, at: start, date: Date(), source: .manual,
            external: Self.glib(.critical))
        #expect(result.event?.level == .critical)
        state = result.state
        result = MemoryPressureMonitor.evaluate(
            sample, state: state, configuration: configuration, at: start + .seconds(1), source: .poll)
        #expect(result.event == nil && result.state.level == .critical, "held for less than the minimum duration")
        state = result.state
        result = MemoryPressureMonitor.evaluate(
            sample, state: state, configuration: configuration,
            at: start + configuration.minimumLevelDuration + .seconds(1), source: .poll)
        #expect(result.event?.level == .normal && result.event?.trigger == .recovery)
        #expect(result.event?.externalWarning == nil)
        // While a warning keeps coming, it holds the level up: recovery goes no lower than it.
        result = MemoryPressureMonitor.evaluate(
            sample, state: state, configuration: configuration,
            at: start + configuration.minimumLevelDuration + .seconds(1), date: Date(), source: .manual,
            external: Self.glib(.warning))
        #expect(result.event?.level == .warning && result.event?.trigger == .recovery)
    }

    @Test func anUnreadableMeminfoUsesTheLastSampleOrThrowsWithNone() throws {
        let fresh = try Root()
        try FileManager.default.removeItem(atPath: fresh.folder.file("proc/meminfo"))
        #expect(throws: MemoryError.self) { try fresh.monitor.report(Self.glib(.critical)) }
        #expect(fresh.monitor.level == .normal)

        let sampled = try Root()
        _ = try sampled.monitor.refresh()
        try "garbage\n".write(toFile: sampled.folder.file("proc/meminfo"), atomically: true, encoding: .utf8)
        let event = try #require(try sampled.monitor.report(Self.glib(.critical)))
        #expect(event.level == .critical && event.availableBytes == 600_000 * 1024)
    }
}
