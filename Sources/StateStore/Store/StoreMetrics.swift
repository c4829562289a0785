import CoreMetrics

/// The store's and its writer's metrics, made once at open from ``StateStore/Options/metricsFactory``
/// (or `MetricsSystem.factory`). Every dimension takes a fixed, small set of values.
struct StoreMetrics: Sendable {
    /// `statestore_save_duration{mode="direct"}`: a ``StateStore/save(_:for:version:)`` or
    /// ``StateStore/write(_:)``, from its call to its commit.
    let directSave: Timer
    /// `statestore_save_duration{mode="write_behind"}`: the writer's transaction of one batch.
    let writeBehindSave: Timer
    /// `statestore_restore_duration`: reading and decoding a state from the database (a restore
    /// served from memory runs no query and is not timed).
    let restore: Timer
    /// `statestore_write_behind_backlog`: batches (structural changes' hand-overs) waiting for
    /// the writer when it takes them, all at once.
    let backlog: Recorder
    /// `statestore_write_behind_batch_states`: states committed by one writer transaction.
    let batchStates: Recorder
    /// `statestore_write_failures_total`: writes that failed (reported to the app's error handler).
    let writeFailures: Counter
    /// `statestore_quarantined_total`: states moved to quarantine.
    let quarantines: Counter

    init(factory: any MetricsFactory) {
        directSave = Timer(label: "statestore_save_duration", dimensions: [("mode", "direct")], factory: factory)
        writeBehindSave = Timer(
            label: "statestore_save_duration", dimensions: [("mode", "write_behind")], factory: factory)
        restore = Timer(label: "statestore_restore_duration", factory: factory)
        backlog = Recorder(label: "statestore_write_behind_backlog", factory: factory)
        batchStates = Recorder(label: "statestore_write_behind_batch_states", factory: factory)
        writeFailures = Counter(label: "statestore_write_failures_total", factory: factory)
        quarantines = Counter(label: "statestore_quarantined_total", factory: factory)
    }
}

extension Timer {
    /// Records the time since `start`.
    func recordSince(_ start: ContinuousClock.Instant) {
        recordNanoseconds((ContinuousClock.now - start).saturatingNanoseconds)
    }
}
