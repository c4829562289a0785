import Foundation
import Testing

/// `statectl monitor`, run as the built binary on fixture trees standing in for `/`.
@Suite(.hangGuard(minutes: 10)) struct CLIMonitorTests {
    /// A root with the prometheus/procfs `meminfo` and `pressure/memory` (real files), and
    /// no cgroup files.
    static func hostTree() throws -> TemporaryFolder {
        let folder = TemporaryFolder("monitor-host")
        try MemoryFixtures.write(try MemoryFixtures.text("procfs/meminfo"), to: "/proc/meminfo", in: folder.path)
        try MemoryFixtures.write(
            try MemoryFixtures.text("procfs/pressure/memory"), to: "/proc/pressure/memory", in: folder.path)
        return folder
    }

    /// The host tree plus a cgroup v2 hierarchy: the process in `app.slice/demo.service`,
    /// limited to 1 GiB, 900 MiB charged of which 100 MiB inactive file cache, with its own
    /// `memory.pressure`; `app.slice` is unlimited.
    static func cgroupTree() throws -> TemporaryFolder {
        let folder = try hostTree()
        func write(_ text: String, _ path: String) throws { try MemoryFixtures.write(text, to: path, in: folder.path) }
        try write("0::/app.slice/demo.service\n", "/proc/self/cgroup")
        try write(
            """
            22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
            30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot

            """, "/proc/self/mountinfo")
        try write("anon 1\n", "/sys/fs/cgroup/memory.stat")
        try write("max\n", "/sys/fs/cgroup/app.slice/memory.max")
        try write("max\n", "/sys/fs/cgroup/app.slice/memory.high")
        try write("2147483648\n", "/sys/fs/cgroup/app.slice/memory.current")
        try write("anon 1\ninactive_file 0\n", "/sys/fs/cgroup/app.slice/memory.stat")
        let service = "/sys/fs/cgroup/app.slice/demo.service"
        try write("1073741824\n", service + "/memory.max")
        try write("max\n", service + "/memory.high")
        try write("943718400\n", service + "/memory.current")
        try write("anon 838860800\nfile 104857600\nactive_file 0\ninactive_file 104857600\n", service + "/memory.stat")
        try write(
            """
            some avg10=4.00 avg60=2.50 avg300=1.00 total=123456
            full avg10=1.00 avg60=0.50 avg300=0.25 total=23456

            """, service + "/memory.pressure")
        return folder
    }

    /// The sample's time, which is the one thing that changes from run to run.
    static func withoutTimes(_ text: String) -> String {
        text.replacing(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, with: "YYYY-MM-DD hh:mm:ss")
            .replacing(/"time":"[^"]*"/, with: #""time":"<time>""#)
    }

    static let header =
        "TIME (UTC)           HOST TOTAL  HOST AVAIL    CG LIMIT    CG USAGE    CG AVAIL  PSI SOME  PSI FULL   EFFECTIVE  AVAIL %  LEVEL\n"

    @Test func hostOnlySample() throws {
        let tree = try Self.hostTree()
        let table = try CLI.run(["monitor", "--once", "--root", tree.path])
        #expect(table.status == 0, "\(table)")
        #expect(table.stderr.isEmpty)
        // MemTotal 15666184 kB; MemAvailable is absent, so it is estimated (15204908 kB).
        #expect(
            Self.withoutTimes(table.stdout) == Self.header + """
                YYYY-MM-DD hh:mm:ss    14.9 GiB    14.5 GiB        none        none        none      0.10      0.20    14.5 GiB     97.1  normal

                """, "\(table)")

        let json = try CLI.run(["monitor", "--once", "--root", tree.path, "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(
            Self.withoutTimes(json.stdout) == """
                {"schema":1,"kind":"sample","time":"<time>","level":"normal","host":{"total":16042172416,"available":15569825792,"available_is_estimated":true},"cgroup":null,"pressure":{"file":"/proc/pressure/memory","some_avg10":0.10,"full_avg10":0.20},"effective_total":16042172416,"effective_available":15569825792,"available_percent":97.06}

                """, "\(json)")
    }

    @Test func cgroupV2Sample() throws {
        let tree = try Self.cgroupTree()
        // 1 GiB − (900 MiB − 100 MiB) = 224 MiB available: 21.9 % of the limit, a warning.
        let table = try CLI.run(["monitor", "--once", "--root", tree.path])
        #expect(table.status == 0, "\(table)")
        #expect(
            Self.withoutTimes(table.stdout) == Self.header + """
                YYYY-MM-DD hh:mm:ss    14.9 GiB    14.5 GiB     1.0 GiB   900.0 MiB   224.0 MiB      4.00      1.00   224.0 MiB     21.9  warning

                """, "\(table)")

        let json = try CLI.run(["monitor", "--once", "--root", tree.path, "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(
            Self.withoutTimes(json.stdout) == """
                {"schema":1,"kind":"sample","time":"<time>","level":"warning","host":{"total":16042172416,"available":15569825792,"available_is_estimated":true},"cgroup":{"version":2,"path":"/sys/fs/cgroup/app.slice/demo.service","numbers_from":"/sys/fs/cgroup/app.slice/demo.service","limit":1073741824,"usage":943718400,"inactive_file":104857600,"available":234881024},"pressure":{"file":"/sys/fs/cgroup/app.slice/demo.service/memory.pressure","some_avg10":4.00,"full_avg10":1.00},"effective_total":1073741824,"effective_available":234881024,"available_percent":21.88}

                """, "\(json)")

        // --cgroup picks a directory explicitly: the unlimited parent leaves the host in charge.
        let parent = try CLI.run([
            "monitor", "--once", "--root", tree.path, "--cgroup", "/sys/fs/cgroup/app.slice", "--json",
        ])
        #expect(
            parent.stdout.contains(
                #""cgroup":{"version":2,"path":"/sys/fs/cgroup/app.slice","numbers_from":"/sys/fs/cgroup/app.slice","limit":null,"usage":2147483648,"inactive_file":0,"available":null}"#
            ), "\(parent)")
        #expect(
            parent.stdout.contains(#""pressure":{"file":"/proc/pressure/memory","some_avg10":0.10,"full_avg10":0.20}"#),
            "\(parent)")
    }

    /// A tighter ancestor: the JSON keeps the process's cgroup as `path` and names the ancestor
    /// the limit, usage and available come from, and the file PSI was read from.
    @Test func tighterAncestorIsNamed() throws {
        let tree = try Self.cgroupTree()
        // app.slice: 1.5 GiB limit with 1.4 GiB charged, tighter than the service's 224 MiB headroom.
        try MemoryFixtures.write("1610612736\n", to: "/sys/fs/cgroup/app.slice/memory.max", in: tree.path)
        try MemoryFixtures.write("1503238553\n", to: "/sys/fs/cgroup/app.slice/memory.current", in: tree.path)
        let json = try CLI.run(["monitor", "--once", "--root", tree.path, "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(
            json.stdout.contains(
                #""cgroup":{"version":2,"path":"/sys/fs/cgroup/app.slice/demo.service","numbers_from":"/sys/fs/cgroup/app.slice","limit":1610612736,"usage":1503238553,"inactive_file":0,"available":107374183}"#
            ), "\(json)")
        #expect(
            json.stdout.contains(#""pressure":{"file":"/sys/fs/cgroup/app.slice/demo.service/memory.pressure","#),
            "\(json)")
        #expect(json.stdout.contains(#""level":"critical""#), "\(json)")
    }

    /// `--events` runs the monitor thread: the first event is printed with its trigger and
    /// source, and `--count` stops it.
    @Test func eventsArePrintedAsRaised() throws {
        let tree = try Self.cgroupTree()
        let json = try CLI.run(["monitor", "--events", "--count", "1", "--root", tree.path, "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(json.stdout.contains(#""kind":"event""#), "\(json)")
        #expect(
            json.stdout.contains(
                #""level":"warning","previous":"normal","trigger":"available_memory","source":"poll","ahead_of_poll_ms":null"#
            ), "\(json)")
        #expect(json.stdout.split(separator: "\n").count == 1, "\(json)")
    }

    @Test func countPrintsOneLinePerSample() throws {
        let tree = try Self.hostTree()
        let result = try CLI.run(["monitor", "--count", "3", "--interval", "10ms", "--root", tree.path, "--json"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["kind"] as? String == "sample")
        }
        let table = try CLI.run(["monitor", "--count", "2", "--interval", "10ms", "--root", tree.path])
        #expect(table.stdout.split(separator: "\n").count == 3, "\(table)")
    }

    @Test func garbageMeminfoExitsThreeWithOneLine() throws {
        let folder = TemporaryFolder("monitor-garbage")
        try MemoryFixtures.write("MemTotal:  lots kB\nMemFree: 12 kB\n", to: "/proc/meminfo", in: folder.path)
        let result = try CLI.run(["monitor", "--once", "--root", folder.path])
        #expect(result.status == 3, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1)
        #expect(
            result.stderr.hasPrefix(
                "statectl: \(folder.path)/proc/meminfo line 1: MemTotal has the non-numeric value \"lots\""),
            "\(result)")

        let missing = try CLI.run(["monitor", "--once", "--root", folder.file("nothing")])
        #expect(missing.status == 3, "\(missing)")
        #expect(missing.stderrLines.count == 1)
        #expect(missing.stderr.hasPrefix("statectl: cannot read \(folder.path)/nothing/proc/meminfo"), "\(missing)")
    }

    @Test func badArgumentsAreUsageErrors() throws {
        for arguments in [
            ["--interval", "soon"], ["--interval", "0s"], ["--count", "0"], ["--once", "--count", "2"],
        ] {
            let result = try CLI.run(["monitor"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
        }
    }

    /// A reader that goes away ends the watch quietly, and a closed stdout or stderr never traps.
    @Test func aClosedOutputEndsTheWatchWithoutATrap() throws {
        let tree = try Self.hostTree()
        // 10 % available: critical, so --events raises an event at once.
        try MemoryFixtures.write("MemTotal: 1000000 kB\nMemAvailable: 100000 kB\n", to: "/proc/meminfo", in: tree.path)
        let statectl = CLI.executable
        func shell(_ script: String) throws -> CLIResult {
            try CLI.run(["-c", script], executable: "/bin/bash")
        }
        // Samples every 10 ms into `head -1`: statectl stops once head has gone, well within 20 s.
        let piped = try shell(
            "timeout 20 '\(statectl)' monitor --root '\(tree.path)' --interval 10ms | head -1 >/dev/null; echo ${PIPESTATUS[0]}"
        )
        #expect(piped.stdout == "0\n", "\(piped)")
        for redirect in [">&-", "2>&-"] {
            let closed = try shell(
                "timeout 20 '\(statectl)' monitor --events --root '\(tree.path)' --count 1 \(redirect); echo $?")
            #expect(closed.stdout.hasSuffix("0\n") && !closed.stdout.contains("watching"), "\(redirect): \(closed)")
            #expect(!closed.stderr.contains("Fatal error"), "\(redirect): \(closed)")
        }
    }
}
