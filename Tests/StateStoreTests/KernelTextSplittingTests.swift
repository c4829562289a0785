import Foundation
import Testing

@testable import StateStore

/// The /proc and cgroup parsers split lines and fields on Unicode scalars, as the kernel's byte
/// formats mean them, not on Swift `Character`s: "\r\n" is one Character, and a separator
/// followed by a combining mark is one Character too.
///
/// Found by `Fuzz/run mountinfo`: a CRLF line ending kept two mountinfo lines together, and the
/// filesystem type of the first ran on into the second ("\0…\r\n25$24"), which the target's
/// invariant (a field never spans lines) caught.
@Suite("Kernel text is split on scalars")
struct KernelTextSplittingTests {
    /// Every "\n" made "\r\n".
    func crlf(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.flatMap { $0 == "\n" ? ["\r", "\n"] : [$0] }))
    }

    @Test func theFuzzerMountinfoInputKeepsFieldsOnTheirLines() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/fuzz/mountinfo-crlf-crash")
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)  // as ProcFile.read decodes
        let info = MountInfo.parse(text)
        for entry in info.entries {
            #expect(!entry.filesystemType.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == " " })
            #expect(!entry.superOptions.contains { $0.unicodeScalars.contains { $0 == "\n" || $0 == " " } })
        }
    }

    @Test func crlfMountinfoAndCgroupParseLikeLF() {
        let mountinfo = """
            22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw
            35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
            30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate

            """
        let lf = MountInfo.parse(mountinfo)
        #expect(lf.entries.count == 3)
        #expect(MountInfo.parse(crlf(mountinfo)).entries.map(\.filesystemType) == lf.entries.map(\.filesystemType))
        #expect(MountInfo.parse(crlf(mountinfo)).cgroup2?.superOptions == ["rw", "nsdelegate"])

        let cgroup = "12:memory:/docker/abc\n0::/app.slice/app.service\n"
        let parsed = CgroupMembership.parse(crlf(cgroup))
        #expect(parsed.entries.count == 2)
        #expect(parsed.path(controller: "memory") == "/docker/abc")
        // The "\r" stays on the path only on the last field of a line, as the kernel would
        // never write it; what matters is that the lines are two.
        #expect(parsed.unifiedPath?.hasPrefix("/app.slice/app.service") == true)
    }

    @Test(arguments: [
        "procfs/meminfo", "node_exporter/meminfo", "gopsutil/intelcorei5/meminfo", "gopsutil/anonhugepages/meminfo",
    ])
    func crlfMeminfoParsesLikeLF(fixture: String) throws {
        let text = try MemoryFixtures.text(fixture)
        #expect(try MemInfo.parse(crlf(text)) == MemInfo.parse(text))
    }

    @Test(arguments: ["procfs/pressure/memory", "node_exporter/pressure/io", "node_exporter/pressure/irq"])
    func crlfPressureParsesLikeLF(fixture: String) throws {
        let text = try MemoryFixtures.text(fixture)
        #expect(try PressureStall.parse(crlf(text)) == PressureStall.parse(text))
    }

    @Test func crlfCgroupFilesParseLikeLF() throws {
        let stat = "anon 12345\nfile 99\ninactive_file 7\n"
        #expect(
            try FlatKeyedFile.parse(crlf(stat), file: "memory.stat") == FlatKeyedFile.parse(stat, file: "memory.stat"))
        #expect(try FlatKeyedFile.limit("max\r\n", file: "memory.max") == nil)
        #expect(try FlatKeyedFile.limit("536870912\r\n", file: "memory.current") == 536_870_912)
    }

    /// A space, ':' or '=' followed by a combining mark still separates.
    @Test func separatorsFollowedByCombiningMarksStillSeparate() throws {
        let mount = MountInfo.parse("30 25 0:26 / /sys/fs/cgroup rw - cgroup2 \u{301}source rw,nsdelegate\n")
        #expect(mount.cgroup2?.superOptions == ["rw", "nsdelegate"])

        let membership = CgroupMembership.parse("0::/\u{301}app\n")
        #expect(membership.unifiedPath.map { Array($0.unicodeScalars) } == ["/", "\u{301}", "a", "p", "p"])

        #expect(throws: MemoryError.self) { try FlatKeyedFile.parse("anon \u{301}1\n", file: "memory.stat") }
        let stall = try PressureStall.parse("some avg10=1.00 avg60=2.00 avg300=3.00 total=4\n")
        #expect(stall.some?.total == 4)
        #expect(throws: MemoryError.self) {
            try PressureStall.parse("some avg10=\u{301}1.00 avg60=2.00 avg300=3.00 total=4\n")
        }
    }
}
