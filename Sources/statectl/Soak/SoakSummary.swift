import Foundation
import StateStore

/// The outcome of a soak: the numbers, the invariants, and the `--json` document.
///
/// ## Invariants
///
/// | name | holds when |
/// |------|------------|
/// | `saves_restore_intact` | every path's last acknowledged save reads back with the same checksum after each simulated relaunch, after the final flush and in the fresh verifying process (0 lost, 0 corrupt), and every controller that appeared for the first time restored exactly that save |
/// | `no_lifecycle_violations` | no `LifecycleViolation` in the harness or the verifier |
/// | `warnings_delivered` | every monitor event above normal reached the application as a `MemoryWarningReport` (matched by its raise time) |
/// | `crossings_detected` | every time the supervisor's own readings (the cgroup's numbers, or the scripted meminfo) stayed at or below the warning (25 %) or critical (15 %) threshold for ≥ 0.5 s, the monitor was at that level, or raised it, by 1.5 s after the episode ended; the latency from the episode's first reading to the escalating event is reported |
/// | `critical_empties_caches` | after every critical warning, the live controllers' caches hold 0 bytes |
/// | `critical_rss_falls` | after every critical warning that released ≥ 1 MiB of cache, RSS fell by ≥ 80 % of the bytes released (`rss_before − rss_after ≥ 0.8 × cache_cost_released`; cache cost is the buffers' byte count) |
/// | `live_controllers_return_to_baseline` | after each relaunch (and in the verifier) the new application holds exactly as many live controllers as the old hierarchy had, and none of the old controllers is still alive |
/// | `no_rss_upward_trend` | the harness's RSS minus the bytes its caches hold, sampled at normal level over the second half of the run, fitted by least squares, grows by less than 8 MiB across that half (slope × half the duration); needs ≥ 10 such samples, otherwise it is reported as not measured and holds. Subtracting the cache bytes removes the caches' legitimate refill after each purge; the fixed 8 MiB budget tolerates warm-up noise in a short run and catches a leak of ~0.5 MiB/min in a 30-minute one |
/// | `integrity_ok` | `check()` in the verifier: integrity "ok", no checksum mismatch, nothing quarantined |
/// | `never_oom_killed` | the harness exited 0 on its own, was not killed by a signal, and sent its final report |
struct SoakSummary {
    struct Invariant {
        var name: String
        var ok: Bool
        var detail: String
    }

    let plan: SoakSupervisor.Plan
    let run: SoakRun
    let database: String
    let databaseKept: Bool
    let cgroupVersion: CgroupMemory.Version?
    let reportPath: String?

    /// The most RSS − cache may grow (fitted) over the second half of the run, MiB.
    static let trendLimit = 8.0

    init(plan: SoakSupervisor.Plan, run: SoakRun, database: String, databaseKept: Bool,
         cgroupVersion: CgroupMemory.Version?, reportPath: String?) {
        self.plan = plan
        self.run = run
        self.database = database
        self.databaseKept = databaseKept
        self.cgroupVersion = cgroupVersion
        self.reportPath = reportPath
    }

    // MARK: Numbers

    var elapsed: Double { max(run.end - run.start, 0.001) }
    var final: SoakFinal { run.final ?? SoakFinal() }
    var verification: SoakVerification? { run.verification }

    var aboveNormalEvents: [SoakMessage] { run.events.filter { ($0.level ?? 0) > 0 } }
    var criticalWarnings: [SoakMessage] { run.warnings.filter { $0.level == 2 } }
    var delays: [Double] { run.warnings.compactMap(\.delay).map { $0 * 1000 }.sorted() }

    func crossings(to level: Int) -> Int {
        run.events.filter { $0.level == level && ($0.previous ?? 0) < level }.count
    }

    var recoveries: Int { run.events.filter { $0.trigger == "recovery" }.count }

    /// ", N raised on a PSI trigger wake-up (…)" for the text summary, or nothing.
    var psiTriggerText: String {
        let raised = triggeredEscalations
        guard !raised.isEmpty else { return "" }
        let ahead = raised.compactMap(\.aheadMs).sorted()
        let delays = raised.compactMap(\.delayMs).sorted()
        var text = "; \(raised.count) raised on a PSI trigger wake-up"
        if let median = ahead.isEmpty ? nil : ahead[ahead.count / 2] {
            text += String(format: " (median %.1f ms before the next poll", median)
            if let delay = delays.isEmpty ? nil : delays[delays.count / 2] { text += String(format: ", delivered in %.3f ms median", delay) }
            text += ")"
        }
        return text
    }

    /// Escalations raised on a PSI trigger wake-up (cgroup v2), each with how long before the
    /// next timed poll it came and the delivery delay of its warning (ms), when delivered.
    var triggeredEscalations: [(event: SoakMessage, aheadMs: Double?, delayMs: Double?)] {
        run.events.filter { $0.source == "pressureStallTrigger" && ($0.level ?? 0) > ($0.previous ?? 0) }.map { event in
            let warning = run.warnings.first { $0.raised_at != nil && abs(($0.raised_at ?? 0) - (event.t ?? 0)) < 0.0005 }
            return (event, event.ahead.map { $0 * 1000 }, warning?.delay.map { $0 * 1000 })
        }
    }

    var relaunchLost: Int { run.relaunches.reduce(0) { $0 + ($1.lost ?? 0) } }
    var relaunchCorrupt: Int { run.relaunches.reduce(0) { $0 + ($1.corrupt ?? 0) } }
    var relaunchVerified: Int { run.relaunches.reduce(0) { $0 + ($1.verified ?? 0) } }
    var simulatedRelaunches: [SoakMessage] { run.relaunches.filter { $0.detail == nil } }
    var leaked: Int { simulatedRelaunches.reduce(0) { $0 + ($1.leaked ?? 0) } }
    var baselineMisses: [SoakMessage] {
        simulatedRelaunches.filter { $0.live != $0.baseline || $0.restored != true }
    }

    /// (slope in MiB/min, samples used) of RSS − cache at normal level over the second half.
    var rssTrend: (slope: Double?, samples: Int) {
        let middle = run.start + elapsed / 2
        let points = run.samples.compactMap { sample -> (Double, Double)? in
            guard let t = sample.t, t >= middle, sample.level == 0, let rss = sample.rss else { return nil }
            return ((t - run.start) / 60, (Double(rss) - Double(sample.cache ?? 0)) / Double(1 << 20))
        }
        guard points.count >= 10 else { return (nil, points.count) }
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.0 } / n
        let meanY = points.reduce(0) { $0 + $1.1 } / n
        let sxx = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
        let sxy = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
        return (sxx > 0 ? sxy / sxx : 0, points.count)
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let index = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count - 1)).rounded())))
        return sorted[index]
    }

    /// Episodes the supervisor saw at or below a threshold, and whether the monitor caught them.
    struct CrossingCheck {
        var observed = 0
        var detected = 0
        /// Seconds from the episode's first reading to the monitor's escalating event; negative
        /// when the monitor saw it before the supervisor's next reading (both sample every ~100 ms).
        var latencies: [Double] = []
        var missedAt: [Double] = []
    }

    func crossingCheck(thresholdPercent: Double, level: Int) -> CrossingCheck {
        var check = CrossingCheck()
        var episodes: [(start: Double, end: Double)] = []
        var current: (start: Double, end: Double)?
        for observation in run.observations {
            if observation.percent <= thresholdPercent {
                current = (current?.start ?? observation.t, observation.t)
            } else if let episode = current {
                episodes.append(episode)
                current = nil
            }
        }
        if let current { episodes.append(current) }
        for episode in episodes where episode.end - episode.start >= 0.5 && episode.start < run.end - 2.5 {
            check.observed += 1
            let window = (episode.start - 1.0)...(episode.end + 1.5)
            let escalation = run.events.first { ($0.level ?? 0) >= level && ($0.previous ?? 0) < level && window.contains($0.t ?? 0) }
            let held = run.samples.contains { ($0.level ?? 0) >= level && window.contains($0.t ?? 0) }
                || run.events.contains { ($0.level ?? 0) >= level && window.contains($0.t ?? 0) }
            if let escalation, let t = escalation.t { check.latencies.append(t - episode.start) }
            if escalation != nil || held {
                check.detected += 1
            } else {
                check.missedAt.append(episode.start - run.start)
            }
        }
        return check
    }

    // MARK: Invariants

    var invariants: [Invariant] {
        var result: [Invariant] = []
        let verification = self.verification
        let lost = relaunchLost + (verification?.lost ?? 0)
        let corrupt = relaunchCorrupt + (verification?.corrupt ?? 0)
        let mismatches = final.restoreMismatches + (verification?.restoreMismatches ?? 0)
        let verifierRan = verification != nil || run.interrupted
        result.append(Invariant(
            name: "saves_restore_intact",
            ok: lost == 0 && corrupt == 0 && mismatches == 0 && verifierRan,
            detail: "\(relaunchVerified + (verification?.verified ?? 0)) reads verified, \(lost) lost, \(corrupt) corrupt, \(mismatches) controller restore mismatches"
                + (verifierRan ? "" : "; the verifying process did not report")
        ))
        let violations = final.violations + (verification?.violations ?? 0)
        result.append(Invariant(name: "no_lifecycle_violations", ok: violations == 0,
                                detail: violations == 0 ? "0 violations" : "\(violations) violations, first: \(run.violations.first?.detail ?? "?")"))
        let undelivered = final.undelivered
        result.append(Invariant(
            name: "warnings_delivered", ok: undelivered == 0 && run.final != nil,
            detail: "\(aboveNormalEvents.count) events above normal, \(run.warnings.count) delivered, \(undelivered) undelivered"
        ))
        let warningCrossings = crossingCheck(thresholdPercent: 25, level: 1)
        let criticalCrossings = crossingCheck(thresholdPercent: 15, level: 2)
        let missed = warningCrossings.missedAt.count + criticalCrossings.missedAt.count
        let latencies = (warningCrossings.latencies + criticalCrossings.latencies).sorted()
        result.append(Invariant(
            name: "crossings_detected", ok: missed == 0,
            detail: "\(warningCrossings.observed) episodes at or below 25 % and \(criticalCrossings.observed) at or below 15 % seen by the supervisor, \(missed) missed by the monitor"
                + (latencies.isEmpty ? "" : String(format: "; escalation relative to the supervisor's first reading: median %+.0f ms, max %+.0f ms",
                                                   (Self.percentile(latencies, 50) ?? 0) * 1000, (latencies.last ?? 0) * 1000))
                + (missed == 0 ? "" : "; missed at " + (warningCrossings.missedAt + criticalCrossings.missedAt).map { String(format: "%.1f s", $0) }.joined(separator: ", "))
        ))
        let notEmptied = criticalWarnings.filter { ($0.cache_left ?? 0) > 0 }
        result.append(Invariant(
            name: "critical_empties_caches", ok: notEmptied.isEmpty,
            detail: notEmptied.isEmpty ? "\(criticalWarnings.count) critical warnings, caches empty after each"
                : "\(notEmptied.count) of \(criticalWarnings.count) critical warnings left cache bytes behind"
        ))
        let measured = criticalWarnings.filter { ($0.released ?? 0) >= 1 << 20 }
        let short = measured.filter { warning in
            let freed = Double(warning.rss_before ?? 0) - Double(warning.rss_after ?? 0)
            return freed < 0.8 * Double(warning.released ?? 0)
        }
        let ratios = measured.map { (Double($0.rss_before ?? 0) - Double($0.rss_after ?? 0)) / Double(max($0.released ?? 1, 1)) }
        result.append(Invariant(
            name: "critical_rss_falls", ok: short.isEmpty,
            detail: "\(measured.count) critical warnings released ≥ 1 MiB; RSS fell by "
                + (ratios.isEmpty ? "-" : String(format: "%.0f–%.0f %%", (ratios.min() ?? 0) * 100, (ratios.max() ?? 0) * 100))
                + " of the cache bytes" + (short.isEmpty ? "" : "; \(short.count) below 80 %")
        ))
        let verifierBaselineOK = verification.map { $0.live == $0.baseline && $0.restoredHierarchy } ?? true
        result.append(Invariant(
            name: "live_controllers_return_to_baseline",
            ok: baselineMisses.isEmpty && leaked == 0 && verifierBaselineOK,
            detail: "\(simulatedRelaunches.count) relaunches, \(baselineMisses.count) off baseline, \(leaked) leaked controllers"
                + (verification.map { "; fresh process: \($0.live) live for a baseline of \($0.baseline)" } ?? "")
        ))
        let trend = rssTrend
        if let slope = trend.slope {
            let growth = slope * elapsed / 2 / 60
            result.append(Invariant(name: "no_rss_upward_trend", ok: growth < Self.trendLimit,
                                    detail: String(format: "%.2f MiB/min over %d normal-level samples: %+.1f MiB across the second half (limit %.0f MiB)",
                                                   slope, trend.samples, growth, Self.trendLimit)))
        } else {
            result.append(Invariant(name: "no_rss_upward_trend", ok: true,
                                    detail: "not measured: \(trend.samples) normal-level samples in the second half (needs 10)"))
        }
        if let verification {
            let ok = verification.integrity == ["ok"] && verification.checksumMismatches == 0 && verification.quarantined == 0
            result.append(Invariant(name: "integrity_ok", ok: ok,
                                    detail: "integrity \(verification.integrity.joined(separator: "; ")), \(verification.checksumMismatches) checksum mismatches, \(verification.quarantined) quarantined"))
        } else {
            result.append(Invariant(name: "integrity_ok", ok: run.interrupted, detail: "not checked (no verifying process)"))
        }
        let killed = run.harnessSignal != nil
        let oomNote = run.oomKills > 0 ? "; the cgroup counted \(run.oomKills) OOM kill(s) (ballast restarts: \(run.ballastRestarts))" : ""
        result.append(Invariant(
            name: "never_oom_killed",
            ok: !killed && (run.harnessExit == 0) && run.final != nil,
            detail: (killed ? "the harness was killed by signal \(run.harnessSignal!)" : "the harness exited \(run.harnessExit.map(String.init) ?? "?")") + oomNote
        ))
        return result
    }

    var ok: Bool { invariants.allSatisfy(\.ok) && !run.interrupted }

    // MARK: Output

    func json() -> [(key: String, value: JSON)] {
        let invariants = self.invariants
        let trend = rssTrend
        let rss = run.samples.compactMap(\.rss)
        let cache = run.samples.compactMap(\.cache)
        let delays = self.delays
        func delayJSON(_ value: Double?) -> JSON { value.map { SoakValues.number($0) } ?? .null }
        let critical = criticalWarnings
        var members: [(key: String, value: JSON)] = [
            ("ok", .bool(ok)),
            ("broken", .strings(invariants.filter { !$0.ok }.map(\.name))),
            ("interrupted", .bool(run.interrupted)),
            ("pressure", .string(plan.mode.rawValue)),
            ("cgroup", run.cgroupPath.map(JSON.string) ?? .null),
            ("cgroup_removed", run.cgroupPath.map { .bool(!FileManager.default.fileExists(atPath: $0)) } ?? .null),
            ("cgroup_version", cgroupVersion.map { .int($0.rawValue) } ?? .null),
            ("memory_limit", .int(plan.limit)),
            ("ballast", .string(plan.mode != .cgroup ? "none" : plan.ballast == .worker ? "statestore-worker ballast" : "stress-ng --vm")),
            ("ballast_peak_bytes", .int(run.ballastPeakMiB << 20)),
            ("database", .string(database)),
            ("database_kept", .bool(databaseKept)),
            ("seed", .int(plan.seed)),
            ("controllers", .int(plan.controllers)),
            ("duration_requested", SoakValues.number(plan.duration)),
            ("duration", SoakValues.number(elapsed)),
            ("operations", .object(final.operations.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            ("operation_count", .int(final.operations.values.reduce(0, +))),
            ("transitions", .int(final.transitions)),
            ("transitions_per_second", SoakValues.number(Double(final.transitions) / elapsed, decimals: 1)),
            ("controllers_instantiated", .int(final.controllersInstantiated)),
            ("distinct_paths", .int(final.distinctPaths)),
            ("monitor", .object([
                ("events", .int(run.events.count)),
                ("above_normal", .int(aboveNormalEvents.count)),
                ("crossings_to_warning", .int(crossings(to: 1))),
                ("crossings_to_critical", .int(crossings(to: 2))),
                ("recoveries", .int(recoveries)),
                ("watch", final.watch.map(JSON.string) ?? .null),
                ("raised_by_psi_trigger", .array(triggeredEscalations.prefix(50).map { item in
                    .object([
                        ("t", SoakValues.number((item.event.t ?? run.start) - run.start, decimals: 3)),
                        ("level", .int(item.event.level ?? 0)),
                        ("previous", .int(item.event.previous ?? 0)),
                        ("ahead_of_poll_ms", item.aheadMs.map { SoakValues.number($0, decimals: 1) } ?? .null),
                        ("delivery_delay_ms", item.delayMs.map { SoakValues.number($0, decimals: 3) } ?? .null),
                    ])
                })),
            ])),
            ("crossings", crossingsJSON()),
            ("warnings", .object([
                ("delivered", .int(run.warnings.count)),
                ("warning", .int(run.warnings.filter { $0.level == 1 }.count)),
                ("critical", .int(critical.count)),
                ("undelivered", .int(final.undelivered)),
                ("delay_ms", .object([
                    ("min", delayJSON(delays.first)),
                    ("median", delayJSON(Self.percentile(delays, 50))),
                    ("p95", delayJSON(Self.percentile(delays, 95))),
                    ("max", delayJSON(delays.last)),
                ])),
                ("cache_bytes_released", .int(run.warnings.reduce(0) { $0 + ($1.released ?? 0) })),
                ("critical_rss_freed_bytes", .int(critical.reduce(UInt64(0)) { $0 + ($1.rss_before ?? 0) - min($1.rss_before ?? 0, $1.rss_after ?? 0) })),
                ("critical_cache_bytes_released", .int(critical.reduce(0) { $0 + ($1.released ?? 0) })),
            ])),
            ("relaunches", .object([
                ("count", .int(simulatedRelaunches.count)),
                ("reads_verified", .int(relaunchVerified)),
                ("lost", .int(relaunchLost)),
                ("corrupt", .int(relaunchCorrupt)),
                ("off_baseline", .int(baselineMisses.count)),
                ("leaked_controllers", .int(leaked)),
            ])),
            ("restore_mismatches", .int(final.restoreMismatches)),
            ("violations", .int(final.violations + (verification?.violations ?? 0))),
        ]
        if let verification {
            members.append(("final_verification", .object([
                ("verified", .int(verification.verified)),
                ("lost", .int(verification.lost)),
                ("corrupt", .int(verification.corrupt)),
                ("restored_hierarchy", .bool(verification.restoredHierarchy)),
                ("live", .int(verification.live)),
                ("baseline", .int(verification.baseline)),
                ("restore_mismatches", .int(verification.restoreMismatches)),
                ("integrity", .strings(verification.integrity)),
                ("checksum_mismatches", .int(verification.checksumMismatches)),
                ("quarantined", .int(verification.quarantined)),
                ("state_count", .int(verification.stateCount)),
                ("pressure_events", .int(verification.pressureEvents)),
            ])))
        } else {
            members.append(("final_verification", .null))
        }
        members += [
            ("rss", .object([
                ("min", .int(rss.min() ?? 0)),
                ("max", .int(rss.max() ?? 0)),
                ("trend_mib_per_minute", trend.slope.map { SoakValues.number($0) } ?? .null),
                ("trend_samples", .int(trend.samples)),
            ])),
            ("cache_bytes_max", .int(cache.max() ?? 0)),
            ("samples", .int(run.samples.count)),
            ("oom_kills", .int(run.oomKills)),
            ("harness_oom_killed", .bool(run.harnessSignal == 9 && run.oomKills > 0)),
            ("harness_exit", run.harnessExit.map { .int($0) } ?? .null),
            ("harness_signal", run.harnessSignal.map { .int($0) } ?? .null),
            ("ballast_restarts", .int(run.ballastRestarts)),
            ("invariants", .array(invariants.map { .object([("name", .string($0.name)), ("ok", .bool($0.ok)), ("detail", .string($0.detail))]) })),
            ("errors", .strings(run.errors + (verification?.errors ?? []))),
            ("report", reportPath.map(JSON.string) ?? .null),
        ]
        return members
    }

    /// `{"warning": {...}, "critical": {...}}`: episodes observed, detected, missed, latency.
    func crossingsJSON() -> JSON {
        func json(_ check: CrossingCheck) -> JSON {
            let latencies = check.latencies.sorted().map { $0 * 1000 }
            return .object([
                ("observed", .int(check.observed)),
                ("detected", .int(check.detected)),
                ("missed", .int(check.missedAt.count)),
                ("detection_latency_ms", .object([
                    ("min", latencies.first.map { SoakValues.number($0) } ?? .null),
                    ("median", Self.percentile(latencies, 50).map { SoakValues.number($0) } ?? .null),
                    ("max", latencies.last.map { SoakValues.number($0) } ?? .null),
                ])),
            ])
        }
        return .object([
            ("warning", json(crossingCheck(thresholdPercent: 25, level: 1))),
            ("critical", json(crossingCheck(thresholdPercent: 15, level: 2))),
        ])
    }

    func text() -> String {
        let delays = self.delays
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "-" }
        var rows: [(String, String)] = [
            ("Pressure:", plan.mode.rawValue + (plan.mode == .cgroup ? " (v\(cgroupVersion?.rawValue ?? 1), limit \(Format.bytes(plan.limit)), \(plan.ballast.rawValue) ballast peak \(run.ballastPeakMiB) MiB)" : "")),
            ("Duration:", String(format: "%.1f s", elapsed) + (run.interrupted ? " (interrupted)" : "")),
            ("Traffic:", "\(final.operations.values.reduce(0, +)) operations, \(final.transitions) transitions (\(String(format: "%.0f", Double(final.transitions) / elapsed))/s), \(plan.controllers) controllers, seed \(plan.seed)"),
            ("Monitor:", "\(crossings(to: 1)) crossings to warning, \(crossings(to: 2)) to critical, \(recoveries) recoveries"
                + psiTriggerText + (final.watch.map { "; woken by \($0)" } ?? "")),
            ("Warnings:", "\(run.warnings.count) delivered (\(run.warnings.filter { $0.level == 1 }.count) warning, \(criticalWarnings.count) critical), \(final.undelivered) undelivered"),
            ("Delay:", "min \(ms(delays.first)), median \(ms(Self.percentile(delays, 50))), max \(ms(delays.last))"),
            ("Relaunches:", "\(simulatedRelaunches.count), \(relaunchVerified) reads verified, \(relaunchLost) lost, \(relaunchCorrupt) corrupt, \(leaked) leaked controllers"),
            ("Violations:", String(final.violations + (verification?.violations ?? 0))),
            ("OOM kills:", "\(run.oomKills) in the cgroup, \(run.ballastRestarts) ballast restarts"),
        ]
        if let verification {
            rows.append(("Fresh process:", "\(verification.verified) verified, \(verification.lost) lost, \(verification.corrupt) corrupt, integrity \(verification.integrity.joined(separator: "; "))"))
        }
        if let reportPath { rows.append(("Report:", reportPath)) }
        var lines = [Table.keyValue(rows), "", "Invariants:"]
        for invariant in invariants {
            lines.append("  \(invariant.ok ? "ok    " : "BROKEN") \(invariant.name): \(invariant.detail)")
        }
        lines.append(ok ? "All invariants held." : "Invariants broke: " + invariants.filter { !$0.ok }.map(\.name).joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}
