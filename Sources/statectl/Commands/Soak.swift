import ArgumentParser
import Foundation
import Glibc
import StateStore

/// Where the soak's memory pressure comes from.
enum SoakPressure: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// A child memory cgroup with the limit and a ballast in waves: real pressure.
    case cgroup
    /// A scripted `/proc/meminfo` under a `root:` tree: no privilege needed.
    case synthetic
    /// No pressure: traffic, relaunches and restores only.
    case none
}

/// What makes the memory waves in `--pressure cgroup`.
enum SoakBallast: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// `statestore-worker ballast`: grows and shrinks to the MiB it is told, confirming each size.
    case worker
    /// `stress-ng --vm` processes of 16 MiB each, started and stopped one at a time.
    case stressNG = "stress-ng"

    /// `stress-ng` on the `PATH`, if any.
    static var stressNGPath: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/stress-ng" }.first { access($0, X_OK) == 0 }
    }
}

extension Statectl {
    /// `statectl soak`: a memory-pressure soak of the whole stack, with invariants checked all along.
    ///
    /// See ``SoakSupervisor`` for the processes involved, ``SoakHarness`` for the traffic and
    /// ``SoakSummary`` for the invariants and the `--json` document.
    struct Soak: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run controllers under real memory pressure and check that nothing is lost.",
            discussion: """
                Starts a harness process running --controllers controllers in two windows (a tab \
                bar of navigation stacks, a second navigation stack, presentations) driven by \
                seeded random pushes, pops, interactive pops, presentations, dismissals, tab \
                switches, rotations and simulated relaunches; each controller saves its state on \
                viewWillDisappear and fills caches of a few hundred KiB when it appears.

                --pressure cgroup (the default when running as root with a writable memory \
                cgroup, v1 or v2): the harness runs in a new memory cgroup limited to \
                --memory-limit, beside a ballast process whose memory rises and falls in waves so \
                the cgroup's available memory crosses the warning (25 %) and critical (15 %) \
                thresholds again and again: statestore-worker's ballast mode (default), or \
                stress-ng --vm processes with --ballast stress-ng. The cgroup is removed at \
                exit, also on Ctrl-C. \
                --pressure synthetic replays a scripted /proc/meminfo instead (no privilege \
                needed); --pressure none runs the traffic alone.

                Invariants, checked all along: every acknowledged save restores with the same \
                checksum (after each simulated relaunch, and in a fresh process at the end); no \
                lifecycle violation; every warning the monitor raises is delivered (delays \
                measured); a critical warning empties the caches and RSS falls by at least 80 % \
                of the cache bytes released; the live controller count returns to its baseline \
                after each relaunch (no controller outlives its application); RSS shows no upward \
                trend; integrity check ok; the harness is never OOM-killed.

                The database is a fresh file in a temporary folder, removed afterwards, unless \
                --db names one (it is kept). The shared --db default (the demo app's database) \
                is deliberately not used: a soak writes thousands of rows.

                Exit status: 0 when every invariant held; 1 when one broke (each is named on \
                stderr); 2 usage; 3 the database cannot be opened; 130 interrupted.

                Example:
                  statectl soak --duration 60s --report /tmp/soak.svg
                  statectl soak --duration 30m --controllers 1000 --json > soak.json
                  statectl soak --pressure synthetic --duration 20s --controllers 200

                JSON (--json): see docs/soak.md; {"schema": 1, "kind": "soak", "ok", \
                "broken", "invariants": [{"name", "ok", "detail"}], ...}
                """
        )

        @Option(help: ArgumentHelp("How long to run: 90, 90s, 15m, 2h.", valueName: "duration"))
        var duration = "60s"

        @Option(help: "How many distinct controllers the traffic cycles through.")
        var controllers = 1000

        @Option(help: ArgumentHelp("The database to use (kept). Default: a fresh one in a temporary folder, removed afterwards.", valueName: "path"))
        var db: String?

        @Option(help: "cgroup, synthetic or none. Default: cgroup when running as root with a writable memory cgroup, else synthetic.")
        var pressure: SoakPressure?

        @Option(name: .customLong("memory-limit"), help: ArgumentHelp("The harness's memory (cgroup limit, or the synthetic total).", valueName: "bytes"))
        var memoryLimit = "256MiB"

        @Option(help: ArgumentHelp("What makes the waves in cgroup mode: auto, worker or stress-ng. Default (auto): statestore-worker when it is beside statectl, else stress-ng when installed.", valueName: "ballast"))
        var ballast = "auto"

        @Option(help: "Seed of the traffic: the same seed replays the same operations.")
        var seed: UInt64 = 1

        @Option(name: .customLong("report"), help: ArgumentHelp("Write an SVG timeline of the run to this file.", valueName: "file.svg"))
        var report: String?

        @Flag(help: "Print the summary as a JSON document.")
        var json = false

        @Flag(help: "No progress line and no text summary (invariants that broke still go to stderr).")
        var quiet = false

        @Option(help: ArgumentHelp("Most traffic operations per second.", visibility: .hidden))
        var rate: Double = 400

        @Option(name: .customLong("relaunch-interval"), help: ArgumentHelp("Time between simulated relaunches.", visibility: .hidden))
        var relaunchInterval = "8s"

        // The harness and the verifier are this same command, re-executed by the supervisor.
        @Flag(help: .hidden) var child = false
        @Flag(help: .hidden) var verify = false
        @Option(name: .customLong("cgroup-path"), help: .hidden) var cgroupPath: String?
        @Option(name: .customLong("synthetic-root"), help: .hidden) var syntheticRoot: String?
        @Option(help: .hidden) var expectations: String?
        @Option(help: .hidden) var baseline: Int?

        func validate() throws {
            _ = try DurationValue(parsing: duration).requiring(atLeast: 1000, "--duration")
            _ = try DurationValue(parsing: relaunchInterval).requiring(atLeast: 100, "--relaunch-interval")
            _ = try SizeValue(parsing: memoryLimit).requiring(64 << 20 ... 1 << 40, "--memory-limit")
            guard controllers >= 10 else { throw ValidationError("--controllers must be at least 10.") }
            guard rate > 0 else { throw ValidationError("--rate must be positive.") }
            if let db, db.isEmpty { throw ValidationError("--db needs a file path.") }
            guard ballast == "auto" || SoakBallast(rawValue: ballast) != nil else {
                throw ValidationError("--ballast must be auto, worker or stress-ng.")
            }
            if ballast == SoakBallast.stressNG.rawValue && SoakBallast.stressNGPath == nil {
                throw ValidationError("--ballast stress-ng: stress-ng is not installed (apt-get install stress-ng), or use --ballast worker.")
            }
        }

        func run() async throws {
            if child { return try await runChild() }
            if verify { return try await runVerify() }
            try runSupervisor()
        }

        // MARK: Supervisor

        private func runSupervisor() throws {
            let mode = pressure ?? (SoakCgroup.writableParent() != nil ? .cgroup : .synthetic)
            let work = NSTemporaryDirectory() + "statectl-soak-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let databasePath = db ?? work + "/state.sqlite"
            let durationSeconds = SoakValues.parseDuration(duration)!
            let ballastKind = SoakBallast(rawValue: ballast)
                ?? (SoakSupervisor.worker == nil && SoakBallast.stressNGPath != nil ? .stressNG : .worker)
            var plan = SoakSupervisor.Plan(
                mode: mode, duration: durationSeconds, controllers: controllers, seed: seed,
                limit: SoakValues.parseBytes(memoryLimit)!, databasePath: databasePath, workDirectory: work,
                quiet: quiet, operationsPerSecond: rate, relaunchInterval: SoakValues.parseDuration(relaunchInterval)!
            )
            plan.ballast = ballastKind
            let supervisor = SoakSupervisor(plan: plan)
            let run = try supervisor.execute()
            let summary = SoakSummary(plan: plan, run: run, database: db ?? databasePath, databaseKept: db != nil,
                                      cgroupVersion: run.cgroupVersion,
                                      reportPath: report)
            if let report {
                do {
                    try SoakReport.svg(summary: summary, run: run).write(toFile: report, atomically: true, encoding: .utf8)
                } catch {
                    Output.error("statectl: cannot write the report \(report): \(error.localizedDescription)")
                }
            }
            if json {
                Output.json(kind: "soak", summary.json())
            } else if !quiet {
                print(summary.text())
            }
            for invariant in summary.invariants where !invariant.ok {
                Output.error("statectl: soak invariant broken: \(invariant.name) (\(invariant.detail))")
            }
            if run.interrupted {
                Output.error(String(format: "statectl: soak interrupted after %.0f s; the summary covers that part, the fresh-process check did not run", run.end - run.start))
                throw ExitCode(130)
            }
            if !summary.ok { throw ExitCode(ExitStatus.problemFound.rawValue) }
        }

        // MARK: Harness

        /// The harness process: joins the cgroup, protects itself from the OOM killer, runs the traffic.
        @MainActor
        private func runChild() async throws {
            signal(SIGINT, SIG_IGN)  // Ctrl-C reaches the whole process group; the supervisor decides.
            signal(SIGTERM) { _ in soakStopRequested.store(true, ordering: .relaxed) }
            soakSetParentDeathSignal(SIGTERM)
            try? "-900\n".write(toFile: "/proc/self/oom_score_adj", atomically: false, encoding: .utf8)
            var monitorConfiguration = MemoryPressureMonitor.Configuration(usesSystemdPressureWatch: false)
            // On cgroup v2 the cgroup's own memory.pressure is graded and its PSI triggers armed.
            // On v1 (and in synthetic mode) the only PSI file is the host's, which says nothing
            // about this cgroup: grade by available memory only, so the harness sees exactly the
            // crossings the ballast makes.
            let cgroupV2 = cgroupPath.map { access($0 + "/memory.max", F_OK) == 0 } ?? false
            if !cgroupV2 {
                monitorConfiguration.warningPressureStallPercent = nil
                monitorConfiguration.criticalPressureStallPercent = nil
                monitorConfiguration.usesPressureStallTriggers = false
            }
            if let cgroupPath {
                try SoakCgroup(path: cgroupPath, version: cgroupV2 ? .v2 : .v1, limit: 0).add(pid: getpid())
                monitorConfiguration.cgroupPath = cgroupPath
            } else if let syntheticRoot {
                monitorConfiguration.root = syntheticRoot
                monitorConfiguration.readsCgroup = false
            } else {
                monitorConfiguration.readsCgroup = false
                monitorConfiguration.warningAvailablePercent = -1
                monitorConfiguration.criticalAvailablePercent = -2
            }
            let harness = try SoakHarness(configuration: .init(
                databasePath: db ?? "state.sqlite", controllers: controllers,
                duration: SoakValues.parseDuration(duration)!, seed: seed,
                monitorConfiguration: monitorConfiguration,
                expectationsPath: expectations ?? "expectations.json",
                relaunchInterval: SoakValues.parseDuration(relaunchInterval)!, operationsPerSecond: rate
            ))
            await harness.run()
        }

        // MARK: Verifier

        /// A fresh process on the database: reads every recorded save back, rebuilds the
        /// hierarchy, checks the live count and the database's integrity. Prints one `verify` line.
        @MainActor
        private func runVerify() async throws {
            var verification = SoakVerification()
            defer {
                var message = SoakMessage(type: "verify")
                message.verification = verification
                soakWriteLine(message.line)
            }
            guard let db, let expectations else {
                verification.errors.append("--verify needs --db and --expectations")
                return
            }
            let recorded: [String: String]
            do {
                recorded = try JSONDecoder().decode([String: String].self, from: Data(contentsOf: URL(fileURLWithPath: expectations)))
            } catch {
                verification.errors.append("cannot read \(expectations): \(error)")
                return
            }
            var monitorConfiguration = MemoryPressureMonitor.Configuration()
            monitorConfiguration.readsCgroup = false
            monitorConfiguration.warningAvailablePercent = -1
            monitorConfiguration.criticalAvailablePercent = -2
            let harness: SoakHarness
            do {
                harness = try SoakHarness(configuration: .init(
                    databasePath: db, controllers: controllers, duration: 0, seed: seed,
                    monitorConfiguration: monitorConfiguration, expectationsPath: expectations,
                    relaunchInterval: 1, operationsPerSecond: 1
                ))
            } catch {
                verification.errors.append("cannot open \(db): \(error)")
                return
            }
            harness.adopt(expectations: recorded.compactMapValues { UInt64($0) })
            let (verified, lost, corrupt) = harness.verifyStore()
            verification.verified = verified
            verification.lost = lost
            verification.corrupt = corrupt
            do {
                try harness.launch()
                verification.restoredHierarchy = harness.launchRestored
            } catch {
                verification.errors.append("launch: \(error)")
            }
            verification.live = harness.application?.liveControllerCount ?? 0
            verification.baseline = baseline ?? -1
            verification.restoreMismatches = harness.final.restoreMismatches
            verification.violations = harness.final.violations
            verification.errors += harness.final.errors
            harness.application?.terminate()
            harness.monitor.stop()
            do {
                let health = try harness.store.check()
                verification.integrity = health.integrity
                verification.checksumMismatches = health.checksumMismatches.count
                verification.quarantined = health.quarantineCount
                verification.stateCount = health.stateCount
                verification.pressureEvents = health.pressureEventCount
            } catch {
                verification.errors.append("check: \(error)")
            }
        }
    }
}
