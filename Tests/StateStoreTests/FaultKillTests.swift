import Foundation
import Testing

@testable import StateStore

/// kill -9 at random moments: every save acknowledged before the kill is on disk, intact.
@Suite("Faults: SIGKILL while saving", .hangGuard(minutes: 10))
struct FaultKillTests {
    /// 200 by default; `STATESTORE_KILL_ITERATIONS=1000 swift test --filter FaultKill` for a longer run.
    static let iterations = Int(ProcessInfo.processInfo.environment["STATESTORE_KILL_ITERATIONS"] ?? "") ?? 200

    struct Ack {
        var generation: Int64
        var checksum: Int64
    }

    @Test func everyAcknowledgedSaveSurvivesSIGKILL() throws {
        let worker = try builtProduct("statestore-worker")
        let folder = TemporaryFolder()
        let database = folder.file("state.sqlite")
        var generator = SystemRandomNumberGenerator()
        var acknowledged: [String: Ack] = [:]
        var totalAcks = 0
        var killedBeforeFirstAck = 0

        for _ in 0..<Self.iterations {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: worker)
            process.arguments = ["save-loop", database, "40"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 5_000...90_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)

            var acks = 0
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                #expect(fields.first != "error", "the worker reported: \(line)")
                guard fields.count == 4, fields[0] == "ack",
                    let generation = Int64(fields[2]), let checksum = Int64(fields[3])
                else { continue }
                acknowledged[String(fields[1])] = Ack(generation: generation, checksum: checksum)
                acks += 1
            }
            totalAcks += acks
            if acks == 0 { killedBeforeFirstAck += 1 }

            let store = try StateStore(path: database)
            for (path, ack) in acknowledged {
                let stored = try #require(
                    try store.state(at: RestorationPath(validating: path)), "acknowledged \(path) is gone")
                #expect(stored.checksumIsValid)
                #expect(
                    stored.generation >= ack.generation,
                    "\(path) went back from generation \(ack.generation) to \(stored.generation)")
                if stored.generation == ack.generation {
                    #expect(stored.checksum == ack.checksum)
                }
            }
        }
        let health = try StateStore(path: database).check()
        #expect(health.integrity == ["ok"])
        #expect(health.checksumMismatches.isEmpty)
        #expect(totalAcks > Self.iterations, "the kills came too early to test anything")
        print(
            "kill -9: \(Self.iterations) kills, \(totalAcks) acknowledged saves verified, \(killedBeforeFirstAck) kills before the first save"
        )
    }
}
