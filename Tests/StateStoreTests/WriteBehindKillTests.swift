import Foundation
import Testing
@testable import StateStore

/// kill -9 right after a disappearance, with saves still with the write-behind writer: the
/// database holds everything up to the last flush point and then a prefix of the later
/// structural changes, in order, each whole — what the documented window allows, nothing more.
@Suite("Write-behind: SIGKILL right after a disappearance", .timeLimit(.minutes(5)))
struct WriteBehindKillTests {
    struct StepState: Codable, Sendable { var step: Int; var padding: String }

    struct Outcome { var list: Int; var detail: Int; var screens: Int }

    /// Runs `statestore-worker writebehind-kill` once and reads what survived.
    func killedSession(steps: Int, padding: Int, exiting: Bool = false) throws -> Outcome {
        let folder = TemporaryFolder("writebehind-kill")
        let database = folder.file("state.sqlite")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments = ["writebehind-kill", database, String(steps), String(padding)] + (exiting ? ["exit"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if exiting {
            #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        } else {
            #expect(process.terminationReason == .uncaughtSignal)
            #expect(process.terminationStatus == SIGKILL)
        }
        #expect(text.split(separator: "\n") == ["flushed 1", "handed \(steps)"])

        let store = try StateStore(path: database, options: .init(readOnly: true))
        let list = try #require(try store.restore(StepState.self, for: "nav/list"), "the flushed list state is gone")
        let detail = try #require(try store.restore(StepState.self, for: "nav/detail"), "the flushed detail state is gone")
        let archive = try HierarchyArchive(decoding: try #require(try store.hierarchyArchive()))
        #expect(list.padding.count == padding && detail.padding.count == padding)
        #expect(try store.check().integrity == ["ok"])
        return Outcome(list: list.step, detail: detail.step, screens: archive.root?.children.count ?? 0)
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
            let outcome = try killedSession(steps: steps, padding: padding, exiting: true)
            #expect(outcome.list == steps && outcome.detail == steps && outcome.screens == 1,
                    "list \(outcome.list), detail \(outcome.detail), \(outcome.screens) screens")
        }
    }
}
