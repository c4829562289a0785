import ArgumentParser
import Foundation
import Glibc
import StateStore
import StateStoreSoak

extension SoakPressure: ExpressibleByArgument {}

extension Statectl {
    /// `statectl soak`: a memory-pressure soak of the whole stack, with invariants checked all along.
    ///
    /// Options and printing only: the soak itself is the `StateStoreSoak` module. See
    /// `SoakSupervisor` for the processes involved, `SoakHarness` for the traffic and
    /// `SoakSummary` for the invariants; `SoakOutput.swift` prints them and the `--json` document.
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

        @Option(
            help: ArgumentHelp("How long to run: 90, 90s, 15m, 2h. (default: 60s)", valueName: "duration"),
            transform: { try DurationValue(parsing: $0).requiring(atLeast: 1000, "--duration") }
        )
        var duration: DurationValue = try! DurationValue(parsing: "60s")

        @Option(help: "How many distinct controllers the traffic cycles through.")
        var controllers = 1000

        @Option(
            help: ArgumentHelp(
                "The database to use (kept). Default: a fresh one in a temporary folder, removed afterwards.",
                valueName: "path"))
        var db: String?

        @Option(
            help:
                "cgroup, synthetic or none. Default: cgroup when running as root with a writable memory cgroup, else synthetic."
        )
        var pressure: SoakPressure?

        @Option(
            name: .customLong("memory-limit"),
            help: ArgumentHelp(
                "The harness's memory (cgroup limit, or the synthetic total). (default: 256MiB)", valueName: "bytes"),
            transform: { try SizeValue(parsing: $0).requiring(64 << 20...1 << 40, "--memory-limit") }
        )
        var memoryLimit: SizeValue = try! SizeValue(parsing: "256MiB")

        @Option(
            help: ArgumentHelp(
                "What makes the waves in cgroup mode: auto, worker or stress-ng. Default (auto): statestore-worker when it is beside statectl, else stress-ng when installed.",
                valueName: "ballast"))
        var ballast = BallastChoice.auto

        @Option(help: "Seed of the traffic: the same seed replays the same operations.")
        var seed: UInt64 = 1

        @Option(
            name: .customLong("report"),
            help: ArgumentHelp("Write an SVG timeline of the run to this file.", valueName: "file.svg"))
        var report: String?

        @Flag(help: "Print the summary as a JSON document.")
        var json = false

        @Flag(help: "No progress line and no text summary (invariants that broke still go to stderr).")
        var quiet = false

        @Option(help: ArgumentHelp("Most traffic operations per second.", visibility: .hidden))
        var rate: Double = 400

        @Option(
            name: .customLong("relaunch-interval"),
            help: ArgumentHelp("Time between simulated relaunches.", visibility: .hidden),
            transform: { try DurationValue(parsing: $0).requiring(atLeast: 100, "--relaunch-interval") }
        )
        var relaunchInterval: DurationValue = try! DurationValue(parsing: "8s")

        // The harness and the verifier are this same command, re-executed by the supervisor.
        @Flag(help: .hidden) var child = false
        @Flag(help: .hidden) var verify = false
        @Option(name: .customLong("cgroup-path"), help: .hidden) var cgroupPath: String?
        @Option(name: .customLong("synthetic-root"), help: .hidden) var syntheticRoot: String?
        @Option(help: .hidden) var expectations: String?
        @Option(help: .hidden) var baseline: Int?

        func validate() throws {
            guard controllers >= 10 else { throw ValidationError("--controllers must be at least 10.") }
            guard rate > 0 else { throw ValidationError("--rate must be positive.") }
            if let db, db.isEmpty { throw ValidationError("--db needs a file path.") }
            if ballast == .stressNG && SoakBallast.stressNGPath == nil {
                throw ValidationError(
                    "--ballast stress-ng: stress-ng is not installed (apt-get install stress-ng), or use --ballast worker."
                )
            }
        }

        func run() async throws {
            if child {
                return try await SoakHarness.runHarnessProcess(
                    databasePath: db ?? "state.sqlite", controllers: controllers,
                    duration: duration.seconds, seed: seed,
                    expectationsPath: expectations ?? "expectations.json",
                    relaunchInterval: relaunchInterval.seconds, operationsPerSecond: rate,
                    cgroupPath: cgroupPath, syntheticRoot: syntheticRoot
                )
            }
            if verify {
                return await SoakHarness.runVerifyingProcess(
                    databasePath: db, expectationsPath: expectations, controllers: controllers, seed: seed,
                    baseline: baseline
                )
            }
            try runSupervisor()
        }

        private func runSupervisor() throws {
            // What would fail at the end of the run fails before it instead, with the reason.
            if let db {
                // Opens (creating and migrating a new file) as the harness will: a file that is
                // not a usable database exits 3 with the store's own message.
                _ = try StateStore(path: db, options: .init(backgroundCheck: .off))
            }
            if let report { try Self.requireWritable(report) }
            let mode = pressure ?? (SoakCgroup.writableParent() != nil ? .cgroup : .synthetic)
            let work = NSTemporaryDirectory() + "statectl-soak-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let databasePath = db ?? work + "/state.sqlite"
            let plan = SoakSupervisor.Plan(
                mode: mode, duration: duration.seconds, controllers: controllers, seed: seed,
                limit: UInt64(memoryLimit.bytes), databasePath: databasePath, workDirectory: work,
                operationsPerSecond: rate, relaunchInterval: relaunchInterval.seconds,
                ballast: ballast.soakBallast
                    ?? (SoakSupervisor.worker == nil && SoakBallast.stressNGPath != nil ? .stressNG : .worker)
            )
            let supervisor = SoakSupervisor(plan: plan)
            if !quiet && isatty(STDERR_FILENO) == 1 {
                supervisor.progress = { progress in Output.standardError("\r\u{1B}[K" + (progress?.line ?? "")) }
            }
            let run = try supervisor.execute()
            var summary = SoakSummary(
                plan: plan, run: run, database: db ?? databasePath, databaseKept: db != nil,
                cgroupVersion: run.cgroupVersion,
                reportPath: report)
            var reportFailed = false
            if let report {
                do {
                    try SoakReport.svg(summary: summary, run: run).write(
                        toFile: report, atomically: true, encoding: .utf8)
                } catch {
                    // The folder changed during the run: the summary does not list a report that is not there.
                    Output.error(
                        "statectl: Cannot write the report \(Format.word(report)): \(error.localizedDescription)")
                    summary.reportPath = nil
                    reportFailed = true
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
                Output.error(
                    String(
                        format:
                            "statectl: soak interrupted after %.0f s; the summary covers that part, the fresh-process check did not run",
                        run.end - run.start))
                throw ExitCode(130)
            }
            if !summary.ok || reportFailed { throw ExitCode(ExitStatus.problemFound.rawValue) }
        }

        /// Throws unless `path` can be written: an existing file writable, or a new one's folder.
        static func requireWritable(_ path: String) throws {
            let folder = (path as NSString).deletingLastPathComponent
            var info = stat()
            let exists = stat(path, &info) == 0
            if exists && (info.st_mode & S_IFMT) == S_IFDIR {
                throw CLIError(
                    message:
                        "Cannot write the report \(Format.word(path)): it is a folder; give --report a file path. Nothing was run."
                )
            }
            let target = exists ? path : (folder.isEmpty ? "." : folder)
            if access(target, W_OK | (exists ? 0 : X_OK)) != 0 {
                throw CLIError(
                    message:
                        "Cannot write the report \(Format.word(path)): \(String(cString: strerror(errno))); give --report a path in a writable folder. Nothing was run."
                )
            }
        }
    }
}

/// `soak --ballast`: what makes the waves in cgroup mode, or `auto` to choose.
enum BallastChoice: String, ExpressibleByArgument, CaseIterable {
    case auto
    case worker
    case stressNG = "stress-ng"

    /// The ballast chosen, or `nil` for `auto`.
    var soakBallast: SoakBallast? { SoakBallast(rawValue: rawValue) }
}
