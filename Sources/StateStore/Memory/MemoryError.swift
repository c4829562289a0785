import Glibc

/// An error reading or parsing the kernel's memory accounting files.
///
/// Every case names the file (or the source the caller gave, such as `"meminfo"`), and where it
/// applies the 1-based line and the offending text, so the message can be acted on without a
/// debugger. The monitor treats these as "this source is unusable", never as a reason to crash.
public enum MemoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened or read. `errno` is the C error number.
    case unreadable(path: String, errno: Int32)
    /// The file is empty, or holds nothing that looks like the expected format.
    case empty(file: String)
    /// A required key (such as `MemTotal` in `/proc/meminfo`) is missing.
    case missingKey(file: String, key: String)
    /// A value that must be a number is not one, or is a number too large to hold (`text` is
    /// then its digits).
    case invalidNumber(file: String, line: Int, key: String, text: String)
    /// A line does not have the shape the format requires.
    case malformedLine(file: String, line: Int, text: String)
    /// No memory cgroup could be found for the process.
    case cgroupNotFound(detail: String)
    /// The path is a FIFO, a device, a directory or a socket, not the regular file the kernel
    /// shows for every `/proc` and `/sys` entry; it was not read (a FIFO would block forever).
    case notARegularFile(path: String)
    /// A ``MemoryPressureMonitor/Configuration`` value the monitor cannot honour; `name` is the
    /// property, `reason` says what it is and what it must be.
    case invalidConfiguration(name: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadable(path, code):
            let reason = String(cString: strerror(code))
            return
                "cannot read \(path): \(reason) (errno \(code)); check that the path exists and that /proc and /sys are mounted"
        case let .empty(file):
            return
                "\(file) is empty or has no recognisable lines; make sure it is the kernel's file, not a truncated copy"
        case let .missingKey(file, key):
            return "\(file) has no \(key) line; it is not a complete kernel file (or the kernel is unsupported)"
        case let .invalidNumber(file, line, key, text):
            // Digits alone: a number too large to hold (as bytes, for a kB value).
            if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                return
                    "\(file) line \(line): \(key) has the value \(text), too large to hold in 64 bits; the file is corrupt or not what it claims to be"
            }
            return
                "\(file) line \(line): \(key) has the non-numeric value \(quoted(text)); the file is corrupt or not what it claims to be"
        case let .malformedLine(file, line, text):
            return "\(file) line \(line): cannot parse \(quoted(text)); the file is corrupt or in an unknown format"
        case let .notARegularFile(path):
            return
                "\(path) is not a regular file, as kernel files under /proc and /sys are; it was not read (point --root at a copy of /proc and /sys, not at pipes or devices)"
        case let .invalidConfiguration(name, reason):
            return "MemoryPressureMonitor.Configuration.\(name) \(reason)"
        case let .cgroupNotFound(detail):
            return "no memory cgroup found: \(detail); pass Configuration.cgroupPath to choose one explicitly"
        }
    }
}

private func quoted(_ text: String) -> String {
    let shown = text.count > 80 ? String(text.prefix(80)) + "…" : text
    return "\""
        + shown.unicodeScalars.map {
            $0.isASCII && $0.value >= 0x20 && $0.value < 0x7f ? String($0) : "\\u{\(String($0.value, radix: 16))}"
        }.joined() + "\""
}
