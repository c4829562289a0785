import Foundation
import Testing

@testable import StateStore

/// kill -9 right after a disappearance, with saves still with the write-behind writer: the
/// database holds everything up to the last flush point and then a prefix of the later
/// structural changes, in order, each whole — what the documented window allows, nothing more.
@Suite("Write-behind: SIGKILL right after a disappearance", .hangGuard(minutes: 10))
struct WriteBehindKillTests {
    struct StepState: Codable, Sendable {
        var step: Int
        var padding: String
    }

    struct Outcome {
        var list: Int
        var detail: Int
        var screens: Int
        var warnings: [String] = []
    }

    /// Runs `statestore-worker writebehind-kill` once and reads what survived. `ending`: the
    /// worker's last argument (`exit`, `threadless`), if any.
    func killedSession(steps: Int, padding: Int, ending: String? = nil) throws -> Outcome {
        let folder = TemporaryFolder("writebehind-kill")
        // A worker at its thread limit started as root runs as a user of its own
        // (`WriteBehindKill.limitedUser(spare:)` in statestore-worker): the folder is made its.
        if let spare = ["threadless": UInt32(0), "one-spare-thread": 1][ending ?? ""], geteuid() == 0 {
            try #require(chown(folder.path, 3_900_000_000 + spare, 3_900_000_000 + spare) == 0)
        }
        let database = folder.file("state.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments =
            ["writebehind-kill", database, String(steps), String(padding)] + (ending.map { [$0] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // A worker that hangs (a store that blocks at open) is killed, and fails below.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        if ending == "exit" {
            #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        } else {
            #expect(process.terminationReason == .uncaughtSignal)
            #expect(process.terminationStatus == SIGKILL)
        }
        let lines = text.split(separator: "\n").map(String.init)
        let warnings = lines.filter { $0.hasPrefix("warning ") }
        #expect(lines.filter { !$0.hasPrefix("warning ") } == ["flushed 1", "handed \(steps)"])

        let store = try StateStore(path: database, options: .init(readOnly: true))
        let list = try #require(try store.restore(StepState.self, for: "nav/list"), "the flushed list state is gone")
        let detail = try #require(
            try store.restore(StepState.self, for: "nav/detail"), "the flushed detail state is gone")
        let archive = try HierarchyArchive(decoding: try #require(try store.hierarchyArchive()))
        #expect(list.padding.count == padding && detail.padding.count == padding)
        #expect(try store.check().integrity == ["ok"])
        return Outcome(
            list: list.step, detail: detail.step, screens: archive.root?.children.count ?? 0, warnings: warnings)
    }

    @Test(arguments: [64, 256 << 10])
    func whatSurvivesIsEveryChangeUpToAPointInOrderEachWhole(padding: Int) throws {
        let steps = 12
        var lostChanges: [Int] = []
        for _ in 0..<6 {
            let outcome = try killedSession(steps: steps, padding: padding)
            // Nothing before the flush point is lost.
            #expect(outcome.list >= 1 && outcome.detail >= 1)
            #expect(outcome.list <= steps)
            // A prefix of the later changes: after push i (list i, detail i-1, two screens) or
            // after pop i (list i, detail i, one screen); never a later state without an earlier
            // one, never a state without its archive.
            let afterPush = outcome.list == outcome.detail + 1 && outcome.screens == 2
            let afterPop = outcome.list == outcome.detail && outcome.screens == 1
            #expect(afterPush || afterPop, "list \(outcome.list), detail \(outcome.detail), \(outcome.screens) screens")
            // Changes handed over but not written when the process died (two per step).
            lostChanges.append(2 * steps - (2 * outcome.list - (afterPush ? 1 : 0)))
        }
        print("write-behind kill, \(padding)-byte states: structural changes lost per kill: \(lostChanges)")
    }

    /// The same session ended by `exit(0)` without `terminate()`: the store runs its writer's
    /// queued work at exit, so nothing handed over is lost.
    @Test(arguments: [64, 256 << 10])
    func exitWithoutTerminateLosesNothingHandedOver(padding: Int) throws {
        let steps = 12
        for _ in 0..<3 {
            let outcome = try killedSession(steps: steps, padding: padding, ending: "exit")
            #expect(
                outcome.list == steps && outcome.detail == steps && outcome.screens == 1,
                "list \(outcome.list), detail \(outcome.detail), \(outcome.screens) screens")
        }
    }

    /// A process at its thread limit (`RLIMIT_NPROC` 0 for the worker's user) cannot start the
    /// store's writer thread: the store opens all the same, says why in its warnings, and writes
    /// each structural change before returning, so a kill right after the last one loses nothing.
    @Test func aProcessAtItsThreadLimitWritesThroughAndSaysSo() throws {
        let steps = 5
        let outcome = try killedSession(steps: steps, padding: 64, ending: "threadless")
        #expect(
            outcome.list == steps && outcome.detail == steps && outcome.screens == 1,
            "list \(outcome.list), detail \(outcome.detail), \(outcome.screens) screens")
        #expect(outcome.warnings.count == 1)
        let warning = try #require(outcome.warnings.first)
        #expect(warning.contains("the write-behind thread could not be started (errno 11"), "\(warning)")
        #expect(warning.contains("written before the call that made it returns"), "\(warning)")
    }

    /// One thread short of the limit: the writer gets the last one, and the open does not wait
    /// for another (a libdispatch timer for the integrity check retried making its first
    /// thread for ever, and the open never returned). The kill then loses what the window of
    /// loss allows, as with threads to spare.
    ///
    /// As root only: the worker then counts its own threads under a user of its own; run as
    /// another user, the limit would count every thread of the test runner's user, which come
    /// and go.
    @Test(.enabled(if: geteuid() == 0, "needs root, to run the worker as a user of its own"))
    func aProcessOneThreadShortOfItsLimitStillOpensAndWritesBehind() throws {
        let steps = 5
        let outcome = try killedSession(steps: steps, padding: 64, ending: "one-spare-thread")
        #expect(outcome.warnings.isEmpty, "\(outcome.warnings)")
        #expect(outcome.list >= 1 && outcome.list <= steps)
    }
}
