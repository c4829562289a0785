import ArgumentParser
import Foundation

/// The one grammar of every duration option (`monitor --interval`, `prune --older-than`,
/// `soak --duration`): one or more numbers, each with a unit — `ms`, `s`, `m`, `h`, `d`, `w` —
/// as in `500ms`, `1.5s`, `90m`, `1d12h`; a bare number is seconds. At most 100 years, and
/// exact to the millisecond; anything else is a usage error that says so.
struct DurationValue: Sendable, Hashable, CustomStringConvertible {
    static let maximumMilliseconds: Int64 = 100 * 365 * 86_400_000

    /// The value, in whole milliseconds.
    let milliseconds: Int64
    /// The text it was parsed from, for messages and documents.
    let description: String

    var duration: Duration { .milliseconds(milliseconds) }
    var seconds: Double { Double(milliseconds) / 1000 }

    init(parsing text: String) throws(ValidationError) {
        func refuse(_ why: String) -> ValidationError {
            ValidationError(
                "\"\(text)\" is not a duration: \(why). Use a number and a unit (ms, s, m, h, d, w), e.g. 500ms, 90s, 15m, 1d12h."
            )
        }
        let units: [(String, Double)] = [
            ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000), ("w", 604_800_000),
        ]
        var total = 0.0
        var rest = Substring(text)
        if rest.isEmpty { throw refuse("it is empty") }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number), value.isFinite else {
                throw refuse("expected a number at \"\(rest)\"")
            }
            rest = rest.dropFirst(number.count)
            let unitText = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unitText.count)
            let scale: Double
            if unitText.isEmpty {
                guard rest.isEmpty, total == 0 else { throw refuse("\"\(number)\" has no unit") }
                scale = 1000
            } else if let unit = units.first(where: { $0.0 == unitText }) {
                scale = unit.1
            } else {
                throw refuse("\"\(unitText)\" is not a unit")
            }
            total += value * scale
            guard total <= Double(Self.maximumMilliseconds) else { throw refuse("it is longer than 100 years") }
        }
        milliseconds = Int64(total.rounded())
        description = text
    }

    /// `minimum` or longer, else a usage error naming `option`.
    func requiring(atLeast minimum: Int64, _ option: String) throws(ValidationError) -> DurationValue {
        guard milliseconds >= minimum else {
            throw ValidationError(
                "\(option) must be at least \(minimum < 1000 ? "\(minimum)ms" : "\(minimum / 1000)s"), not \(description)."
            )
        }
        return self
    }
}

/// The one grammar of every size option (`soak --memory-limit`, `export`/`import --max-state-size`):
/// a number and an optional unit — `B`; `K`, `M`, `G`, `T` and `KiB`, `MiB`, `GiB`, `TiB` (powers
/// of 1024, as `free` and cgroup files count); `KB`, `MB`, `GB`, `TB` (powers of 1000). At most 1 PiB.
struct SizeValue: Sendable, Hashable, CustomStringConvertible {
    static let maximumBytes: Int64 = 1 << 50

    let bytes: Int64
    let description: String

    init(parsing text: String) throws(ValidationError) {
        func refuse(_ why: String) -> ValidationError {
            ValidationError(
                "\"\(text)\" is not a size: \(why). Use a number and a unit, e.g. 512KiB, 256MiB, 1GiB, 1.5G.")
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard !number.isEmpty, let value = Double(number), value.isFinite else {
            throw refuse("expected a number first")
        }
        let unit = trimmed.dropFirst(number.count).trimmingCharacters(in: .whitespaces)
        let scales: [String: Double] = [
            "": 1, "B": 1,
            "K": 0x1p10, "KiB": 0x1p10, "M": 0x1p20, "MiB": 0x1p20, "G": 0x1p30, "GiB": 0x1p30, "T": 0x1p40,
            "TiB": 0x1p40,
            "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
        ]
        guard let scale = scales[unit] else { throw refuse("\"\(unit)\" is not a unit") }
        let total = (value * scale).rounded()
        guard total <= Double(Self.maximumBytes) else { throw refuse("it is larger than 1 PiB") }
        bytes = Int64(total)
        description = text
    }

    /// Between `range`'s bounds, else a usage error naming `option`.
    func requiring(_ range: ClosedRange<Int64>, _ option: String) throws(ValidationError) -> SizeValue {
        guard range.contains(bytes) else {
            throw ValidationError(
                "\(option) must be between \(Format.bytes(range.lowerBound)) and \(Format.bytes(range.upperBound)), not \(description)."
            )
        }
        return self
    }
}
