import Foundation
import Testing

@testable import StateStore

@Suite("MemInfo")
struct MemInfoTests {
    @Test func procfsFixture() throws {
        let info = try MemInfo.parse(try MemoryFixtures.text("procfs/meminfo"))
        #expect(info.total == 16_042_172_416)
        #expect(info.free == 450_891_776)
        #expect(info["MemTotal"] == 16_042_172_416)
        #expect(info["MemFree"] == 450_891_776)
        #expect(info["Buffers"] == 1_044_611_072)
        #expect(info["Cached"] == 12_295_823_360)
        #expect(info["VmallocTotal"] == 35_184_372_087_808)
        #expect(info["Zswap"] == 22414 * 1024)
        #expect(info["HugePages_Total"] == 0)
        #expect(info["Hugepagesize"] == 2_097_152)
        #expect(info["MemAvailable"] == nil)
        #expect(info.availableIsEstimated)
        #expect(info.available == 15_204_908 * 1024)
    }

    @Test func nodeExporterFixture() throws {
        let info = try MemInfo.parse(try MemoryFixtures.text("node_exporter/meminfo"))
        #expect(info.total == 3_831_959_552)
        #expect(info.free == 230_883_328)
        #expect(info["Buffers"] == 22_568_960)
        #expect(info["Cached"] == 953_229_312)
        #expect(info["SwapFree"] == 3_231_088_640)
        #expect(info.availableIsEstimated)
        #expect(info.available == 629_332 * 1024)
    }

    @Test func gopsutilIntelCoreI5() throws {
        let info = try MemInfo.parse(try MemoryFixtures.text("gopsutil/intelcorei5/meminfo"))
        #expect(info.total == 16_502_300_672)
        #expect(info.available == 11_495_358_464)
        #expect(!info.availableIsEstimated)
    }

    @Test func gopsutilIssue1002WithLegacyTable() throws {
        let info = try MemInfo.parse(try MemoryFixtures.text("gopsutil/issue1002/meminfo"))
        #expect(info.available == 215_199_744)
        #expect(info.total == 254_472 * 1024)
        #expect(info["MemShared"] == 0)
        #expect(info["HighTotal"] != nil)
        #expect(info["LowTotal"] != nil)
        #expect(info["Mem"] == nil)
        #expect(info["total"] == nil)
        #expect(!info.availableIsEstimated)
    }

    @Test func gopsutilAnonHugePagesWithoutFinalNewline() throws {
        let text = try MemoryFixtures.text("gopsutil/anonhugepages/meminfo")
        #expect(!text.hasSuffix("\n"))
        let info = try MemInfo.parse(text)
        #expect(info.total == 260_799_420 * 1024)
        #expect(info.available == 127_880_216 * 1024)
        #expect(info["AnonHugePages"] == 50_409_472 * 1024)
        #expect(info["SwapTotal"] == nil)
    }

    @Test func estimateIsClampedToZeroAndTotal() throws {
        let negative = try MemInfo.parse("MemTotal: 100 kB\nMemFree: 1 kB\nShmem: 50 kB\n")
        #expect(negative.available == 0)
        #expect(negative.availableIsEstimated)
        let excessive = try MemInfo.parse("MemTotal: 100 kB\nMemFree: 80 kB\nCached: 80 kB\n")
        #expect(excessive.available == 100 * 1024)
    }

    @Test func missingMemTotalIsAnError() {
        #expect(throws: MemoryError.missingKey(file: "/proc/meminfo", key: "MemTotal")) {
            try MemInfo.parse("MemFree: 1 kB\nMemAvailable: 2 kB\n")
        }
    }

    @Test func nonNumericValueIsAnErrorWithLineContext() {
        let error = #expect(throws: MemoryError.self) {
            try MemInfo.parse("MemTotal: 100 kB\nMemFree: lots kB\n", file: "meminfo")
        }
        #expect(error == .invalidNumber(file: "meminfo", line: 2, key: "MemFree", text: "lots"))
        #expect(error?.description.contains("line 2") == true)
    }

    @Test func aValueTooLargeIsNamedSoNotCalledNonNumeric() {
        for text in ["MemTotal: 18014398509481984 kB\n", "MemTotal: 99999999999999999999\n"] {
            let error = #expect(throws: MemoryError.self) { try MemInfo.parse(text, file: "meminfo") }
            #expect(error?.description.contains("too large to hold in 64 bits") == true, "\(String(describing: error))")
            #expect(error?.description.contains("non-numeric") == false)
        }
    }

    @Test(arguments: [
        "",
        "\n\n  \n",
        "MemTotal: -5 kB\n",
        "MemTotal: 5 MB\n",
        "MemTotal 5 kB\n",
        "MemTotal: 99999999999999999999 kB\n",
        "MemTotal: 18446744073709551615 kB\n",
        "MemTotal:\n",
        "\u{0}\u{1}\u{2}\u{FFFD}garbage\u{7f}",
        "MemTotal: 1 kB extra\n",
    ])
    func malformedInputThrows(_ text: String) {
        #expect(throws: MemoryError.self) { try MemInfo.parse(text) }
    }

    @Test func binaryGarbageNeverTraps() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? MemInfo.parse(String(decoding: bytes, as: UTF8.self))
            _ = try? PressureStall.parse(String(decoding: bytes, as: UTF8.self))
            _ = MountInfo.parse(String(decoding: bytes, as: UTF8.self))
            _ = CgroupMembership.parse(String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test func liveProcMeminfoParses() throws {
        let info = try MemInfo.parse(try String(contentsOfFile: "/proc/meminfo", encoding: .utf8))
        #expect(info.total > 0)
        #expect(info.available <= info.total)
    }
}
