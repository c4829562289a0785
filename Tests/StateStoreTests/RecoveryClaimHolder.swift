import Foundation
import Testing

/// Another process holding a recovery's claim on `<file>.recovering-lock` (an exclusive `flock`, as a
/// recovery under way holds it), until ``release()``: `flock(1)` running `cat` on a pipe.
final class RecoveryClaimHolder {
    private let process = Process()
    private let input = Pipe()

    /// Returns once the lock on `file` is held (`flock` makes the file when it is missing).
    init(_ file: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["flock", "--exclusive", file, "sh", "-c", "echo held; exec cat"]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("held\n") {
            let chunk = output.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "flock ended before it held \(file)")
            seen.append(chunk)
        }
    }

    /// Lets go: the process ends, and the kernel drops its lock.
    func release() throws {
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
