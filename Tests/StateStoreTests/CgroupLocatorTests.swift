import Foundation
import Testing

@testable import StateStore

/// The monitor's cached cgroup discovery: mountinfo is parsed again only when the process's
/// membership changes or the remembered cgroup can no longer be read.
@Suite("Cgroup locator")
struct CgroupLocatorTests {
    let folder = TemporaryFolder("cgroup-locator")
    var root: String { folder.path }

    static let mountinfo = """
        22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
        30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot

        """

    func write(_ contents: String, _ path: String) throws {
        try MemoryFixtures.write(contents, to: path, in: root)
    }

    func level(_ path: String, max: UInt64, current: UInt64) throws {
        let directory = "/sys/fs/cgroup" + path
        try write("\(max)\n", directory + "/memory.max")
        try write("max\n", directory + "/memory.high")
        try write("\(current)\n", directory + "/memory.current")
        try write("anon 1\ninactive_file 0\n", directory + "/memory.stat")
    }

    @Test func discoveryIsReusedUntilTheMembershipChanges() throws {
        try write("0::/app.slice/app.service\n", "/proc/self/cgroup")
        try write(Self.mountinfo, "/proc/self/mountinfo")
        try write("anon 1\n", "/sys/fs/cgroup/memory.stat")
        try level("/app.slice/app.service", max: 1 << 30, current: 100 << 20)
        try level("/other.slice/other.service", max: 2 << 30, current: 200 << 20)
        let locator = CgroupLocator()

        let first = try locator.memory(root: root)
        #expect(first.path.hasSuffix("/app.slice/app.service"))
        #expect(first.usage == 100 << 20)

        // Unreadable mountinfo: a locator that parsed it again would fail. The memory files
        // are still read at every call.
        try write("not a mountinfo\n", "/proc/self/mountinfo")
        try level("/app.slice/app.service", max: 1 << 30, current: 150 << 20)
        let second = try locator.memory(root: root)
        #expect(second.path == first.path)
        #expect(second.usage == 150 << 20)

        // The process moved: discovered again, from the new mountinfo.
        try write(Self.mountinfo, "/proc/self/mountinfo")
        try write("0::/other.slice/other.service\n", "/proc/self/cgroup")
        let moved = try locator.memory(root: root)
        #expect(moved.path.hasSuffix("/other.slice/other.service"))
        #expect(moved.limit == 2 << 30)
    }

    @Test func aRemovedCgroupIsDiscoveredAgain() throws {
        try write("0::/app.slice/app.service\n", "/proc/self/cgroup")
        try write(Self.mountinfo, "/proc/self/mountinfo")
        try write("anon 1\n", "/sys/fs/cgroup/memory.stat")
        try level("/app.slice/app.service", max: 1 << 30, current: 100 << 20)
        let locator = CgroupLocator()
        _ = try locator.memory(root: root)
        try FileManager.default.removeItem(atPath: root + "/sys/fs/cgroup/app.slice")
        #expect(throws: MemoryError.self) { try locator.memory(root: root) }
    }

    @Test func anArmedWatchStretchesPollingOnlyAtTheNormalLevel() {
        let second = Duration.seconds(1)
        #expect(CgroupLocator.pollingInterval(second, watchArmed: true, level: .normal) == .seconds(5))
        #expect(CgroupLocator.pollingInterval(second, watchArmed: true, level: .warning) == second)
        #expect(CgroupLocator.pollingInterval(second, watchArmed: false, level: .normal) == second)
        #expect(CgroupLocator.pollingInterval(second, watchArmed: true, level: nil) == second)
    }
}
