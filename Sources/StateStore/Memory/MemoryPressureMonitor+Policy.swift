import Foundation

extension MemoryPressureMonitor {
    /// The level computation, as a pure function: configuration, previous state and a sample in;
    /// new state and the event to raise (if any) out. The monitor's thread calls this for every
    /// sample; tests call it directly with scripted samples and instants.
    ///
    /// - Escalation is immediate.
    /// - Going down needs the sample to clear the thresholds by ``Configuration/hysteresisPercent``
    ///   and the level to have been held for ``Configuration/minimumLevelDuration``.
    /// - While the level holds above `.normal`, it is repeated no more often than
    ///   ``Configuration/repeatInterval``.
    public static func evaluate(
        _ sample: MemorySample,
        state: State,
        configuration: Configuration,
        at now: ContinuousClock.Instant,
        date: Date = Date(),
        source: MemoryPressureEvent.Source = .poll
    ) -> (state: State, event: MemoryPressureEvent?) {
        var state = state
        let current = state.level
        let raw = configuration.grade(sample, margin: 0)

        func event(_ level: MemoryPressureLevel, _ trigger: MemoryPressureEvent.Trigger) -> MemoryPressureEvent {
            MemoryPressureEvent(
                time: date, level: level, previousLevel: current, availableBytes: sample.effectiveAvailable,
                totalBytes: sample.effectiveTotal, trigger: trigger, source: source)
        }

        if raw.level > current {
            state.level = raw.level
            state.levelSince = now
            state.lastEvent = now
            return (state, event(raw.level, raw.trigger))
        }

        let since = state.levelSince ?? now
        if state.levelSince == nil { state.levelSince = now }
        if raw.level < current {
            let relaxed = configuration.grade(sample, margin: configuration.hysteresisPercent).level
            if relaxed < current, now - since >= configuration.minimumLevelDuration {
                state.level = relaxed
                state.levelSince = now
                state.lastEvent = now
                return (state, event(relaxed, .recovery))
            }
        }

        if current > .normal, let interval = configuration.repeatInterval, now - (state.lastEvent ?? since) >= interval
        {
            state.lastEvent = now
            return (state, event(current, .repeat))
        }
        return (state, nil)
    }
}
