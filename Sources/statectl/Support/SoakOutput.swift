import Foundation
import StateStore
import StateStoreSoak

/// `statectl soak`'s output: the `--json` document (see docs/soak.md) and the text summary of a
/// ``SoakSummary``, and the progress line shown on a terminal while the soak runs.
extension SoakSummary {
    /// The `--json` document's members after `schema` and `kind`.
    func json() -> [(key: String, value: JSON)] {
        let invariants = self.invariants
        let trend = rssTrend
        let rss = run.samples.compactMap(\.rss)
        let cache = run.samples.compactMap(\.cache)
        let delays = self.delays
        func delayJSON(_ value: Double?) -> JSON { value.map { number($0) } ?? .null }
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
            (
                "ballast",
                .string(
                    plan.mode != .cgroup
                        ? "none" : plan.ballast == .worker ? "statestore-worker ballast" : "stress-ng --vm")
            ),
            ("ballast_peak_bytes", .int(run.ballastPeakMiB << 20)),
            ("database", .string(database)),
            ("database_kept", .bool(databaseKept)),
            ("seed", .int(plan.seed)),
            ("controllers", .int(plan.controllers)),
            ("duration_requested", number(plan.duration)),
            ("duration", number(elapsed)),
            ("operations", .object(final.operations.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            ("operation_count", .int(final.operations.values.reduce(0, +))),
            ("transitions", .int(final.transitions)),
            ("transitions_per_second", number(Double(final.transitions) / elapsed, decimals: 1)),
            ("controllers_instantiated", .int(final.controllersInstantiated)),
            ("distinct_paths", .int(final.distinctPaths)),
            (
                "monitor",
                .object([
                    ("events", .int(run.events.count)),
                    ("above_normal", .int(aboveNormalEvents.count)),
                    ("crossings_to_warning", .int(crossings(to: 1))),
                    ("crossings_to_critical", .int(crossings(to: 2))),
                    ("recoveries", .int(recoveries)),
                    ("watch", final.watch.map(JSON.string) ?? .null),
                    (
                        "raised_by_psi_trigger",
                        .array(
                            triggeredEscalations.prefix(50).map { item in
                                .object([
                                    ("t", number((item.event.t ?? run.start) - run.start, decimals: 3)),
                                    ("level", .int(item.event.level ?? 0)),
                                    ("previous", .int(item.event.previous ?? 0)),
                                    ("ahead_of_poll_ms", item.aheadMs.map { number($0, decimals: 1) } ?? .null),
                                    ("delivery_delay_ms", item.delayMs.map { number($0, decimals: 3) } ?? .null),
                                ])
                            })
                    ),
                ])
            ),
            ("crossings", crossingsJSON()),
            (
                "warnings",
                .object([
                    ("delivered", .int(run.warnings.count)),
                    ("warning", .int(run.warnings.filter { $0.level == 1 }.count)),
                    ("critical", .int(critical.count)),
                    ("undelivered", .int(final.undelivered)),
                    (
                        "delay_ms",
                        .object([
                            ("min", delayJSON(delays.first)),
                            ("median", delayJSON(Self.percentile(delays, 50))),
                            ("p95", delayJSON(Self.percentile(delays, 95))),
                            ("max", delayJSON(delays.last)),
                        ])
                    ),
                    ("cache_bytes_released", .int(run.warnings.reduce(0) { $0 + ($1.released ?? 0) })),
                    (
                        "critical_rss_freed_bytes",
                        .int(
                            critical.reduce(UInt64(0)) {
                                $0 + ($1.rss_before ?? 0) - min($1.rss_before ?? 0, $1.rss_after ?? 0)
                            })
                    ),
                    ("critical_cache_bytes_released", .int(critical.reduce(0) { $0 + ($1.released ?? 0) })),
                ])
            ),
            (
                "relaunches",
                .object([
                    ("count", .int(simulatedRelaunches.count)),
                    ("reads_verified", .int(relaunchVerified)),
                    ("lost", .int(relaunchLost)),
                    ("corrupt", .int(relaunchCorrupt)),
                    ("off_baseline", .int(baselineMisses.count)),
                    ("leaked_controllers", .int(leaked)),
                ])
            ),
            ("restore_mismatches", .int(final.restoreMismatches)),
            ("violations", .int(final.violations + (verification?.violations ?? 0))),
        ]
        if let verification {
            members.append(
                (
                    "final_verification",
                    .object([
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
                    ])
                ))
        } else {
            members.append(("final_verification", .null))
        }
        members += [
            (
                "rss",
                .object([
                    ("min", .int(rss.min() ?? 0)),
                    ("max", .int(rss.max() ?? 0)),
                    ("trend_mib_per_minute", trend.slope.map { number($0) } ?? .null),
                    ("trend_samples", .int(trend.samples)),
                ])
            ),
            ("cache_bytes_max", .int(cache.max() ?? 0)),
            ("samples", .int(run.samples.count)),
            ("oom_kills", .int(run.oomKills)),
            ("harness_oom_killed", .bool(run.harnessSignal == 9 && run.oomKills > 0)),
            ("harness_exit", run.harnessExit.map { .int($0) } ?? .null),
            ("harness_signal", run.harnessSignal.map { .int($0) } ?? .null),
            ("ballast_restarts", .int(run.ballastRestarts)),
            (
                "invariants",
                .array(
                    invariants.map {
                        .object([("name", .string($0.name)), ("ok", .bool($0.ok)), ("detail", .string($0.detail))])
                    })
            ),
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
                (
                    "detection_latency_ms",
                    .object([
                        ("min", latencies.first.map { number($0) } ?? .null),
                        ("median", Self.percentile(latencies, 50).map { number($0) } ?? .null),
                        ("max", latencies.last.map { number($0) } ?? .null),
                    ])
                ),
            ])
        }
        return .object([
            ("warning", json(crossingCheck(thresholdPercent: 25, level: 1))),
            ("critical", json(crossingCheck(thresholdPercent: 15, level: 2))),
        ])
    }

    /// The text summary: the key numbers, then every invariant and whether it held.
    func text() -> String {
        let delays = self.delays
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "-" }
        var rows: [(String, String)] = [
            (
                "Pressure:",
                plan.mode.rawValue
                    + (plan.mode == .cgroup
                        ? " (v\(cgroupVersion?.rawValue ?? 1), limit \(Format.bytes(plan.limit)), \(plan.ballast.rawValue) ballast peak \(run.ballastPeakMiB) MiB)"
                        : "")
            ),
            ("Duration:", String(format: "%.1f s", elapsed) + (run.interrupted ? " (interrupted)" : "")),
            (
                "Traffic:",
                "\(final.operations.values.reduce(0, +)) operations, \(final.transitions) transitions (\(String(format: "%.0f", Double(final.transitions) / elapsed))/s), \(plan.controllers) controllers, seed \(plan.seed)"
            ),
            (
                "Monitor:",
                "\(crossings(to: 1)) crossings to warning, \(crossings(to: 2)) to critical, \(recoveries) recoveries"
                    + psiTriggerText + (final.watch.map { "; woken by \($0)" } ?? "")
            ),
            (
                "Warnings:",
                "\(run.warnings.count) delivered (\(run.warnings.filter { $0.level == 1 }.count) warning, \(criticalWarnings.count) critical), \(final.undelivered) undelivered"
            ),
            ("Delay:", "min \(ms(delays.first)), median \(ms(Self.percentile(delays, 50))), max \(ms(delays.last))"),
            (
                "Relaunches:",
                "\(simulatedRelaunches.count), \(relaunchVerified) reads verified, \(relaunchLost) lost, \(relaunchCorrupt) corrupt, \(leaked) leaked controllers"
            ),
            ("Violations:", String(final.violations + (verification?.violations ?? 0))),
            ("OOM kills:", "\(run.oomKills) in the cgroup, \(run.ballastRestarts) ballast restarts"),
        ]
        if let verification {
            rows.append(
                (
                    "Fresh process:",
                    "\(verification.verified) verified, \(verification.lost) lost, \(verification.corrupt) corrupt, integrity \(verification.integrity.joined(separator: "; "))"
                ))
        }
        if let reportPath { rows.append(("Report:", reportPath)) }
        var lines = [Table.keyValue(rows), "", "Invariants:"]
        for invariant in invariants {
            lines.append("  \(invariant.ok ? "ok    " : "BROKEN") \(invariant.name): \(invariant.detail)")
        }
        let broken = invariants.filter { !$0.ok }.map(\.name)
        if !broken.isEmpty {
            lines.append("Invariants broke: " + broken.joined(separator: ", "))
        } else {
            lines.append(
                run.interrupted ? "Interrupted: the invariants held for the part that ran." : "All invariants held.")
        }
        return lines.joined(separator: "\n")
    }

    /// A value as a JSON number with a fixed number of decimals.
    private func number(_ value: Double, decimals: Int = 3) -> JSON {
        guard value.isFinite else { return .null }
        return .number(String(format: "%.\(decimals)f", value))
    }
}

extension SoakProgress {
    /// The line `statectl soak` keeps rewriting on a terminal's stderr while it runs.
    var line: String {
        String(
            format:
                "%5.0fs/%.0fs  %6.0f transitions/s  %-8@  RSS %@  caches %@  available %@  warnings %d  relaunches %d",
            elapsed, duration, transitionsPerSecond, level as NSString,
            Format.bytes(rss) as NSString, Format.bytes(cache) as NSString, Format.bytes(available) as NSString,
            warnings, relaunches
        )
    }
}
