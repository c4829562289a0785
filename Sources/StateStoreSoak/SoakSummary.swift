import Foundation
import StateStore

/// The outcome of a soak: the numbers and the invariants, which `statectl soak` prints as text
/// or as its `--json` document.
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
/// | `no_rss_upward_trend` | the harness's RSS minus the bytes its caches hold, sampled twice a second at normal level right after `malloc_trim(0)` (so the allocator's free pages are not counted) over the second half of the run, fitted by least squares, grows by less than 8 MiB across that half (slope × half the duration); needs ≥ 10 such samples, otherwise it is reported as not measured and holds. Subtracting the cache bytes removes the caches' legitimate refill after each purge, and trimming removes malloc's retention of freed memory, which swings by several MiB between samples; the fixed 8 MiB budget tolerates warm-up noise in a short run and catches a leak of ~0.5 MiB/min in a 30-minute one |
/// | `integrity_ok` | `check()` in the verifier: integrity "ok", no checksum mismatch, nothing quarantined |
/// | `never_oom_killed` | the harness exited 0 on its own, was not killed by a signal, and sent its final report |
package struct SoakSummary {
    package struct Invariant {
        package var name: String
        package var ok: Bool
        package var detail: String
    }

    package let plan: SoakSupervisor.Plan
    package let run: SoakRun
    package let database: String
    package let databaseKept: Bool
    package let cgroupVersion: CgroupMemory.Version?
    package var reportPath: String?

    /// The most RSS − cache may grow (fitted) over the second half of the run, MiB.
    static let trendLimit = 8.0

    package init(
        plan: SoakSupervisor.Plan, run: SoakRun, database: String, databaseKept: Bool,
        cgroupVersion: CgroupMemory.Version?, reportPath: String?
    ) {
        self.plan = plan
        self.run = run
        self.database = database
        self.databaseKept = databaseKept
        self.cgroupVersion = cgroupVersion
        self.reportPath = reportPath
    }

    // MARK: Numbers

    package var elapsed: Double { max(run.end - run.start, 0.001) }
    package var final: SoakFinal { run.final ?? SoakFinal() }
    package var verification: SoakVerification? { run.verification }

    package var aboveNormalEvents: [SoakMessage] { run.events.filter { ($0.level ?? 0) > 0 } }
    package var criticalWarnings: [SoakMessage] { run.warnings.filter { $0.level == 2 } }
    package var delays: [Double] { run.warnings.compactMap(\.delay).map { $0 * 1000 }.sorted() }

    package func crossings(to level: Int) -> Int {
        run.events.filter { $0.level == level && ($0.previous ?? 0) < level }.count
    }

    package var recoveries: Int { run.events.filter { $0.trigger == "recovery" }.count }

    /// ", N raised on a PSI trigger wake-up (…)" for the text summary, or nothing.
    package var psiTriggerText: String {
        let raised = triggeredEscalations
        guard !raised.isEmpty else { return "" }
        let ahead = raised.compactMap(\.aheadMs).sorted()
        let delays = raised.compactMap(\.delayMs).sorted()
        var text = "; \(raised.count) raised on a PSI trigger wake-up"
        if let median = ahead.isEmpty ? nil : ahead[ahead.count / 2] {
            text += String(format: " (median %.1f ms before the next poll", median)
            if let delay = delays.isEmpty ? nil : delays[delays.count / 2] {
                text += String(format: ", delivered in %.3f ms median", delay)
            }
            text += ")"
        }
        return text
    }

    /// Escalations raised on a PSI trigger wake-up (cgroup v2), each with how long before the
    /// next timed poll it came and the delivery delay of its warning (ms), when delivered.
    package var triggeredEscalations: [(event: SoakMessage, aheadMs: Double?, delayMs: Double?)] {
        run.events.filter { $0.source == "pressureStallTrigger" && ($0.level ?? 0) > ($0.previous ?? 0) }.map { event in
            let warning = run.warnings.first {
                $0.raised_at != nil && abs(($0.raised_at ?? 0) - (event.t ?? 0)) < 0.0005
            }
            return (event, event.ahead.map { $0 * 1000 }, warning?.delay.map { $0 * 1000 })
        }
    }

    package var relaunchLost: Int { run.relaunches.reduce(0) { $0 + ($1.lost ?? 0) } }
    package var relaunchCorrupt: Int { run.relaunches.reduce(0) { $0 + ($1.corrupt ?? 0) } }
    package var relaunchVerified: Int { run.relaunches.reduce(0) { $0 + ($1.verified ?? 0) } }
    package var simulatedRelaunches: [SoakMessage] { run.relaunches.filter { $0.detail == nil } }
    package var leaked: Int { simulatedRelaunches.reduce(0) { $0 + ($1.leaked ?? 0) } }
    package var baselineMisses: [SoakMessage] {
        simulatedRelaunches.filter { $0.live != $0.baseline || $0.restored != true }
    }

    /// (slope in MiB/min, samples used) of RSS − cache at normal level over the second half.
    package var rssTrend: (slope: Double?, samples: Int) {
        let middle = run.start + elapsed / 2
        let points = run.samples.compactMap { sample -> (Double, Double)? in
            guard let t = sample.t, t >= middle, sample.level == 0, let rss = sample.rss_trimmed else { return nil }
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

    package static func percentile(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let index = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count - 1)).rounded())))
        return sorted[index]
    }

    /// Episodes the supervisor saw at or below a threshold, and whether the monitor caught them.
    package struct CrossingCheck {
        package var observed = 0
        package var detected = 0
        /// Seconds from the episode's first reading to the monitor's escalating event; negative
        /// when the monitor saw it before the supervisor's next reading (both sample every ~100 ms).
        package var latencies: [Double] = []
        package var missedAt: [Double] = []
    }

    package func crossingCheck(thresholdPercent: Double, level: Int) -> CrossingCheck {
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
            let escalation = run.events.first {
                ($0.level ?? 0) >= level && ($0.previous ?? 0) < level && window.contains($0.t ?? 0)
            }
            let held =
                run.samples.contains { ($0.level ?? 0) >= level && window.contains($0.t ?? 0) }
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

    package var invariants: [Invariant] {
        var result: [Invariant] = []
        let verification = self.verification
        let lost = relaunchLost + (verification?.lost ?? 0)
        let corrupt = relaunchCorrupt + (verification?.corrupt ?? 0)
        let mismatches = final.restoreMismatches + (verification?.restoreMismatches ?? 0)
        let verifierRan = verification != nil || run.interrupted
        result.append(
            Invariant(
                name: "saves_restore_intact",
                ok: lost == 0 && corrupt == 0 && mismatches == 0 && verifierRan,
                detail:
                    "\(relaunchVerified + (verification?.verified ?? 0)) reads verified, \(lost) lost, \(corrupt) corrupt, \(mismatches) controller restore mismatches"
                    + (verifierRan ? "" : "; the verifying process did not report")
            ))
        let violations = final.violations + (verification?.violations ?? 0)
        result.append(
            Invariant(
                name: "no_lifecycle_violations", ok: violations == 0,
                detail: violations == 0
                    ? "0 violations" : "\(violations) violations, first: \(run.violations.first?.detail ?? "?")"))
        let undelivered = final.undelivered
        result.append(
            Invariant(
                name: "warnings_delivered", ok: undelivered == 0 && run.final != nil,
                detail:
                    "\(aboveNormalEvents.count) events above normal, \(run.warnings.count) delivered, \(undelivered) undelivered"
            ))
        let warningCrossings = crossingCheck(thresholdPercent: 25, level: 1)
        let criticalCrossings = crossingCheck(thresholdPercent: 15, level: 2)
        let missed = warningCrossings.missedAt.count + criticalCrossings.missedAt.count
        let latencies = (warningCrossings.latencies + criticalCrossings.latencies).sorted()
        result.append(
            Invariant(
                name: "crossings_detected", ok: missed == 0,
                detail:
                    "\(warningCrossings.observed) episodes at or below 25 % and \(criticalCrossings.observed) at or below 15 % seen by the supervisor, \(missed) missed by the monitor"
                    + (latencies.isEmpty
                        ? ""
                        : String(
                            format:
                                "; escalation relative to the supervisor's first reading: median %+.0f ms, max %+.0f ms",
                            (Self.percentile(latencies, 50) ?? 0) * 1000, (latencies.last ?? 0) * 1000))
                    + (missed == 0
                        ? ""
                        : "; missed at "
                            + (warningCrossings.missedAt + criticalCrossings.missedAt).map {
                                String(format: "%.1f s", $0)
                            }.joined(separator: ", "))
            ))
        let notEmptied = criticalWarnings.filter { ($0.cache_left ?? 0) > 0 }
        result.append(
            Invariant(
                name: "critical_empties_caches", ok: notEmptied.isEmpty,
                detail: notEmptied.isEmpty
                    ? "\(criticalWarnings.count) critical warnings, caches empty after each"
                    : "\(notEmptied.count) of \(criticalWarnings.count) critical warnings left cache bytes behind"
            ))
        let measured = criticalWarnings.filter { ($0.released ?? 0) >= 1 << 20 }
        let short = measured.filter { warning in
            let freed = Double(warning.rss_before ?? 0) - Double(warning.rss_after ?? 0)
            return freed < 0.8 * Double(warning.released ?? 0)
        }
        let ratios = measured.map {
            (Double($0.rss_before ?? 0) - Double($0.rss_after ?? 0)) / Double(max($0.released ?? 1, 1))
        }
        result.append(
            Invariant(
                name: "critical_rss_falls", ok: short.isEmpty,
                detail: "\(measured.count) critical warnings released ≥ 1 MiB; RSS fell by "
                    + (ratios.isEmpty
                        ? "-" : String(format: "%.0f–%.0f %%", (ratios.min() ?? 0) * 100, (ratios.max() ?? 0) * 100))
                    + " of the cache bytes" + (short.isEmpty ? "" : "; \(short.count) below 80 %")
            ))
        let verifierBaselineOK = verification.map { $0.live == $0.baseline && $0.restoredHierarchy } ?? true
        result.append(
            Invariant(
                name: "live_controllers_return_to_baseline",
                ok: baselineMisses.isEmpty && leaked == 0 && verifierBaselineOK,
                detail:
                    "\(simulatedRelaunches.count) relaunches, \(baselineMisses.count) off baseline, \(leaked) leaked controllers"
                    + (verification.map { "; fresh process: \($0.live) live for a baseline of \($0.baseline)" } ?? "")
            ))
        let trend = rssTrend
        if let slope = trend.slope {
            let growth = slope * elapsed / 2 / 60
            result.append(
                Invariant(
                    name: "no_rss_upward_trend", ok: growth < Self.trendLimit,
                    detail: String(
                        format:
                            "%.2f MiB/min over %d normal-level samples: %+.1f MiB across the second half (limit %.0f MiB)",
                        slope, trend.samples, growth, Self.trendLimit)))
        } else {
            result.append(
                Invariant(
                    name: "no_rss_upward_trend", ok: true,
                    detail: "not measured: \(trend.samples) normal-level samples in the second half (needs 10)"))
        }
        if let verification {
            let ok =
                verification.integrity == ["ok"] && verification.checksumMismatches == 0
                && verification.quarantined == 0
            result.append(
                Invariant(
                    name: "integrity_ok", ok: ok,
                    detail:
                        "integrity \(verification.integrity.joined(separator: "; ")), \(verification.checksumMismatches) checksum mismatches, \(verification.quarantined) quarantined"
                ))
        } else {
            result.append(
                Invariant(name: "integrity_ok", ok: run.interrupted, detail: "not checked (no verifying process)"))
        }
        let killed = run.harnessSignal != nil
        let oomNote =
            run.oomKills > 0
            ? "; the cgroup counted \(run.oomKills) OOM kill(s) (ballast restarts: \(run.ballastRestarts))" : ""
        result.append(
            Invariant(
                name: "never_oom_killed",
                ok: !killed && (run.harnessExit == 0) && run.final != nil,
                detail: (killed
                    ? "the harness was killed by signal \(run.harnessSignal!)"
                    : "the harness exited \(run.harnessExit.map(String.init) ?? "?")") + oomNote
            ))
        return result
    }

    package var ok: Bool { invariants.allSatisfy(\.ok) && !run.interrupted }
}
