import Foundation
import Glibc
import StateStore

// The two processes the supervisor starts by re-running its own executable: `statectl soak
// --child` (the harness) and `statectl soak --verify` (the verifier). statectl's `soak` command
// parses the options ``SoakSupervisor`` passes them and calls these.
extension SoakHarness {
    /// The harness process: joins the cgroup (`cgroupPath`) or reads the scripted `root:` tree
    /// (`syntheticRoot`), protects itself from the OOM killer, runs the traffic and reports it
    /// on stdout as ``SoakMessage`` lines.
    package static func runHarnessProcess(
        databasePath: String, controllers: Int, duration: Double, seed: UInt64, expectationsPath: String,
        relaunchInterval: Double, operationsPerSecond: Double, cgroupPath: String?, syntheticRoot: String?
    ) async throws {
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
        let harness = try SoakHarness(
            configuration: .init(
                databasePath: databasePath, controllers: controllers, duration: duration, seed: seed,
                monitorConfiguration: monitorConfiguration, expectationsPath: expectationsPath,
                relaunchInterval: relaunchInterval, operationsPerSecond: operationsPerSecond
            ))
        await harness.run()
    }

    /// The verifying process: a fresh process on the database that reads every recorded save
    /// back, rebuilds the hierarchy, checks the live count against `baseline` and the database's
    /// integrity. Prints one `verify` line (``SoakVerification``), also when it cannot start.
    package static func runVerifyingProcess(
        databasePath: String?, expectationsPath: String?, controllers: Int, seed: UInt64, baseline: Int?
    ) {
        var verification = SoakVerification()
        defer {
            var message = SoakMessage(type: "verify")
            message.verification = verification
            soakWriteLine(message.line)
        }
        guard let db = databasePath, let expectations = expectationsPath else {
            verification.errors.append("--verify needs --db and --expectations")
            return
        }
        let recorded: [String: String]
        do {
            recorded = try JSONDecoder().decode(
                [String: String].self, from: Data(contentsOf: URL(fileURLWithPath: expectations)))
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
            harness = try SoakHarness(
                configuration: .init(
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
