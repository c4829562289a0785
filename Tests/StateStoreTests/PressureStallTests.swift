import Testing

@testable import StateStore

@Suite("PressureStall")
struct PressureStallTests {
    static let procfsSome = PressureStall.Line(avg10: 0.10, avg60: 2.00, avg300: 3.85, total: 15)
    static let procfsFull = PressureStall.Line(avg10: 0.20, avg60: 3.00, avg300: 4.95, total: 25)

    @Test(arguments: ["procfs/pressure/memory", "procfs/pressure/io"])
    func procfsMemoryAndIO(_ file: String) throws {
        let psi = try PressureStall.parse(try MemoryFixtures.text(file))
        #expect(psi.some == Self.procfsSome)
        #expect(psi.full == Self.procfsFull)
    }

    @Test func procfsCPUHasNoFullLine() throws {
        let psi = try PressureStall.parse(try MemoryFixtures.text("procfs/pressure/cpu"))
        #expect(psi.some == Self.procfsSome)
        #expect(psi.full == nil)
    }

    @Test func nodeExporterIO() throws {
        let psi = try PressureStall.parse(try MemoryFixtures.text("node_exporter/pressure/io"))
        #expect(psi.some?.total == 159_886_802)
        #expect(psi.full?.total == 159_229_614)
    }

    @Test func nodeExporterIRQHasOnlyFullAndNoFinalNewline() throws {
        let text = try MemoryFixtures.text("node_exporter/pressure/irq")
        #expect(!text.hasSuffix("\n"))
        let psi = try PressureStall.parse(text)
        #expect(psi.some == nil)
        #expect(psi.full?.total == 8494)
    }

    @Test func nodeExporterCPUHasZeroedFullLine() throws {
        let psi = try PressureStall.parse(try MemoryFixtures.text("node_exporter/pressure/cpu"))
        #expect(psi.some != nil)
        #expect(psi.full == PressureStall.Line(avg10: 0, avg60: 0, avg300: 0, total: 0))
    }

    @Test func nodeExporterMemoryParses() throws {
        let psi = try PressureStall.parse(try MemoryFixtures.text("node_exporter/pressure/memory"))
        #expect(psi.some != nil)
        #expect(psi.full != nil)
    }

    @Test(arguments: [
        "some avg10=0.10 avg60=2.00 avg300=3.85 total=oops\n",
        "some avg10=0.10 avg60=2.00 avg300=teddy total=15\n",
        "some avg10=0.10 avg60=2.00 avg300=3.85 total=15\nfull avg10=0.20 avg60=3.00 avg300=teddy total=25\n",
        "some avg10=-1 avg60=2.00 avg300=3.85 total=15\n",
        "some avg10=nan avg60=2.00 avg300=3.85 total=15\n",
        "some avg10=0.10 avg60=2.00 total=15\n",
        "some avg10 0.10\n",
    ])
    func malformedNumbersFailTheWholeFile(_ text: String) {
        #expect(throws: MemoryError.self) { try PressureStall.parse(text) }
    }

    @Test func errorNamesTheField() {
        let error = #expect(throws: MemoryError.self) {
            try PressureStall.parse("some avg10=0.10 avg60=2.00 avg300=3.85 total=oops\n", file: "psi")
        }
        #expect(error == .invalidNumber(file: "psi", line: 1, key: "some total", text: "oops"))
    }

    @Test func unknownLineTypesAreIgnored() throws {
        let psi = try PressureStall.parse("partial avg10=x\nsome avg10=1.00 avg60=2.00 avg300=3.00 total=4\n\n")
        #expect(psi.some == PressureStall.Line(avg10: 1, avg60: 2, avg300: 3, total: 4))
        #expect(psi.full == nil)
    }

    @Test func emptyFileHasNoLines() throws {
        let psi = try PressureStall.parse("")
        #expect(psi.some == nil && psi.full == nil)
    }
}
