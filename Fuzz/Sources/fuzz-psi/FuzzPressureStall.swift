import FuzzSupport
import StateStore

// `PressureStall.parse` on arbitrary text (the format of /proc/pressure/* and a cgroup's
// memory.pressure), then grading a sample that carries the result.
//
// Invariants (from PressureStall.swift):
// - parse never traps; a failure is a `MemoryError.invalidNumber` or `.malformedLine` naming
//   the file given, with a line number inside the text;
// - on success every average is a finite, non-negative number (signs, exponents, nan and inf
//   are refused), and a line is present only if the text has a line starting with its kind;
// - grading a sample with it never traps.
private let file = "fuzz/pressure"
private let configuration = MemoryPressureMonitor.Configuration()
private let meminfo = MemInfo(total: 8 << 30, available: 4 << 30)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = FuzzInput.text(start, count)
    let stall: PressureStall
    do {
        stall = try PressureStall.parse(text, file: file)
    } catch {
        switch error {
        case let .invalidNumber(name, line, _, _), let .malformedLine(name, line, _):
            invariant(name == file, "error names \(name), not \(file)")
            let lines = lineCount(text)
            invariant(line >= 1 && line <= lines, "error line \(line) outside 1...\(lines)")
        default:
            invariant(false, "parse threw \(error), which it never should")
        }
        invariant(!error.description.isEmpty, "empty error description")
        return 0
    }
    for (kind, line) in [("some", stall.some), ("full", stall.full)] {
        guard let line else { continue }
        for value in [line.avg10, line.avg60, line.avg300] {
            invariant(value.isFinite && value >= 0, "\(kind) average \(value) is not a finite non-negative number")
        }
        invariant(text.contains(kind), "a \(kind) line was reported but the text has none")
    }
    let sample = MemorySample(meminfo: meminfo, pressure: stall)
    _ = configuration.instantaneousLevel(for: sample)
    _ = configuration.pollingInterval(for: sample)
    return 0
}
