/// The kernel's view of system memory, parsed from `/proc/meminfo`.
///
/// Every `Key: value kB` line is kept, converted to bytes; lines without a unit (such as
/// `HugePages_Total: 0`) are counts and are kept as they are. The Linux 2.4-style table some
/// kernels print first (`total: used: free: …`, `Mem:`, `Swap:`) is skipped.
///
/// See [`proc_meminfo(5)`](https://man7.org/linux/man-pages/man5/proc_meminfo.5.html).
public struct MemInfo: Sendable, Equatable {
    /// Every line of the file, in bytes for `kB` lines and as a count for unitless ones.
    public private(set) var values: [String: UInt64]
    /// `MemTotal`, in bytes.
    public var total: UInt64
    /// `MemAvailable` in bytes, or the estimate described at ``availableIsEstimated``.
    public var available: UInt64
    /// `MemFree`, in bytes (0 when the file has no `MemFree` line).
    public var free: UInt64
    /// `true` when the file has no `MemAvailable` line (kernels before 3.14) and ``available`` is
    /// `MemFree + Buffers + Cached + SReclaimable − Shmem`, clamped to `0...MemTotal`.
    public var availableIsEstimated: Bool

    /// The value of any line: bytes for `kB` lines, the count for unitless ones; `nil` when absent.
    public subscript(key: String) -> UInt64? { values[key] }

    /// Creates a value from already-known numbers (bytes), for tests and synthetic samples.
    public init(total: UInt64, available: UInt64, free: UInt64? = nil) {
        self.total = total
        self.available = min(available, total)
        self.free = free ?? min(available, total)
        self.availableIsEstimated = false
        self.values = ["MemTotal": total, "MemAvailable": self.available, "MemFree": self.free]
    }

    private init(values: [String: UInt64], total: UInt64) {
        self.values = values
        self.total = total
        self.free = values["MemFree"] ?? 0
        if let available = values["MemAvailable"] {
            self.available = available
            self.availableIsEstimated = false
        } else {
            var gains: UInt64 = 0
            for key in ["MemFree", "Buffers", "Cached", "SReclaimable"] {
                let (sum, overflow) = gains.addingReportingOverflow(values[key] ?? 0)
                gains = overflow ? .max : sum
            }
            let shmem = values["Shmem"] ?? 0
            let estimate = gains > shmem ? gains - shmem : 0
            self.available = min(estimate, total)
            self.availableIsEstimated = true
        }
    }

    /// Parses the text of `/proc/meminfo`.
    ///
    /// - Parameters:
    ///   - text: the file's contents; a missing final newline is fine.
    ///   - file: the name used in error messages.
    /// - Throws: ``MemoryError/missingKey(file:key:)`` without `MemTotal`,
    ///   ``MemoryError/invalidNumber(file:line:key:text:)`` for a value that is not a number,
    ///   ``MemoryError/malformedLine(file:line:text:)`` for a line that is not `Key: value [kB]`,
    ///   ``MemoryError/empty(file:)`` for an empty file.
    public static func parse(_ text: String, file: String = "/proc/meminfo") throws(MemoryError) -> MemInfo {
        var values: [String: UInt64] = [:]
        var sawLine = false
        var lineNumber = 0
        for rawLine in ProcFile.lines(text) {
            lineNumber += 1
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { continue }
            sawLine = true
            guard let (name, rest) = ProcFile.cut(line, at: ":") else {
                throw .malformedLine(file: file, line: lineNumber, text: String(rawLine))
            }
            let key = String(name)
            let fields = ProcFile.split(rest, where: ProcFile.isBlank)
            // Linux 2.4 printed a table first: a header `total: used: free: …` and rows
            // `Mem: n n n …` / `Swap: n n n`. Its keys are not meminfo keys; skip it.
            if isLegacyTable(key: key, fields: fields) { continue }
            guard !key.isEmpty, !key.contains(" "),
                key.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7f })
            else {
                throw .malformedLine(file: file, line: lineNumber, text: String(rawLine))
            }
            guard fields.count == 1 || fields.count == 2 else {
                if fields.isEmpty { throw .invalidNumber(file: file, line: lineNumber, key: key, text: "") }
                throw .malformedLine(file: file, line: lineNumber, text: String(rawLine))
            }
            guard let number = ProcFile.unsigned(fields[0]) else {
                throw .invalidNumber(file: file, line: lineNumber, key: key, text: String(fields[0]))
            }
            if fields.count == 2 {
                guard fields[1] == "kB" else {
                    throw .malformedLine(file: file, line: lineNumber, text: String(rawLine))
                }
                let (bytes, overflow) = number.multipliedReportingOverflow(by: 1024)
                if overflow { throw .invalidNumber(file: file, line: lineNumber, key: key, text: String(fields[0])) }
                values[key] = bytes
            } else {
                values[key] = number
            }
        }
        guard sawLine else { throw .empty(file: file) }
        guard let total = values["MemTotal"] else { throw .missingKey(file: file, key: "MemTotal") }
        return MemInfo(values: values, total: total)
    }

    private static func isLegacyTable(key: String, fields: [Substring]) -> Bool {
        switch key {
        case "total":
            // header: `total:    used:    free:  shared: buffers:  cached:`
            return fields.allSatisfy { $0.hasSuffix(":") }
        case "Mem", "Swap":
            return fields.count >= 3 && fields.allSatisfy { ProcFile.unsigned($0) != nil }
        default:
            return false
        }
    }
}
