import Foundation
import Testing

@testable import StateStore

private let MiB: UInt64 = 1 << 20

/// Builds a fake root with `/proc` and `/sys/fs/cgroup` files.
private struct CgroupTree {
    let folder = TemporaryFolder("cgroup")
    var root: String { folder.path }

    func write(_ contents: String, _ path: String) throws {
        try MemoryFixtures.write(contents, to: path, in: root)
    }

    static func v2(_ name: String = #function) throws -> CgroupTree {
        let tree = CgroupTree()
        try tree.write("0::/app.slice/app.service\n", "/proc/self/cgroup")
        try tree.write(
            """
            22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
            30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot

            """, "/proc/self/mountinfo")
        try tree.write(MemoryFixtures.meminfo(totalKB: 16 * 1024 * 1024, availableKB: 8 * 1024 * 1024), "/proc/meminfo")
        // The v2 root cgroup has no memory.max; it stops the walk.
        try tree.write("anon 1\n", "/sys/fs/cgroup/memory.stat")
        return tree
    }

    func v2Level(_ path: String, max: String, high: String = "max", current: UInt64, inactiveFile: UInt64) throws {
        let directory = "/sys/fs/cgroup" + path
        try write(max + "\n", directory + "/memory.max")
        try write(high + "\n", directory + "/memory.high")
        try write("\(current)\n", directory + "/memory.current")
        try write(
            "anon 12345\nfile 99\nactive_file 5\ninactive_file \(inactiveFile)\nslab 7\n", directory + "/memory.stat")
    }

    static func v1(cgroupPath: String = "/docker/abc", mountRoot: String = "/") throws -> CgroupTree {
        let tree = CgroupTree()
        try tree.write(
            """
            12:pids:/docker/abc
            4:memory:\(cgroupPath)
            2:cpu,cpuacct:/docker/abc
            1:name=systemd:/docker/abc
            0::/

            """, "/proc/self/cgroup")
        try tree.write(
            """
            31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
            32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
            35 31 0:32 \(mountRoot) /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,memory
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw

            """, "/proc/self/mountinfo")
        try tree.write(MemoryFixtures.meminfo(totalKB: 16 * 1024 * 1024, availableKB: 8 * 1024 * 1024), "/proc/meminfo")
        return tree
    }

    func v1Level(_ path: String, limit: UInt64, usage: UInt64, totalInactiveFile: UInt64) throws {
        let directory = "/sys/fs/cgroup/memory" + path
        try write("\(limit)\n", directory + "/memory.limit_in_bytes")
        try write("\(usage)\n", directory + "/memory.usage_in_bytes")
        try write(
            "cache 1\nrss 2\ninactive_file 3\nhierarchical_memory_limit \(limit)\ntotal_inactive_file \(totalInactiveFile)\n",
            directory + "/memory.stat")
    }
}

@Suite("Cgroup memory")
struct CgroupMemoryTests {
    static let v1Unlimited: UInt64 = 9_223_372_036_854_771_712

    // MARK: cgroup v2

    @Test func v2LimitWithInactiveFileSubtracted() throws {
        let tree = try CgroupTree.v2()
        try tree.v2Level("/app.slice", max: "max", current: 400 * MiB, inactiveFile: 0)
        try tree.v2Level("/app.slice/app.service", max: "\(512 * MiB)", current: 300 * MiB, inactiveFile: 100 * MiB)
        try tree.write(
            "some avg10=1.50 avg60=0.50 avg300=0.10 total=1234\nfull avg10=0.50 avg60=0.00 avg300=0.00 total=99\n",
            "/sys/fs/cgroup/app.slice/app.service/memory.pressure")
        try tree.write(
            "low 0\nhigh 3\nmax 2\noom 1\noom_kill 1\noom_group_kill 0\n",
            "/sys/fs/cgroup/app.slice/app.service/memory.events")

        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.version == .v2)
        #expect(cgroup.path == tree.root + "/sys/fs/cgroup/app.slice/app.service")
        #expect(cgroup.hierarchy.count == 2)
        #expect(cgroup.limit == 512 * MiB)
        #expect(cgroup.usage == 300 * MiB)
        #expect(cgroup.inactiveFile == 100 * MiB)
        #expect(cgroup.available == 312 * MiB)
        #expect(cgroup.pressure?.some?.avg10 == 1.5)
        #expect(cgroup.pressure?.full?.total == 99)
        #expect(cgroup.events?.high == 3)
        #expect(cgroup.events?.oomKill == 1)
    }

    @Test func v2UnlimitedHasNoAvailable() throws {
        let tree = try CgroupTree.v2()
        try tree.v2Level("/app.slice", max: "max", current: 400 * MiB, inactiveFile: 0)
        try tree.v2Level("/app.slice/app.service", max: "max", current: 300 * MiB, inactiveFile: 100 * MiB)
        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.limit == nil)
        #expect(cgroup.available == nil)
        #expect(cgroup.usage == 300 * MiB)
    }

    @Test func v2TighterParentBinds() throws {
        let tree = try CgroupTree.v2()
        // The slice allows 256 MiB and its services together use 250 MiB (10 MiB of it inactive file pages).
        try tree.v2Level("/app.slice", max: "\(256 * MiB)", current: 250 * MiB, inactiveFile: 10 * MiB)
        try tree.v2Level("/app.slice/app.service", max: "\(1024 * MiB)", current: 100 * MiB, inactiveFile: 0)
        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.limit == 256 * MiB)
        #expect(cgroup.available == 16 * MiB)
        #expect(cgroup.bindingLevel?.path == tree.root + "/sys/fs/cgroup/app.slice")
    }

    @Test func v2HighBelowMaxIsTheWall() throws {
        let tree = try CgroupTree.v2()
        try tree.v2Level("/app.slice", max: "max", current: 0, inactiveFile: 0)
        try tree.v2Level(
            "/app.slice/app.service", max: "\(512 * MiB)", high: "\(384 * MiB)", current: 300 * MiB, inactiveFile: 0)
        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.hierarchy[0].max == 512 * MiB)
        #expect(cgroup.hierarchy[0].high == 384 * MiB)
        #expect(cgroup.limit == 384 * MiB)
        #expect(cgroup.available == 84 * MiB)
    }

    @Test func v2MalformedLimitIsAnError() throws {
        let tree = try CgroupTree.v2()
        try tree.v2Level("/app.slice/app.service", max: "lots", current: 1, inactiveFile: 0)
        #expect(throws: MemoryError.self) { try CgroupMemory.discover(root: tree.root) }
    }

    /// `r` has `memory.max` 256 MiB with 200 MiB charged; `r` does not pass the memory
    /// controller down, so `r/c` (where the process is) has only the core files. The process's
    /// memory is charged to `r`, and r's limit binds it: the walk goes up to `r`.
    @Test func v2WalksUpToTheNearestCgroupWithTheMemoryController() throws {
        let tree = try CgroupTree.v2()
        try tree.write("0::/r/c\n", "/proc/self/cgroup")
        try tree.write("cpu io memory pids\n", "/sys/fs/cgroup/cgroup.controllers")
        try tree.write("memory\n", "/sys/fs/cgroup/r/cgroup.controllers")
        try tree.v2Level("/r", max: "\(256 * MiB)", current: 200 * MiB, inactiveFile: 0)
        try tree.write("some avg10=2.00 avg60=0.50 avg300=0.10 total=1234\n", "/sys/fs/cgroup/r/memory.pressure")
        try tree.write("\n", "/sys/fs/cgroup/r/c/cgroup.controllers")
        try tree.write("some avg10=9.00 avg60=0.50 avg300=0.10 total=1\n", "/sys/fs/cgroup/r/c/memory.pressure")

        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.version == .v2)
        #expect(cgroup.path == tree.root + "/sys/fs/cgroup/r")
        #expect(cgroup.limit == 256 * MiB)
        #expect(cgroup.available == 56 * MiB)
        #expect(cgroup.pressure?.some?.avg10 == 2.0)
        // Pointed at r/c directly, the same.
        #expect(
            try CgroupMemory.read(directory: tree.root + "/sys/fs/cgroup/r/c").path == tree.root + "/sys/fs/cgroup/r")

        // And the monitor grades it: 56 of 256 MiB is 21.9 %, a warning, not "no cgroup".
        let monitor = try MemoryPressureMonitor(configuration: .init(root: tree.root))
        let sample = try monitor.sample()
        #expect(sample.cgroup?.limit == 256 * MiB)
        #expect(sample.level == .warning)
    }

    /// A folder that is not a cgroup (no `cgroup.controllers`) is not walked through.
    @Test func v2DoesNotWalkOutOfTheHierarchy() throws {
        let tree = try CgroupTree.v2()
        try tree.write("0::/r/c\n", "/proc/self/cgroup")
        try tree.v2Level("/r", max: "\(256 * MiB)", current: 200 * MiB, inactiveFile: 0)
        try tree.write("\n", "/sys/fs/cgroup/r/c/some-file")
        #expect(throws: MemoryError.self) { try CgroupMemory.discover(root: tree.root) }
    }

    // MARK: cgroup v1

    @Test func v1LimitWithTotalInactiveFileSubtracted() throws {
        let tree = try CgroupTree.v1()
        try tree.v1Level("", limit: Self.v1Unlimited, usage: 4096 * MiB, totalInactiveFile: 0)
        try tree.v1Level("/docker", limit: Self.v1Unlimited, usage: 300 * MiB, totalInactiveFile: 0)
        try tree.v1Level("/docker/abc", limit: 256 * MiB, usage: 200 * MiB, totalInactiveFile: 50 * MiB)
        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.version == .v1)
        #expect(cgroup.path == tree.root + "/sys/fs/cgroup/memory/docker/abc")
        #expect(cgroup.hierarchy.count == 3)
        #expect(cgroup.limit == 256 * MiB)
        #expect(cgroup.inactiveFile == 50 * MiB)
        #expect(cgroup.available == 106 * MiB)
        #expect(cgroup.pressure == nil)
    }

    @Test func v1UnlimitedValueMeansNoLimit() throws {
        let tree = try CgroupTree.v1()
        try tree.v1Level("", limit: Self.v1Unlimited, usage: 4096 * MiB, totalInactiveFile: 0)
        try tree.v1Level("/docker", limit: Self.v1Unlimited, usage: 300 * MiB, totalInactiveFile: 0)
        try tree.v1Level("/docker/abc", limit: Self.v1Unlimited, usage: 200 * MiB, totalInactiveFile: 50 * MiB)
        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.hierarchy.allSatisfy { $0.max == nil })
        #expect(cgroup.limit == nil)
        #expect(cgroup.available == nil)

        let sample = try MemoryPressureMonitor(configuration: .init(root: tree.root)).sample()
        #expect(sample.effectiveTotal == 16 * 1024 * MiB)
        #expect(sample.effectiveAvailable == 8 * 1024 * MiB)
        #expect(!sample.isCgroupBound)
    }

    @Test func v1TighterParentBinds() throws {
        let tree = try CgroupTree.v1()
        try tree.v1Level("", limit: Self.v1Unlimited, usage: 4096 * MiB, totalInactiveFile: 0)
        try tree.v1Level("/docker", limit: 128 * MiB, usage: 120 * MiB, totalInactiveFile: 8 * MiB)
        try tree.v1Level("/docker/abc", limit: 512 * MiB, usage: 100 * MiB, totalInactiveFile: 0)
        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.limit == 128 * MiB)
        #expect(cgroup.available == 16 * MiB)
        #expect(cgroup.bindingLevel?.path == tree.root + "/sys/fs/cgroup/memory/docker")

        let sample = try MemoryPressureMonitor(configuration: .init(root: tree.root)).sample()
        #expect(sample.effectiveTotal == 128 * MiB)
        #expect(sample.effectiveAvailable == 16 * MiB)
        #expect(sample.isCgroupBound)
        #expect(sample.level == .critical)
    }

    @Test func v1BindMountedContainerRoot() throws {
        // Inside a container the hierarchy is mounted from /docker/abc: the process's path maps to the mount point.
        let tree = try CgroupTree.v1(cgroupPath: "/docker/abc", mountRoot: "/docker/abc")
        try tree.v1Level("", limit: 64 * MiB, usage: 32 * MiB, totalInactiveFile: 0)
        let cgroup = try CgroupMemory.discover(root: tree.root)
        #expect(cgroup.path == tree.root + "/sys/fs/cgroup/memory")
        #expect(cgroup.available == 32 * MiB)
    }

    @Test func explicitCgroupPathOverridesDiscovery() throws {
        let tree = try CgroupTree.v1()
        try tree.v1Level("", limit: Self.v1Unlimited, usage: 4096 * MiB, totalInactiveFile: 0)
        try tree.v1Level("/docker/abc", limit: Self.v1Unlimited, usage: 200 * MiB, totalInactiveFile: 0)
        try tree.v1Level("/other", limit: 100 * MiB, usage: 80 * MiB, totalInactiveFile: 0)
        let sample = try MemoryPressureMonitor(
            configuration: .init(root: tree.root, cgroupPath: "/sys/fs/cgroup/memory/other")
        ).sample()
        #expect(sample.cgroup?.path == tree.root + "/sys/fs/cgroup/memory/other")
        #expect(sample.effectiveAvailable == 20 * MiB)
        #expect(sample.effectiveTotal == 100 * MiB)
    }

    @Test func noCgroupFilesMeansNotFound() throws {
        let tree = try CgroupTree.v2()
        let error = #expect(throws: MemoryError.self) { try CgroupMemory.discover(root: tree.root) }
        if case .cgroupNotFound = error {
        } else {
            Issue.record("expected cgroupNotFound, got \(String(describing: error))")
        }
        // The monitor still samples: host numbers only.
        let sample = try MemoryPressureMonitor(configuration: .init(root: tree.root)).sample()
        #expect(sample.cgroup == nil)
        #expect(sample.effectiveAvailable == 8 * 1024 * MiB)
    }

    // MARK: parsers

    @Test func mountinfoParsing() {
        let info = MountInfo.parse(
            """
            35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 master:2 - cgroup cgroup rw,memory
            36 31 0:33 /a\\040b /mnt/with\\040space rw - ext4 /dev/sda1 rw
            garbage line
            1 2 3
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
            50 31 0:40 / /x rw - 
            """)
        #expect(info.entries.count == 3)
        #expect(info.cgroup1(controller: "memory")?.mountPoint == "/sys/fs/cgroup/memory")
        #expect(info.cgroup2?.mountPoint == "/sys/fs/cgroup/unified")
        #expect(info.entries[1].mountPoint == "/mnt/with space")
        #expect(info.entries[1].root == "/a b")
        #expect(info.cgroup1(controller: "cpu") == nil)
    }

    @Test func procSelfCgroupParsing() {
        let membership = CgroupMembership.parse(
            """
            4:memory:/process_api/0b07
            2:cpu,cpuacct:/a:b
            x:memory:/bad
            7:pids
            0::/user.slice/app.scope
            """)
        #expect(membership.entries.count == 3)
        #expect(membership.path(controller: "memory") == "/process_api/0b07")
        #expect(membership.path(controller: "cpuacct") == "/a:b")
        #expect(membership.unifiedPath == "/user.slice/app.scope")
    }

    @Test func locateMapsNamespacedPaths() {
        let mount = MountInfo.Entry(
            root: "/", mountPoint: "/sys/fs/cgroup", filesystemType: "cgroup2", superOptions: [])
        #expect(CgroupMemory.locate("/", in: mount) == "/sys/fs/cgroup")
        #expect(CgroupMemory.locate("/a/b", in: mount) == "/sys/fs/cgroup/a/b")
        #expect(CgroupMemory.locate("/../../x", in: mount) == "/sys/fs/cgroup")
    }

    /// The kernel resolves paths byte by byte; Swift compares `Character`s, where `/` followed by
    /// a combining mark is one character (not a separator) and `é` equals `e` + U+0301. Found
    /// while writing the fuzz-cgroup target's invariant: `/a/../\u{301}` hid its `..` and left
    /// the mount for a sibling directory.
    @Test func locateJudgesPathsByTheirBytes() {
        let mount = MountInfo.Entry(
            root: "/", mountPoint: "/sys/fs/cgroup", filesystemType: "cgroup2", superOptions: [])
        for hidden in ["/a/../\u{301}", "/../\u{301}", "/x/../\u{301}/../\u{301}", "/..\u{301}/../\u{301}"] {
            #expect(
                Array(CgroupMemory.locate(hidden, in: mount).utf8) == Array("/sys/fs/cgroup".utf8),
                "\(hidden.debugDescription)")
        }
        // Not `..`: a component that merely starts or ends with dots, or carries a mark itself.
        #expect(Array(CgroupMemory.locate("/..\u{301}", in: mount).utf8) == Array("/sys/fs/cgroup/..\u{301}".utf8))

        // A root spelled with a precomposed é does not contain a path spelled with e + U+0301.
        let rooted = MountInfo.Entry(
            root: "/caf\u{E9}", mountPoint: "/sys/fs/cgroup/memory", filesystemType: "cgroup", superOptions: ["memory"])
        #expect(Array(CgroupMemory.locate("/caf\u{E9}/x", in: rooted).utf8) == Array("/sys/fs/cgroup/memory/x".utf8))
        #expect(Array(CgroupMemory.locate("/caf\u{E9}", in: rooted).utf8) == Array("/sys/fs/cgroup/memory".utf8))
        #expect(
            Array(CgroupMemory.locate("/cafe\u{301}/x", in: rooted).utf8)
                == Array("/sys/fs/cgroup/memory/cafe\u{301}/x".utf8))
        #expect(
            Array(CgroupMemory.locate("/cafe\u{301}", in: rooted).utf8)
                == Array("/sys/fs/cgroup/memory/cafe\u{301}".utf8))
    }

    /// A memory cgroup this process can read: v1's memory hierarchy, or a v2 group with
    /// `memory.current` (the process's own, or the one a cgroup namespace mounts at the top). The
    /// real v2 root has no such file: a process left there (a VM without systemd) has none.
    static var hasOwnMemoryCgroup: Bool {
        let files = FileManager.default
        if files.fileExists(atPath: "/sys/fs/cgroup/memory/memory.limit_in_bytes") { return true }
        guard files.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers") else { return false }
        if files.fileExists(atPath: "/sys/fs/cgroup/memory.current") { return true }
        let own = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)).flatMap {
            CgroupMembership.parse($0).unifiedPath
        }
        return own.map { files.fileExists(atPath: "/sys/fs/cgroup\($0)/memory.current") } ?? false
    }

    @Test(.enabled(if: hasOwnMemoryCgroup, "needs a memory cgroup of the process's own"))
    func liveDiscovery() throws {
        let cgroup = try CgroupMemory.discover()
        #expect(!cgroup.hierarchy.isEmpty)
        #expect(cgroup.usage > 0)
    }
}
