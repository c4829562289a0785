import Foundation
import Glibc
import StateStore
import Testing

/// `statectl soak` end to end: the built binary runs a short soak and the invariants are read
/// from its `--json` summary. The cgroup test needs root and a writable memory cgroup; the
/// synthetic one runs anywhere.
@Suite("statectl soak", .serialized)
struct SoakTests {
    /// Whether this process may create a child memory cgroup: root with a v1 memory controller,
    /// or root in the v2 root cgroup (the soak arranges the rest). Anywhere else on v2 the
    /// soak must move itself into a leaf, which it refuses while the test runner shares its
    /// cgroup; that case, and delegated unprivileged v2, run in the VM lane (scripts/vm-cgroup2).
    static let cgroupWritable: Bool = {
        guard geteuid() == 0 else { return false }
        let membership = CgroupMembership.parse(
            (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? "")
        let mounts = MountInfo.parse((try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? "")
        if membership.unifiedPath == "/", let mount = mounts.cgroup2, mount.root == "/",
            access(mount.mountPoint + "/cgroup.type", F_OK) != 0
        {
            let controllers =
                (try? String(contentsOfFile: mount.mountPoint + "/cgroup.controllers", encoding: .utf8)) ?? ""
            if controllers.split(whereSeparator: \.isWhitespace).contains("memory") { return true }
        }
        guard let own = try? CgroupMemory.discover(), own.version == .v1 else { return false }
        return access(own.path, W_OK) == 0
    }()

    /// Whether `unshare -n` works here (root, or user namespaces allowed).
    static let unshareWorks: Bool = {
        let candidates: [String] = ["/usr/bin/unshare", "/bin/unshare"]
        guard let unshare = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return false
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: unshare)
        process.arguments = ["-n", "true"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    static var workerBuilt: Bool {
        FileManager.default.isExecutableFile(
            atPath: URL(fileURLWithPath: CLI.executable).deletingLastPathComponent().appendingPathComponent(
                "statestore-worker"
            ).path)
    }

    /// Parses the summary and checks what every soak must show.
    private func summary(_ result: CLIResult) throws -> [String: Any] {
        let data = Data(result.stdout.utf8)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(result)")
        #expect(document["schema"] as? Int == 1)
        #expect(document["kind"] as? String == "soak")
        let invariants = try #require(document["invariants"] as? [[String: Any]])
        let names = Set(invariants.compactMap { $0["name"] as? String })
        #expect(
            names == [
                "saves_restore_intact", "no_lifecycle_violations", "warnings_delivered", "critical_empties_caches",
                "critical_rss_falls", "crossings_detected", "live_controllers_return_to_baseline",
                "no_rss_upward_trend",
                "integrity_ok", "never_oom_killed",
            ])
        for invariant in invariants {
            #expect(invariant["ok"] as? Bool == true, "\(invariant["name"] ?? "?"): \(invariant["detail"] ?? "")")
        }
        #expect(document["ok"] as? Bool == true, "\(result)")
        #expect(result.status == 0, "\(result.stderr)")
        let relaunches = try #require(document["relaunches"] as? [String: Any])
        #expect(relaunches["count"] as? Int ?? 0 >= 1)
        #expect(relaunches["lost"] as? Int == 0)
        #expect(relaunches["corrupt"] as? Int == 0)
        #expect(relaunches["leaked_controllers"] as? Int == 0)
        #expect(document["violations"] as? Int == 0)
        let verification = try #require(document["final_verification"] as? [String: Any])
        #expect(verification["lost"] as? Int == 0)
        #expect(verification["corrupt"] as? Int == 0)
        #expect(verification["integrity"] as? [String] == ["ok"])
        #expect(verification["verified"] as? Int ?? 0 > 0)
        return document
    }

    private func warnings(_ document: [String: Any]) throws -> [String: Any] {
        let warnings = try #require(document["warnings"] as? [String: Any])
        #expect(warnings["warning"] as? Int ?? 0 >= 1, "no warning delivered")
        #expect(warnings["critical"] as? Int ?? 0 >= 1, "no critical warning delivered")
        #expect(warnings["undelivered"] as? Int == 0)
        let delay = try #require(warnings["delay_ms"] as? [String: Any])
        #expect(delay["max"] is Double)
        let crossings = try #require(document["crossings"] as? [String: [String: Any]])
        #expect(crossings["critical"]?["observed"] as? Int ?? 0 >= 1)
        #expect(crossings["critical"]?["missed"] as? Int == 0)
        #expect(crossings["warning"]?["missed"] as? Int == 0)
        return warnings
    }

    @Test(
        .enabled(if: cgroupWritable, "needs root and a writable memory cgroup (v1, or v2 with memory delegated)"),
        .enabled(if: workerBuilt, "needs statestore-worker built beside statectl"),
        .hangGuard(minutes: 10))
    func shortSoakUnderRealCgroupPressure() throws {
        let folder = TemporaryFolder("soak-cgroup")
        let report = folder.file("soak.svg")
        let result = try CLI.run([
            "soak", "--pressure", "cgroup", "--duration", "25s", "--controllers", "300",
            "--memory-limit", "192MiB", "--seed", "7", "--relaunch-interval", "6s",
            "--json", "--report", report,
        ])
        let document = try summary(result)
        #expect(document["pressure"] as? String == "cgroup")
        #expect(document["harness_oom_killed"] as? Bool == false)
        _ = try warnings(document)
        let svg = try String(contentsOfFile: report, encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>") && svg.contains("polyline"))
        // Nothing left behind: the cgroup is gone (other soaks may be running beside this one).
        let cgroup = try #require(document["cgroup"] as? String)
        #expect(cgroup.contains("/statestore-soak-"))
        #expect(document["cgroup_removed"] as? Bool == true)
        #expect(!FileManager.default.fileExists(atPath: cgroup), "left \(cgroup) behind")
    }

    @Test(.hangGuard(minutes: 10))
    func shortSoakUnderSyntheticPressure() throws {
        let folder = TemporaryFolder("soak-synthetic")
        let database = folder.file("soak.sqlite")
        // 40 s: the RSS trend is fitted over the second half, and in a shorter run that half is
        // still warm-up (on a loaded machine a 22 s run drifted past the 8 MiB budget 2 times in 8).
        let result = try CLI.run([
            "soak", "--pressure", "synthetic", "--duration", "40s", "--controllers", "150",
            "--seed", "3", "--relaunch-interval", "6s", "--db", database, "--json",
        ])
        let document = try summary(result)
        #expect(document["pressure"] as? String == "synthetic")
        #expect(document["database"] as? String == database)
        _ = try warnings(document)
        // The database is kept when named, and `check` agrees it is healthy.
        let check = try CLI.run(["check", "--db", database])
        #expect(check.status == 0, "\(check)")
    }

    /// Without a loopback interface (a new network namespace), the soak still starts its
    /// harness and verifier and finishes: nothing in it needs a socket. (Foundation's `Process`
    /// did, and hung forever after "Could not create wakeup socket pair for CFSocket!!!".)
    @Test(.enabled(if: unshareWorks, "needs unshare -n (root or user namespaces)"), .hangGuard(minutes: 10))
    func soakRunsWithoutLoopback() throws {
        let started = Date()
        let result = try CLI.run(
            [
                "-c",
                "exec timeout -k 5 60 unshare -n \"$0\" soak --duration 4s --pressure synthetic --controllers 50 --json",
                CLI.executable,
            ], executable: "/bin/sh")
        #expect(!result.stderr.contains("CFSocket"), "\(result)")
        #expect(result.status != 124 && result.status != 137, "timed out: \(result)")
        #expect(Date().timeIntervalSince(started) < 50)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        #expect(document["interrupted"] as? Bool == false)
        let verification = try #require(document["final_verification"] as? [String: Any], "\(result)")
        #expect(verification["lost"] as? Int == 0)
        #expect(verification["verified"] as? Int ?? 0 > 0, "the fresh process verified nothing: \(result)")
    }

    /// And SIGTERM still stops it promptly there (exit 130, the summary covers the part run).
    @Test(.enabled(if: unshareWorks, "needs unshare -n (root or user namespaces)"), .hangGuard(minutes: 10))
    func soakWithoutLoopbackHearsSigterm() throws {
        let started = Date()
        let result = try CLI.run(
            [
                "-c",
                "exec timeout --preserve-status -k 20 4 unshare -n \"$0\" soak --duration 60s --pressure synthetic --controllers 50 --json",
                CLI.executable,
            ], executable: "/bin/sh")
        #expect(result.status == 130, "\(result)")
        #expect(Date().timeIntervalSince(started) < 22, "took \(Date().timeIntervalSince(started)) s")
        #expect(!result.stderr.contains("CFSocket"), "\(result)")
        #expect(result.stdout.contains(#""interrupted": true"#), "\(result)")
    }

    /// Unprivileged, outside any delegated subtree: the soak cannot make a cgroup and says why,
    /// naming each hierarchy it looked at, and what would work instead.
    @Test(
        .enabled(if: CLI.canRunAsNobody, "needs root, /usr/bin/setpriv and a statectl that nobody can run"),
        .hangGuard(minutes: 10))
    func cgroupSoakWithoutPrivilegeNamesWhatIsMissing() throws {
        let result = try CLI.run(
            [
                "-c",
                "cd / && exec /usr/bin/setpriv --reuid 65534 --regid 65534 --clear-groups \"$0\" soak --pressure cgroup --duration 5s",
                CLI.executable,
            ], executable: "/bin/sh")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("statectl: no memory cgroup to run the soak in: "), "\(result)")
        let unified = result.stderr.contains("cgroup v2") || result.stderr.contains("no cgroup v2 hierarchy is mounted")
        let legacy =
            result.stderr.contains("cgroup v1 memory needs root")
            || result.stderr.contains("no cgroup v1 memory hierarchy")
        #expect(unified && legacy, "\(result)")
        #expect(result.stderr.contains("Delegate=yes") && result.stderr.contains("--pressure synthetic"), "\(result)")
    }

    /// An interrupted run's text summary ends with what held for the part that ran, or with the
    /// names of what broke: never with an empty list.
    @Test(.hangGuard(minutes: 10))
    func interruptedTextSummaryEndsWithWhatHeld() throws {
        let result = try CLI.run(
            [
                "-c",
                "exec timeout --preserve-status -k 20 4 \"$0\" soak --duration 60s --pressure synthetic --controllers 50",
                CLI.executable,
            ], executable: "/bin/sh")
        #expect(result.status == 130, "\(result)")
        let last = try #require(result.stdout.split(separator: "\n").last.map(String.init), "\(result)")
        let broken = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  BROKEN ") }
        if broken.isEmpty {
            #expect(last == "Interrupted: the invariants held for the part that ran.", "\(result)")
        } else {
            #expect(last.hasPrefix("Invariants broke: ") && last.count > "Invariants broke: ".count, "\(result)")
        }
    }

    /// A --db that is not a database, or a --report that cannot be written, fails before the run
    /// (not after a minute of it) with the reason, and the file named is left as it was.
    @Test func whatWouldFailAtTheEndFailsBeforeTheRun() throws {
        let folder = TemporaryFolder("soak-bad-paths")
        let garbage = folder.file("notes.txt")
        let text = String(repeating: "not a database, a shopping list\n", count: 200)
        try text.write(toFile: garbage, atomically: true, encoding: .utf8)
        let started = Date()
        let notADatabase = try CLI.run(["soak", "--duration", "60s", "--pressure", "synthetic", "--db", garbage])
        #expect(notADatabase.status == 3, "\(notADatabase)")
        #expect(notADatabase.stderr.hasPrefix("statectl: ") && notADatabase.stderr.contains(garbage), "\(notADatabase)")
        #expect(try String(contentsOfFile: garbage, encoding: .utf8) == text)
        for report in [folder.file("missing/timeline.svg"), folder.path] {
            let unwritable = try CLI.run(["soak", "--duration", "60s", "--pressure", "synthetic", "--report", report])
            #expect(unwritable.status == 1, "\(unwritable)")
            #expect(
                unwritable.stderr.hasPrefix("statectl: Cannot write the report") && unwritable.stdout.isEmpty,
                "\(unwritable)")
        }
        #expect(Date().timeIntervalSince(started) < 30, "a refused soak ran: \(Date().timeIntervalSince(started)) s")
    }

    @Test func badArgumentsAreUsageErrors() throws {
        #expect(try CLI.run(["soak", "--duration", "soon"]).status == 2)
        #expect(try CLI.run(["soak", "--memory-limit", "1MiB"]).status == 2)
        #expect(try CLI.run(["soak", "--pressure", "magic"]).status == 2)
        #expect(try CLI.run(["soak", "--ballast", "sandbags"]).status == 2)
        #expect(try CLI.run(["soak", "--controllers", "3"]).status == 2)
    }
}
