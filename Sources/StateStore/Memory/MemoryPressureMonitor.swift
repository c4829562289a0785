import CoreMetrics
import Foundation
import Logging

/// Watches memory pressure on Linux and raises ``MemoryPressureEvent``s: the missing
/// memory-pressure source that libdispatch and `NSCache` have on Apple platforms.
///
/// It reads `/proc/meminfo`, the process's memory cgroup (so a container sees its own limit,
/// not the host's RAM) and pressure stall information, grades them into a
/// ``MemoryPressureLevel`` with hysteresis and rate limiting (see ``evaluate(_:state:configuration:at:date:source:)``),
/// and publishes level changes through ``events`` and ``onEvent(_:)``.
///
/// ``start()`` runs it on its own thread: it wakes on kernel PSI triggers or systemd's
/// `$MEMORY_PRESSURE_WATCH` where available, and polls adaptively (faster as headroom shrinks)
/// in any case. ``refresh(source:)`` samples once on the caller's thread; tests use it with a
/// fixture ``Configuration/root``.
///
/// ```swift
/// let monitor = try MemoryPressureMonitor(configuration: .init())
/// monitor.onEvent { event in Task { @MainActor in app.didReceiveMemoryWarning(level: event.level) } }
/// monitor.start()
/// ```
public final class MemoryPressureMonitor: Sendable {
    /// Identifies a registered ``onEvent(_:)`` handler, for ``removeHandler(_:)``.
    public struct HandlerToken: Hashable, Sendable {
        let id: Int
    }

    struct Shared: ~Copyable {
        var state = State()
        var lastSample: MemorySample?
        var handlers: [Int: @Sendable (MemoryPressureEvent) -> Void] = [:]
        var continuations: [Int: AsyncStream<MemoryPressureEvent>.Continuation] = [:]
        var nextID = 0
        var running = false
        /// Write end of the pipe that wakes the monitor thread; -1 when not running.
        var wakeFD: Int32 = -1
        /// The monitor thread, from ``start()`` until ``stop()`` joins it.
        var thread: pthread_t?
        /// The monitor thread's kernel id while it runs (`/proc/self/task/<id>`).
        var threadID: Int32?
        /// Applications observing the monitor (see ``Application/observeMemoryPressure(_:)``).
        var applicationLeases = 0
        /// Whether an application started the running thread, so the last lease stops it.
        var startedForApplications = false
        var generation = 0
        var watchDescription = "polling"
    }

    /// Where the monitor reads and how it grades.
    public let configuration: Configuration
    let shared = Lock(Shared())

    /// Where the monitor says how it is woken (PSI triggers, systemd's watch, or polling and
    /// why), at `info` with structured metadata. Default: silent.
    public let logger: Logger

    /// `statestore_memory_pressure_level`: the level after each sample, 0 (normal), 1 (warning)
    /// or 2 (critical).
    let levelGauge: Gauge

    /// Creates a monitor; nothing is read until ``start()``, ``refresh(source:)`` or ``sample()``.
    ///
    /// - Parameters:
    ///   - configuration: Where it reads and how it grades.
    ///   - logger: The application's logger; the default discards everything.
    ///   - metricsFactory: Where it records the level (see <doc:ServicesAndMetrics>); `nil` uses
    ///     `MetricsSystem.factory` as it is now.
    /// - Throws: ``MemoryError/invalidConfiguration(name:reason:)`` when a duration of the
    ///   configuration is out of range (see ``Configuration/validate()``).
    public init(
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "StateStore.Memory", factory: { _ in SwiftLogNoOpLogHandler() }),
        metricsFactory: (any MetricsFactory)? = nil
    ) throws(MemoryError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        levelGauge = Gauge(label: "statestore_memory_pressure_level", factory: metricsFactory ?? MetricsSystem.factory)
    }

    deinit {
        stop()
    }

    /// The current, hysteresis-filtered level.
    public var level: MemoryPressureLevel { shared.withLock { $0.state.level } }

    /// The level-computation state (level, when it was entered, when the last event was raised).
    public var state: State { shared.withLock { $0.state } }

    /// The most recent sample taken by ``refresh(source:)`` or the monitor thread.
    public var lastSample: MemorySample? { shared.withLock { $0.lastSample } }

    /// Whether the monitor thread is running.
    public var isRunning: Bool { shared.withLock { $0.running } }

    /// How the running monitor is woken: `"polling"`, `"psi triggers on <file>"` or `"systemd watch <path>"`.
    public var watchDescription: String { shared.withLock { $0.watchDescription } }

    /// Reads everything once and grades it without hysteresis; does not change ``level`` or
    /// raise events.
    ///
    /// - Throws: a ``MemoryError`` when `/proc/meminfo` cannot be read or parsed. A missing or
    ///   unreadable cgroup or PSI file is not an error: the sample carries `nil` for it.
    public func sample() throws(MemoryError) -> MemorySample {
        let root = configuration.root
        let meminfoPath = ProcFile.join(root, "/proc/meminfo")
        let meminfo = try MemInfo.parse(try ProcFile.read(meminfoPath), file: meminfoPath)

        var cgroup: CgroupMemory?
        if configuration.readsCgroup {
            if let path = configuration.cgroupPath {
                cgroup = try? CgroupMemory.read(directory: ProcFile.join(root, path))
            } else {
                cgroup = try? CgroupLocator.shared.memory(root: root)
            }
        }

        var pressure = cgroup?.pressure
        if pressure == nil {
            let psiPath = ProcFile.join(root, "/proc/pressure/memory")
            pressure = ProcFile.readIfPresent(psiPath).flatMap { try? PressureStall.parse($0, file: psiPath) }
        }
        var sample = MemorySample(meminfo: meminfo, cgroup: cgroup, pressure: pressure)
        sample.level = configuration.instantaneousLevel(for: sample)
        return sample
    }

    /// Samples once, runs the level computation, publishes the event it yields (if any) and
    /// returns it.
    @discardableResult
    public func refresh(source: MemoryPressureEvent.Source = .manual) throws(MemoryError) -> MemoryPressureEvent? {
        let sample = try sample()
        return record(sample, at: .now, source: source)
    }

    /// Runs the level computation on a sample taken elsewhere (or scripted), publishes the
    /// event it yields (if any) and returns it.
    @discardableResult
    public func record(
        _ sample: MemorySample, at now: ContinuousClock.Instant = .now, date: Date = Date(),
        source: MemoryPressureEvent.Source = .manual
    ) -> MemoryPressureEvent? {
        record(sample, at: now, date: date, source: source, aheadOfPoll: nil)
    }

    /// Feeds a warning from outside the monitor's own readings (GLib's `GMemoryMonitor`, a
    /// desktop portal, a supervisor) into the same levels: samples now, grades the sample at
    /// least at the warning's level, publishes the event that yields (if any) and returns it.
    ///
    /// The warning goes through the same hysteresis and rate limits as the monitor's own
    /// samples, so it is deduplicated against them: a warning at or below the level the monitor
    /// already holds raises no event (only a repeat, when one is due), and a warning above it
    /// raises one event, with the warning's level and trigger and
    /// ``MemoryPressureEvent/externalWarning`` set. The level it raised goes down as any level
    /// does, once the monitor's own samples clear the thresholds and the level has been held for
    /// ``Configuration/minimumLevelDuration``. The event's source is ``MemoryPressureEvent/Source/manual``.
    ///
    /// Safe to call from any thread, while the monitor thread runs or not.
    ///
    /// - Throws: a ``MemoryError`` only when `/proc/meminfo` cannot be read and the monitor has
    ///   no earlier sample: the warning is then graded against the most recent sample instead.
    @discardableResult
    public func report(_ warning: ExternalMemoryWarning) throws(MemoryError) -> MemoryPressureEvent? {
        let sample: MemorySample
        do {
            sample = try self.sample()
        } catch {
            guard let last = lastSample else { throw error }
            sample = last
        }
        return record(sample, at: .now, date: Date(), source: .manual, aheadOfPoll: nil, external: warning)
    }

    /// ``record(_:at:date:source:)`` for the monitor thread, which knows when its next poll was
    /// due, and for ``report(_:)``.
    @discardableResult
    func record(
        _ sample: MemorySample, at now: ContinuousClock.Instant, date: Date,
        source: MemoryPressureEvent.Source, aheadOfPoll: Duration?, external: ExternalMemoryWarning? = nil
    ) -> MemoryPressureEvent? {
        let (event, level, handlers, continuations) = shared.withLock { shared in
            var result = Self.evaluate(
                sample, state: shared.state, configuration: configuration, at: now, date: date, source: source,
                external: external)
            result.event?.aheadOfPoll = aheadOfPoll
            shared.state = result.state
            shared.lastSample = sample
            return (result.event, result.state.level, Array(shared.handlers.values), Array(shared.continuations.values))
        }
        levelGauge.record(level.rawValue)
        if let event {
            for handler in handlers { handler(event) }
            for continuation in continuations { continuation.yield(event) }
        }
        return event
    }

    /// A new stream of events, from now on. Each access makes a new stream; it keeps the newest
    /// 64 events if the consumer falls behind, and unregisters itself when cancelled.
    public var events: AsyncStream<MemoryPressureEvent> {
        let (stream, continuation) = AsyncStream<MemoryPressureEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = shared.withLock { shared in
            shared.nextID += 1
            shared.continuations[shared.nextID] = continuation
            return shared.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.shared.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Calls `handler` synchronously on the monitor's thread (or the thread calling
    /// ``refresh(source:)``) for every event. Keep it short: hop to where the work belongs.
    @discardableResult
    public func onEvent(_ handler: @escaping @Sendable (MemoryPressureEvent) -> Void) -> HandlerToken {
        shared.withLock { shared in
            shared.nextID += 1
            shared.handlers[shared.nextID] = handler
            return HandlerToken(id: shared.nextID)
        }
    }

    /// Unregisters a handler added with ``onEvent(_:)``.
    public func removeHandler(_ token: HandlerToken) {
        _ = shared.withLock { $0.handlers.removeValue(forKey: token.id) }
    }
}
