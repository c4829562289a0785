import Foundation

/// Helpers shared by the memory tests.
enum MemoryFixtures {
    /// `Tests/StateStoreTests/Fixtures/proc`.
    static let procDirectory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/proc").path
    }()

    /// The text of a fixture file, such as `"procfs/meminfo"`.
    static func text(_ relativePath: String) throws -> String {
        try String(contentsOfFile: procDirectory + "/" + relativePath, encoding: .utf8)
    }

    /// Writes `contents` at `root + path`, creating folders.
    static func write(_ contents: String, to path: String, in root: String) throws {
        let full = root + path
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(toFile: full, atomically: true, encoding: .utf8)
    }

    /// A minimal meminfo with the given totals in kB.
    static func meminfo(totalKB: UInt64, availableKB: UInt64) -> String {
        """
        MemTotal:       \(totalKB) kB
        MemFree:        \(availableKB / 2) kB
        MemAvailable:   \(availableKB) kB
        Buffers:        0 kB
        Cached:         0 kB

        """
    }
}
