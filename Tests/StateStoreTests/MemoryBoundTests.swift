import Foundation
import Testing

@testable import StateStore

/// Memory is bounded by the work, not by how long the app runs: the mail app in a process of
/// its own (`statestore-worker memory-flat`) opens and closes a message 10,000 times (each a
/// save), relaunches 100 times in process, and takes 1,000 critical memory warnings, and its
/// resident set after each phase is within a bound of what it was before (after a warm-up of a
/// tenth of the phase). Under the address lane (`scripts/sanitize address`) LeakSanitizer also
/// checks the whole heap once the app, the store and the monitor are released: nothing may be
/// left.
@Suite("Memory bounded by the work")
struct MemoryBoundTests {
    let folder = TemporaryFolder()

    /// What a phase may add to the resident set, in KiB. A real leak of a saved state a cycle
    /// (about 300 bytes) would add 3 MB over the cycles, of an application a relaunch (the
    /// window, its controllers and their states) several hundred KiB a time.
    static let bound = 2_048

    @Test(.hangGuard(minutes: 10))
    func cyclesRelaunchesAndWarningsLeaveTheResidentSetFlat() throws {
        let result = try runProgram(
            try builtProduct("statestore-worker"), ["memory-flat", folder.file("state.sqlite")])
        try #require(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.last == "ok")
        var phases: [String: (before: Int, after: Int)] = [:]
        for line in lines where line.hasPrefix("phase=") {
            let fields = AppInstance.fields(line)
            if let name = fields["phase"], let before = fields["before_kib"].flatMap(Int.init),
                let after = fields["after_kib"].flatMap(Int.init)
            {
                phases[name] = (before, after)
            }
        }
        #expect(Set(phases.keys) == ["cycles", "relaunches", "warnings"], "\(result.output)")
        let sanitizer = ProcessInfo.processInfo.environment["STATESTORE_SANITIZER"] ?? ""
        #expect(
            lines.contains(sanitizer == "address" ? "leak_check=clean" : "leak_check=unavailable"),
            "\(result.output)")
        // Under a sanitizer the resident set holds shadow memory (and, under ASan, freed memory
        // in quarantine), which grows with the work: the lanes check leaks and races instead.
        guard sanitizer.isEmpty else { return }
        for (name, phase) in phases {
            #expect(phase.before > 0)
            #expect(phase.after - phase.before <= Self.bound, "\(name): \(phase.before) KiB → \(phase.after) KiB")
        }
    }

    /// Each wait for the writer reads the action the restoration layer left to run after it.
    /// That action once lived in the lock as a bare closure, which generic storage wrapped in
    /// two more thunks at every read: 300,000 waits made a chain that overflowed the stack
    /// when the store was released (and held 20 MB before that).
    @MainActor
    @Test func waitingForTheWriterAgainAndAgainLeavesNothingBehind() throws {
        var store: StateStore? = try StateStore(path: folder.file("state.sqlite"))
        let application = Application(store: store!)
        let before = ProcessMemory.residentBytes() ?? 0
        for _ in 0..<300_000 { store!.waitForWriteBehind() }
        // A chain of thunks would hold about 64 bytes a wait: 19 MB here. The test process runs
        // other tests beside this one, so the bound only has to tell the two apart. Under a
        // sanitizer the resident set holds shadow memory and (ASan) freed memory in quarantine,
        // from every test of the process: the release at the end is what is checked there.
        let sanitized = !(ProcessInfo.processInfo.environment["STATESTORE_SANITIZER"] ?? "").isEmpty
        #expect(sanitized || (ProcessMemory.residentBytes() ?? 0) < before + 12 << 20)
        application.terminate()
        store = nil
    }

    /// The writer's timer (the integrity check's start) is read at every wake-up of the
    /// writer's thread: kept as a tuple holding a closure, it grew the same chain.
    @Test func aStoreWokenAgainAndAgainBeforeItsCheckReleases() throws {
        var store: StateStore? = try StateStore(
            path: folder.file("timer.sqlite"), options: .init(backgroundCheck: .quick(after: .seconds(3600))))
        for index in 0..<20_000 { try store!.save(index, for: "counter") }
        store = nil
    }
}
