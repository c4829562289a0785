import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How ``StateExport`` documents, and the package's own tools, write sizes, times and checksums
/// as text. Visible to the package's executables (`statectl` formats all its output with it),
/// not to the library's clients.
package enum TextFormat {
    /// `512 B`, `1.5 KiB`, `2.0 MiB`.
    package static func bytes<I: BinaryInteger>(_ count: I) -> String {
        let value = Double(count)
        if value < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var scaled = value / 1024
        var unit = 0
        while scaled >= 1024 && unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        // `%.1f` without a format string (which costs a CFString per call, the better part of
        // listing a million states): `scaled` times ten is exact for any count below 2^49
        // bytes, so rounding it to an integer, ties to even, is what printf's correct rounding
        // gives. Larger counts (only a damaged row holds one) go through printf itself.
        guard value < 0x1p49 else { return String(format: "%.1f", scaled) + " " + units[unit] }
        let tenths = Int((scaled * 10).rounded(.toNearestOrEven))
        return "\(tenths / 10).\(tenths % 10) " + units[unit]
    }

    /// The times ISO 8601 can write with four-digit years, 0000-01-01 to 9999-12-31, in
    /// milliseconds; an export document carries exactly these.
    package static let representableMilliseconds: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// Milliseconds since 1970, saturating instead of trapping for a date from a damaged row.
    package static func milliseconds(_ date: Date) -> Int64 { date.storedMilliseconds }

    /// Whether `date` can be written and read back exactly (see ``representableMilliseconds``).
    package static func isRepresentable(_ date: Date) -> Bool { representableMilliseconds.contains(milliseconds(date)) }

    /// Broken-down UTC time and the milliseconds past its second; a time outside
    /// ``representableMilliseconds`` is given at its bound.
    package static func utcComponents(_ milliseconds: Int64) -> (tm, Int64) {
        let milliseconds = min(
            max(milliseconds, representableMilliseconds.lowerBound), representableMilliseconds.upperBound)
        let seconds = Int(floor(Double(milliseconds) / 1000))
        let fraction = milliseconds - Int64(seconds) * 1000
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return (parts, fraction)
    }

    /// ISO 8601 in UTC with milliseconds: `2026-01-02T03:04:05.678Z`.
    package static func iso8601(_ date: Date) -> String { iso8601(milliseconds: milliseconds(date)) }

    /// ISO 8601 in UTC with milliseconds, of a time in milliseconds since 1970.
    package static func iso8601(milliseconds: Int64) -> String {
        dateTime(milliseconds: milliseconds, separator: "T", fraction: true)
    }

    /// A time in UTC as `YYYY-MM-DD`, `separator`, `hh:mm:ss`, then `.fff` and `Z` with
    /// `fraction`: what `%04d-%02d-%02dT%02d:%02d:%02d.%03dZ` writes, without
    /// `String(format:)`'s variadic arguments (an export and a listing write one or two a
    /// row). Times are clamped to ``representableMilliseconds``, so the year has four digits.
    package static func dateTime(milliseconds: Int64, separator: String, fraction withFraction: Bool) -> String {
        let (parts, fraction) = utcComponents(milliseconds)
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int, width: Int, then next: String) {
            let digits = String(value)
            if digits.utf8.count < width { text += String(repeating: "0", count: width - digits.utf8.count) }
            text += digits
            text += next
        }
        append(Int(parts.tm_year) + 1900, width: 4, then: "-")
        append(Int(parts.tm_mon) + 1, width: 2, then: "-")
        append(Int(parts.tm_mday), width: 2, then: separator)
        append(Int(parts.tm_hour), width: 2, then: ":")
        append(Int(parts.tm_min), width: 2, then: ":")
        if withFraction {
            append(Int(parts.tm_sec), width: 2, then: ".")
            append(Int(fraction), width: 3, then: "Z")
        } else {
            append(Int(parts.tm_sec), width: 2, then: "")
        }
        return text
    }

    /// Parses what ``iso8601(milliseconds:)`` writes (fraction optional, `Z` or `+00:00`) into
    /// milliseconds; `nil` for anything else, a day the month does not have included.
    package static func parseISO8601(_ text: String) -> Int64? {
        let utf8 = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= utf8.count else { return nil }
            var value = 0
            for byte in utf8[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard utf8.count >= 20, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"),
            utf8[10] == UInt8(ascii: "T"), utf8[13] == UInt8(ascii: ":"), utf8[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        // The day must exist in that month (no 2026-02-30 quietly becoming March 2nd).
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        guard day <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] else { return nil }
        var index = 19
        var fraction = 0
        if utf8[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < utf8.count, utf8[index] >= 0x30, utf8[index] <= 0x39 {
                if digits < 3 { fraction = fraction * 10 + Int(utf8[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { fraction *= 10 }
        }
        let zone = String(decoding: utf8[index...], as: UTF8.self)
        guard zone == "Z" || zone == "+00:00" else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Int64(seconds) * 1000 + Int64(fraction)
    }

    /// A signed 64-bit checksum as 16 hex digits.
    package static func checksum(_ value: Int64) -> String {
        let hex = String(UInt64(bitPattern: value), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
