extension MemoryPressureMonitor.Configuration {
    /// The level a sample indicates on its own, without hysteresis.
    public func instantaneousLevel(for sample: MemorySample) -> MemoryPressureLevel {
        grade(sample, margin: 0).level
    }

    /// Grades a sample against the thresholds moved by `margin` percentage points towards
    /// "more pressure" (a positive margin makes leaving a level harder). Returns the level and
    /// the signal that decided it.
    func grade(
        _ sample: MemorySample, margin: Double
    ) -> (level: MemoryPressureLevel, trigger: MemoryPressureEvent.Trigger) {
        let percent = sample.availablePercent
        var byAvailable = MemoryPressureLevel.normal
        if percent <= warningAvailablePercent + margin { byAvailable = .warning }
        if percent <= criticalAvailablePercent + margin { byAvailable = .critical }

        var byStall = MemoryPressureLevel.normal
        if let threshold = warningPressureStallPercent, let some = sample.pressure?.some,
            some.avg10 >= threshold - margin
        {
            byStall = .warning
        }
        if let threshold = criticalPressureStallPercent, let full = sample.pressure?.full,
            full.avg10 >= threshold - margin
        {
            byStall = .critical
        }
        if let fired = sample.stallTrigger, fired > byStall { byStall = fired }
        return byStall > byAvailable ? (byStall, .pressureStall) : (byAvailable, .availableMemory)
    }

    /// How long to wait before the next poll: ``maximumPollingInterval`` with headroom of twice
    /// the warning threshold or more, ``minimumPollingInterval`` at the critical threshold,
    /// linear in between; the minimum when there is no sample yet.
    public func pollingInterval(for sample: MemorySample?) -> Duration {
        guard let sample else { return minimumPollingInterval }
        let low = criticalAvailablePercent
        let high = max(warningAvailablePercent * 2, low + 1)
        let fraction = min(max((sample.availablePercent - low) / (high - low), 0), 1)
        var interval = minimumPollingInterval + (maximumPollingInterval - minimumPollingInterval) * fraction
        if sample.level == .critical { interval = minimumPollingInterval }
        return interval
    }
}
