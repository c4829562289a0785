import Foundation
import Glibc
import StateStore
import Synchronization

/// Set by SIGINT or SIGTERM in the supervisor: stop the harness gracefully, clean up, report.
let soakInterrupted = Atomic<Int32>(0)

/// The supervisor: the `statectl soak` process the user started.
///
/// Why two processes: the pressure must be real on the process that runs the controllers,
/// so that process (the *harness*, `statectl soak --child`) runs inside a memory cgroup of its
/// own with `--memory-limit`, next to a *ballast* (`statestore-worker ballast`) whose memory the
/// supervisor raises and lowers in waves until the cgroup's available memory crosses the
/// monitor's warning and critical thresholds, again and again. The supervisor stays outside
/// the cgroup, so it can always clean up: it reads the harness's JSON lines (``SoakMessage``),
/// shows progress, steers the ballast from the cgroup's numbers (and gives memory back the
/// moment the harness reports critical, or when headroom nearly runs out), removes the cgroup
/// on every exit path (also on SIGINT/SIGTERM), and finally starts a fresh process
/// (`--verify`) that only reads the database back: a real restart, not a simulated one.
///
/// The OOM killer is kept off the harness: the harness sets its `oom_score_adj` to -900 and
/// the ballast to 1000, so if the cgroup ever runs out, the ballast dies (and is restarted);
/// the `oom_kill` counter of the cgroup and the harness's exit status are reported.
///
/// With `--ballast stress-ng`, the ballast is a set of `stress-ng --vm 1 --vm-bytes 16M
/// --vm-keep --vm-hang 0` processes, 16 MiB each, started (each joins the cgroup before it
/// execs) and stopped one at a time; stress-ng cannot confirm its allocation, so the loop
/// waits 250 ms after each start before it trusts the cgroup's numbers again.
package final class SoakSupervisor {
    /// What to run: the options of `statectl soak`, resolved.
    package struct Plan: Sendable {
        package var mode: SoakPressure
        /// Seconds of traffic.
        package var duration: Double
        package var controllers: Int
        package var seed: UInt64
        /// Bytes: the cgroup's limit, or the synthetic total.
        package var limit: UInt64
        package var databasePath: String
        /// A folder of the run's own (the expectations file, the synthetic `root:` tree).
        package var workDirectory: String
        package var operationsPerSecond: Double
        /// Seconds between simulated relaunches.
        package var relaunchInterval: Double
        package var ballast: SoakBallast

        package init(
            mode: SoakPressure, duration: Double, controllers: Int, seed: UInt64, limit: UInt64,
            databasePath: String, workDirectory: String, operationsPerSecond: Double,
            relaunchInterval: Double, ballast: SoakBallast = .worker
        ) {
            self.mode = mode
            self.duration = duration
            self.controllers = controllers
            self.seed = seed
            self.limit = limit
            self.databasePath = databasePath
            self.workDirectory = workDirectory
            self.operationsPerSecond = operationsPerSecond
            self.relaunchInterval = relaunchInterval
            self.ballast = ballast
        }
    }

    package let plan: Plan
    /// Called about twice a second while the soak runs, with the latest numbers, and once with
    /// `nil` when the traffic has ended; `nil` (the default) shows no progress.
    package var progress: ((SoakProgress?) -> Void)?
    private(set) var run = SoakRun()
    private var cgroup: SoakCgroup?
    private var synthetic: SoakSyntheticRoot?
    private var harness: SoakChild?
    private var ballast: SoakChild?
    private var ballastOutputFD: Int32 = -1
    /// The ballast size last asked for, and whether the ballast has confirmed it ("ok N").
    private var ballastMiB = 0
    private var ballastSettled = true
    private var lastSteer = 0.0
    private var ballastBuffer = Data()
    /// `--ballast stress-ng`: one process per chunk, and when the last start may have settled.
    private var stressChunks: [SoakChild] = []
    private var stressSettleUntil = 0.0
    static let stressChunkMiB = 16
    private var buffer = Data()

    /// The wave: phases of the target available memory (fraction of the limit).
    private struct Phase {
        var name: String
        var target: Double
        var seconds: Double
    }
    private let phases = [
        Phase(name: "normal", target: 0.50, seconds: 7),
        Phase(name: "warning", target: 0.20, seconds: 6),
        Phase(name: "critical", target: 0.08, seconds: 5),
    ]
    private var phaseIndex = 0
    /// The target the wave eases from (the first phase starts where it is, not from critical).
    private var previousTarget = 0.50
    private var phaseStart = 0.0
    private var criticalSeenAt: Double?
    private var lastLevel = 0

    package init(plan: Plan) {
        self.plan = plan
    }

    var expectationsPath: String { plan.workDirectory + "/expectations.json" }

    /// The path of this executable, to start the harness and the verifier.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// `statestore-worker`, next to `statectl` (both are products of this package).
    package static var worker: String? {
        let path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(
            "statestore-worker"
        ).path
        return access(path, X_OK) == 0 ? path : nil
    }

    // MARK: Run

    /// Runs the soak: the cgroup or the synthetic tree, the harness, the ballast, the waves, the
    /// verifying process; everything it made is removed before it returns or throws
    /// (a ``SoakError`` when the cgroup cannot be made or a process cannot be started).
    package func execute() throws -> SoakRun {
        installSignalHandlers()
        defer { cleanUp() }
        switch plan.mode {
        case .cgroup:
            cgroup = try SoakCgroup.create(limit: plan.limit)
            run.cgroupPath = cgroup?.path
            run.cgroupVersion = cgroup?.version
            guard plan.ballast == .stressNG || Self.worker != nil else {
                throw SoakError(
                    message:
                        "statestore-worker is not next to statectl; build it with `swift build --product statestore-worker`"
                )
            }
        case .synthetic:
            synthetic = try SoakSyntheticRoot(directory: plan.workDirectory + "/root", total: plan.limit)
        case .none:
            break
        }
        run.start = SoakValues.now()
        phaseStart = run.start
        run.phases.append((run.start, phases[0].name))
        try startHarness()
        if cgroup != nil { try startBallast() }
        supervise()
        run.end = SoakValues.now()
        stopBallast()
        run.oomKills = cgroup?.oomKills ?? 0
        progress?(nil)
        if soakInterrupted.load(ordering: .relaxed) == 0, run.final != nil {
            verify()
        }
        run.interrupted = soakInterrupted.load(ordering: .relaxed) != 0
        return run
    }

    private func installSignalHandlers() {
        for number in [SIGINT, SIGTERM] {
            signal(number) { signal in soakInterrupted.store(signal, ordering: .relaxed) }
        }
        // The ballast's stdin may close under us (it was OOM-killed): not a reason to die.
        signal(SIGPIPE, SIG_IGN)
    }

    private func harnessArguments() -> [String] {
        var arguments = [
            "soak", "--child",
            "--db", plan.databasePath,
            "--controllers", String(plan.controllers),
            "--duration", "\(plan.duration)s",
            "--seed", String(plan.seed),
            "--memory-limit", String(plan.limit),
            "--pressure", plan.mode.rawValue,
            "--expectations", expectationsPath,
            "--rate", String(plan.operationsPerSecond),
            "--relaunch-interval", "\(plan.relaunchInterval)s",
        ]
        if let cgroup { arguments += ["--cgroup-path", cgroup.path] }
        if let synthetic { arguments += ["--synthetic-root", synthetic.root] }
        return arguments
    }

    private func startHarness() throws {
        harness = try SoakChild.spawn(Self.executable, harnessArguments(), stdin: .null, stdout: .pipe)
        // The harness joins the cgroup itself, first thing (see `SoakHarness.runHarnessProcess`); nothing to do here.
    }

    private func startBallast() throws {
        guard plan.ballast == .worker, let worker = Self.worker, let cgroup else { return }
        let process = try SoakChild.spawn(worker, ["ballast"], stdin: .pipe, stdout: .pipe)
        // It allocates nothing until told, so joining right after the start is in time.
        do {
            try cgroup.add(pid: process.pid)
        } catch {
            kill(process.pid, SIGKILL)
            process.waitUntilExit()
            throw error
        }
        ballast = process
        ballastOutputFD = process.output
        ballastMiB = 0
        ballastSettled = true
    }

    private func setBallast(_ megabytes: Int) {
        if plan.ballast == .stressNG { return setStressBallast(megabytes) }
        guard let ballast, megabytes != ballastMiB else { return }
        ballastMiB = megabytes
        ballastSettled = false
        run.ballastPeakMiB = max(run.ballastPeakMiB, megabytes)
        ballast.send("\(megabytes)\n")
    }

    /// Grows by at most one stress-ng process (16 MiB) per call; shrinks at once.
    private func setStressBallast(_ megabytes: Int) {
        guard let cgroup else { return }
        stressChunks.removeAll { !$0.isRunning }
        let chunk = Self.stressChunkMiB
        let current = stressChunks.count
        let wanted = megabytes < current * chunk ? megabytes / chunk : (megabytes + chunk - 1) / chunk
        while stressChunks.count > wanted {
            let chunk = stressChunks.removeLast()
            Self.killTree(chunk.pid)
            chunk.waitUntilExit()
        }
        if stressChunks.count < wanted {
            // Join the cgroup first, then become stress-ng, so its forked worker is charged there too.
            let script =
                "echo $$ > '\(cgroup.path)/cgroup.procs' && exec stress-ng --vm 1 --vm-bytes \(chunk)M --vm-keep --vm-hang 0 --timeout 0 --quiet"
            if let process = try? SoakChild.spawn(
                "/bin/sh", ["-c", script], stdin: .null, stdout: .null, stderr: .null)
            {
                stressChunks.append(process)
                stressSettleUntil = SoakValues.now() + 0.25
            }
        }
        ballastMiB = stressChunks.count * chunk
        run.ballastPeakMiB = max(run.ballastPeakMiB, ballastMiB)
    }

    /// SIGKILLs `pid` and all its descendants (stress-ng forks a worker that forks the process
    /// doing the work; any of them left behind would keep its memory charged to the cgroup).
    static func killTree(_ pid: Int32) {
        var childrenOf: [Int32: [Int32]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let candidate = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, let parent = Int32(fields[1]) { childrenOf[parent, default: []].append(candidate) }
        }
        var queue = [pid]
        while let next = queue.popLast() {
            kill(next, SIGKILL)
            queue += childrenOf[next] ?? []
        }
    }

    private func stopBallast() {
        for process in stressChunks where process.isRunning { Self.killTree(process.pid) }
        for process in stressChunks { process.waitUntilExit() }
        stressChunks = []
        guard let ballast else { return }
        ballast.closeInput()
        for _ in 0..<100 where ballast.isRunning { usleep(10_000) }
        if ballast.isRunning { kill(ballast.pid, SIGKILL) }
        ballast.waitUntilExit()
        ballastOutputFD = -1
        self.ballast = nil
    }

    // MARK: Supervision loop

    private func supervise() {
        guard let harness, harness.output >= 0 else { return }
        let fd = harness.output
        var stopSentAt: Double?
        var lastProgress = 0.0
        var open = true
        while open {
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            if ballastOutputFD >= 0 {
                descriptors.append(pollfd(fd: ballastOutputFD, events: Int16(POLLIN), revents: 0))
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            if descriptors[0].revents != 0 { open = readHarness(fd) }
            if descriptors.count > 1, descriptors[1].revents != 0 { readBallast() }
            let now = SoakValues.now()
            if soakInterrupted.load(ordering: .relaxed) != 0 {
                if stopSentAt == nil {
                    stopSentAt = now
                    kill(harness.pid, SIGTERM)
                    setBallast(0)
                } else if let sent = stopSentAt, now - sent > 15 {
                    kill(harness.pid, SIGKILL)
                }
            } else {
                drivePressure(now: now)
            }
            if progress != nil && now - lastProgress >= 0.5 {
                lastProgress = now
                showProgress(now: now)
            }
        }
        harness.waitUntilExit()
        harness.closeOutput()
        run.harnessSignal = harness.terminationSignal
        run.harnessExit = harness.exitStatus
    }

    /// Reads what the harness wrote; `false` at end of file.
    private func readHarness(_ fd: Int32) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &chunk, chunk.count)
        if count < 0 && errno == EINTR { return true }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex...newline)
            guard let message = SoakMessage.decode(Substring(line)) else { continue }
            if message.type == "event", let level = message.level, level == MemoryPressureLevel.critical.rawValue {
                criticalSeenAt = criticalSeenAt ?? SoakValues.now()
            }
            if message.type == "sample", let level = message.level { lastLevel = level }
            run.take(message)
        }
        return true
    }

    private func readBallast() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(ballastOutputFD, &chunk, chunk.count)
        if count > 0 {
            ballastBuffer.append(contentsOf: chunk[0..<count])
            while let newline = ballastBuffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: ballastBuffer[ballastBuffer.startIndex..<newline], as: UTF8.self)
                ballastBuffer.removeSubrange(ballastBuffer.startIndex...newline)
                if line == "ok \(ballastMiB)" { ballastSettled = true }
            }
        }
        if count <= 0 {
            // The ballast died (an OOM kill picks it first); start a new one.
            ballastOutputFD = -1
            ballast?.waitUntilExit()
            ballast = nil
            if soakInterrupted.load(ordering: .relaxed) == 0 && harness?.isRunning == true {
                run.ballastRestarts += 1
                try? startBallast()
            }
        }
    }

    /// Advances the wave and steers the ballast (cgroup) or rewrites meminfo (synthetic).
    private func drivePressure(now: Double) {
        guard plan.mode != .none else { return }
        let phase = phases[phaseIndex]
        let elapsed = now - phaseStart
        var advance = elapsed >= phase.seconds
        if phase.name == "critical" {
            // Give memory back soon after the harness reports critical; wait longer if it has not yet.
            if let seen = criticalSeenAt { advance = now - seen >= 1.5 } else { advance = elapsed >= 3 * phase.seconds }
        }
        if advance {
            previousTarget = phases[phaseIndex].target
            phaseIndex = (phaseIndex + 1) % phases.count
            phaseStart = now
            criticalSeenAt = nil
            run.phases.append((now, phases[phaseIndex].name))
        }
        let target = phases[phaseIndex].target
        if let synthetic {
            // A wave: ease from the previous phase's level over 1.5 s.
            let previous = previousTarget
            let fraction = min(1, (now - phaseStart) / 1.5)
            let level = previous + (target - previous) * fraction
            synthetic.write(available: UInt64(level * Double(plan.limit)))
            if now - (run.observations.last?.t ?? 0) >= 0.1 { run.observations.append((now, level * 100)) }
            return
        }
        // Steer at most every 100 ms, and only from numbers that include the last step: the
        // ballast must have touched what it was asked for, or the loop would overshoot.
        guard now - lastSteer >= 0.1 else { return }
        guard let cgroup, let memory = cgroup.read(), let available = memory.available else { return }
        run.observations.append((now, Double(available) / Double(plan.limit) * 100))
        let settled = plan.ballast == .stressNG ? now >= stressSettleUntil : ballastSettled
        if !settled && Double(available) >= 0.04 * Double(plan.limit) { return }
        lastSteer = now
        let mib = Double(1 << 20)
        let limit = Double(plan.limit)
        let difference = (Double(available) - target * limit) / mib
        var next = ballastMiB
        if Double(available) < 0.04 * limit {
            next = ballastMiB - 24  // nearly out of memory: give back at once
        } else if difference > 1 {
            next = ballastMiB + min(Int(difference), 4)  // rise as a wave (≤ 40 MiB/s), not a wall
        } else if difference < -1 {
            next = ballastMiB + Int(difference.rounded(.down))
        }
        setBallast(max(0, min(next, Int(limit / mib))))
    }

    private func showProgress(now: Double) {
        let elapsed = now - run.start
        let sample = run.samples.last
        let transitions = Double(sample?.transitions ?? 0)
        let rate = elapsed > 0 ? transitions / elapsed : 0
        progress?(
            SoakProgress(
                elapsed: elapsed, duration: plan.duration, transitionsPerSecond: rate,
                level: ["normal", "warning", "critical"][min(max(lastLevel, 0), 2)],
                rss: sample?.rss ?? 0, cache: sample?.cache ?? 0, available: sample?.available ?? 0,
                warnings: run.warnings.count, relaunches: run.relaunches.count
            ))
    }

    // MARK: Verification and cleanup

    /// Starts a fresh process on the database that only verifies (a real restart).
    private func verify() {
        guard let final = run.final else { return }
        let arguments = [
            "soak", "--verify", "--db", plan.databasePath, "--controllers", String(plan.controllers),
            "--seed", String(plan.seed), "--expectations", expectationsPath,
            "--baseline", String(final.finalBaseline),
        ]
        let process: SoakChild
        do {
            process = try SoakChild.spawn(Self.executable, arguments, stdin: .null, stdout: .pipe)
        } catch {
            run.errors.append("cannot start the verifying process: \(error)")
            return
        }
        let data = process.readToEnd()
        process.waitUntilExit()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            if let message = SoakMessage.decode(line) { run.take(message) }
        }
        if run.verification == nil {
            run.errors.append(
                "the verifying process reported nothing (exit \(process.exitStatus.map(String.init) ?? "by signal \(process.terminationSignal ?? 0)"))"
            )
        }
    }

    private func cleanUp() {
        if let harness, harness.isRunning {
            kill(harness.pid, SIGKILL)
            harness.waitUntilExit()
        }
        stopBallast()
        if let cgroup, !cgroup.remove() {
            run.errors.append("could not remove the cgroup \(cgroup.path)")
        }
        cgroup = nil
    }
}

/// The numbers of the progress line `statectl soak` shows on a terminal.
package struct SoakProgress: Sendable {
    /// Seconds since the traffic started, and of the whole run.
    package var elapsed: Double
    package var duration: Double
    package var transitionsPerSecond: Double
    /// The harness's monitor level: `normal`, `warning` or `critical`.
    package var level: String
    /// The harness's last sample: RSS, cache bytes held, effective available memory.
    package var rss: UInt64
    package var cache: Int
    package var available: UInt64
    package var warnings: Int
    package var relaunches: Int
}
