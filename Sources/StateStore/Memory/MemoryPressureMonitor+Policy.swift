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
        evaluate(sample, state: state, configuration: configuration, at: now, date: date, source: source, external: nil)
    }

    /// ``evaluate(_:state:configuration:at:date:source:)`` for a sample an outside warning woke
    /// the monitor for: the sample grades at least at the warning's level (its trigger, when it
    /// is the higher), so the warning raises the level only above what the monitor reads itself,
    /// and a warning at or below the current level raises nothing but a due repeat.
    static func evaluate(
        _ sample: MemorySample,
        state: State,
        configuration: Configuration,
        at now: ContinuousClock.Instant,
        date: Date,
        source: MemoryPressureEvent.Source,
        external: ExternalMemoryWarning?
    ) -> (state: State, event: MemoryPressureEvent?) {
        var state = state
        let current = state.level
        func grade(margin: Double) -> (level: MemoryPressureLevel, trigger: MemoryPressureEvent.Trigger) {
            let own = configuration.grade(sample, margin: margin)
            guard let external, external.level > own.level else { return own }
            return (external.level, external.trigger)
        }
        let raw = grade(margin: 0)

        func event(_ level: MemoryPressureLevel, _ trigger: MemoryPressureEvent.Trigger) -> MemoryPressureEvent {
            var raised = MemoryPressureEvent(
                time: date, level: level, previousLevel: current, availableBytes: sample.effectiveAvailable,
                totalBytes: sample.effectiveTotal, trigger: trigger, source: source)
            raised.externalWarning = external
            return raised
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
            let relaxed = grade(margin: configuration.hysteresisPercent).level
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
