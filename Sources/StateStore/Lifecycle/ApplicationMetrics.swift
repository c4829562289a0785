import CoreMetrics

/// What an ``Application`` records of the memory warnings it handles (see <doc:ServicesAndMetrics>).
struct ApplicationMetrics {
    /// `statestore_memory_warnings_total{level="warning"|"critical"}`: warnings handled.
    let warnings: Counter
    let criticalWarnings: Counter
    /// `statestore_memory_warning_delay`: from the monitor's sample to the main actor's handling.
    let delay: Timer
    /// `statestore_cache_purges_total`: caches a warning released cost from (each controller's
    /// and the shared ones, each counted once).
    let cachePurges: Counter
    /// `statestore_cache_released_cost_total`: the cost the purges released (bytes, for caches
    /// that cost their entries by size).
    let cacheCostReleased: Counter
    /// `statestore_memory_warning_rss_released_bytes`: resident memory given back by one warning.
    let rssReleased: Recorder

    init(factory: any MetricsFactory) {
        warnings = Counter(
            label: "statestore_memory_warnings_total", dimensions: [("level", "warning")], factory: factory)
        criticalWarnings = Counter(
            label: "statestore_memory_warnings_total", dimensions: [("level", "critical")], factory: factory)
        delay = Timer(label: "statestore_memory_warning_delay", factory: factory)
        cachePurges = Counter(label: "statestore_cache_purges_total", factory: factory)
        cacheCostReleased = Counter(label: "statestore_cache_released_cost_total", factory: factory)
        rssReleased = Recorder(label: "statestore_memory_warning_rss_released_bytes", factory: factory)
    }

    func record(_ report: MemoryWarningReport, cachesPurged: Int) {
        (report.level == .critical ? criticalWarnings : warnings).increment()
        // A `raisedAt` centuries ago (a clock set wrong) is held at the largest delay a timer takes.
        delay.recordNanoseconds(report.delay.saturatingNanoseconds)
        cachePurges.increment(by: cachesPurged)
        cacheCostReleased.increment(by: report.cacheCostReleased)
        rssReleased.record(report.bytesFreed)
    }
}
