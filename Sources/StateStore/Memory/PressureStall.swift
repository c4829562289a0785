/// Pressure stall information (PSI) for one resource, parsed from `/proc/pressure/memory` or a
/// cgroup's `memory.pressure`.
///
/// `some` is the share of time at least one task stalled on the resource, `full` the share of
/// time all non-idle tasks stalled at once. Either line may be absent (older kernels have no
/// `full` for CPU; `irq` has only `full`): an absent line is `nil`, not zero.
///
/// See the kernel's [PSI documentation](https://docs.kernel.org/accounting/psi.html).
public struct PressureStall: Sendable, Equatable {
    /// One line of a PSI file.
    public struct Line: Sendable, Equatable {
        /// Percentage of wall time stalled over the last 10, 60 and 300 seconds (0–100).
        public var avg10, avg60, avg300: Double
        /// Total stall time since boot, in microseconds.
        public var total: UInt64

        /// A line with the given averages (percentages, 0–100) and total (microseconds).
        public init(avg10: Double, avg60: Double, avg300: Double, total: UInt64) {
            self.avg10 = avg10
            self.avg60 = avg60
            self.avg300 = avg300
            self.total = total
        }
    }

    /// The `some` line, or `nil` when the file has none.
    public var some: Line?
    /// The `full` line, or `nil` when the file has none.
    public var full: Line?

    /// A reading with the given lines; `nil` stands for a line the file does not have.
    public init(some: Line? = nil, full: Line? = nil) {
        self.some = some
        self.full = full
    }

    /// Parses a PSI file.
    ///
    /// A malformed number anywhere makes the whole file an error (a partial reading would be a
    /// lie); lines of unknown type are ignored so that future kernels keep working.
    ///
    /// - Throws: ``MemoryError/invalidNumber(file:line:key:text:)`` for a value that is not a
    ///   number, ``MemoryError/malformedLine(file:line:text:)`` for a `some`/`full` line missing a
    ///   field.
    public static func parse(
        _ text: String, file: String = "/proc/pressure/memory"
    ) throws(MemoryError) -> PressureStall {
        var result = PressureStall()
        var lineNumber = 0
        for rawLine in ProcFile.lines(text) {
            lineNumber += 1
            let fields = ProcFile.split(rawLine, where: ProcFile.isBlank)
            guard let kind = fields.first, kind == "some" || kind == "full" else { continue }
            var numbers: [Substring: Substring] = [:]
            for field in fields.dropFirst() {
                guard let (key, value) = ProcFile.cut(field, at: "=") else {
                    throw .malformedLine(file: file, line: lineNumber, text: String(rawLine))
                }
                numbers[key] = value
            }
            func ratio(_ key: Substring) throws(MemoryError) -> Double {
                guard let text = numbers[key] else {
                    throw .malformedLine(file: file, line: lineNumber, text: String(rawLine))
                }
                guard let value = parsePercentage(text) else {
                    throw .invalidNumber(file: file, line: lineNumber, key: "\(kind) \(key)", text: String(text))
                }
                return value
            }
            guard let totalText = numbers["total"] else {
                throw .malformedLine(file: file, line: lineNumber, text: String(rawLine))
            }
            guard let total = ProcFile.unsigned(totalText) else {
                throw .invalidNumber(file: file, line: lineNumber, key: "\(kind) total", text: String(totalText))
            }
            let line = Line(
                avg10: try ratio("avg10"), avg60: try ratio("avg60"), avg300: try ratio("avg300"), total: total)
            if kind == "some" { result.some = line } else { result.full = line }
        }
        return result
    }

    /// `12.34`-style decimals only: no signs, exponents, `nan` or `inf`.
    private static func parsePercentage(_ text: Substring) -> Double? {
        var sawDigit = false
        var sawDot = false
        for byte in text.utf8 {
            if byte >= 0x30 && byte <= 0x39 {
                sawDigit = true
            } else if byte == 0x2e && !sawDot {
                sawDot = true
            } else {
                return nil
            }
        }
        guard sawDigit, let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
