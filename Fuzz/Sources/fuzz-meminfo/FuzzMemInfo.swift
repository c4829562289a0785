import FuzzSupport
import StateStore

// `MemInfo.parse` on arbitrary text, then everything the monitor computes from a reading.
//
// Invariants (from MemInfo.swift, MemorySample.swift and the monitor's grading):
// - parse never traps; a failure is a `MemoryError` naming the file given, with a line number
//   inside the text and a description that can be printed;
// - on success `total` is the `MemTotal` line, `free` the `MemFree` line (or 0),
//   `availableIsEstimated` exactly when there is no `MemAvailable` line, `available` that line
//   when present, else an estimate clamped to `0...total`;
// - every key kept is printable ASCII without spaces or ':';
// - a sample built from it has `effectiveAvailable <= effectiveTotal` and an available percentage
//   in 0...100; grading and the polling interval never trap and the interval stays within the
//   configured bounds.
private let file = "fuzz/meminfo"
private let configuration = MemoryPressureMonitor.Configuration()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = FuzzInput.text(start, count)
    let info: MemInfo
    do {
        info = try MemInfo.parse(text, file: file)
    } catch {
        check(error, text: text)
        return 0
    }
    invariant(info["MemTotal"] == info.total, "total \(info.total) is not the MemTotal line")
    invariant(info.free == (info["MemFree"] ?? 0), "free is not the MemFree line")
    invariant(
        info.availableIsEstimated == (info["MemAvailable"] == nil), "availableIsEstimated disagrees with the file")
    if info.availableIsEstimated {
        invariant(info.available <= info.total, "estimated available \(info.available) > total \(info.total)")
    } else {
        invariant(info.available == info["MemAvailable"], "available is not the MemAvailable line")
    }
    for key in info.values.keys {
        invariant(
            !key.isEmpty && key.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ":") },
            "key \(key.debugDescription) is not printable ASCII without spaces or ':'")
    }

    let sample = MemorySample(meminfo: info)
    invariant(sample.effectiveTotal == info.total, "effectiveTotal without a cgroup is not MemTotal")
    invariant(sample.effectiveAvailable <= sample.effectiveTotal, "effectiveAvailable > effectiveTotal")
    let percent = sample.availablePercent
    invariant(percent >= 0 && percent <= 100, "availablePercent \(percent) outside 0...100")
    _ = configuration.instantaneousLevel(for: sample)
    let interval = configuration.pollingInterval(for: sample)
    invariant(
        interval >= configuration.minimumPollingInterval && interval <= configuration.maximumPollingInterval,
        "polling interval \(interval) outside the configured bounds")
    return 0
}

private func check(_ error: MemoryError, text: String) {
    let lines = lineCount(text)
    switch error {
    case let .empty(name), let .missingKey(name, _):
        invariant(name == file, "error names \(name), not \(file)")
    case let .invalidNumber(name, line, _, _), let .malformedLine(name, line, _):
        invariant(name == file, "error names \(name), not \(file)")
        invariant(line >= 1 && line <= lines, "error line \(line) outside 1...\(lines)")
    case .unreadable, .cgroupNotFound, .notARegularFile, .invalidConfiguration:
        invariant(false, "parse threw \(error), which only file access may throw")
    }
    invariant(!error.description.isEmpty, "empty error description")
}
