import Foundation
import Testing

@testable import StateStore

/// Two processes on one database: the busy timeout and `BEGIN IMMEDIATE` keep every
/// lock wait inside the store, so no caller ever sees `.busy`.
@Suite("Faults: two processes on one database", .hangGuard(minutes: 10))
struct FaultContentionTests {
    /// 30 s by default, as the fault suite promises; `STATESTORE_CONTENTION_SECONDS` changes it.
    static let seconds = ProcessInfo.processInfo.environment["STATESTORE_CONTENTION_SECONDS"] ?? "30"

    @Test func twoProcessesWritingAndReadingSeeNoBusyError() throws {
        let worker = try builtProduct("statestore-worker")
        let folder = TemporaryFolder()
        let database = folder.file("state.sqlite")
        _ = try StateStore(path: database)
        let processes = try ["a", "b"].map { name in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: worker)
            process.arguments = ["contend", database, Self.seconds, name]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            return (process, pipe)
        }
        var totalSaves = 0
        for (process, pipe) in processes {
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let last = output.split(separator: "\n").last.map(String.init) ?? ""
            let fields = last.split(separator: " ")
            #expect(process.terminationStatus == 0, "worker output: \(output.prefix(2000))")
            #expect(fields.first == "done")
            #expect(fields.count == 4 && fields[3] == "0", "errors reached the caller: \(output.prefix(2000))")
            totalSaves += fields.count == 4 ? Int(fields[1]) ?? 0 : 0
        }
        #expect(totalSaves > 100)
        let health = try StateStore(path: database).check()
        #expect(health.integrity == ["ok"])
        #expect(health.checksumMismatches.isEmpty)
        print("contention: \(Self.seconds) s, \(totalSaves) saves by two processes, no busy error")
    }
}
