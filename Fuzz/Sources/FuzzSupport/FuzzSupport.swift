import CLibFuzzer
import Foundation
import Glibc
import Synchronization

/// Runs libFuzzer on the target's `LLVMFuzzerTestOneInput` with the program's arguments
/// (`-max_total_time=60 corpus/` ...) and exits with its status. Each target's `main.swift` calls
/// this; the target defines `LLVMFuzzerTestOneInput` with `@_cdecl`.
public func runLibFuzzer() -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv) { data, count in
        // libFuzzer may pass a null pointer for the empty input.
        withUnsafeBytes(of: UInt8(0)) { empty in
            LLVMFuzzerTestOneInput(
                data ?? empty.baseAddress!.assumingMemoryBound(to: UInt8.self), data == nil ? 0 : count)
        }
    }
    exit(status)
}

/// What every fuzz target shares: turning libFuzzer's bytes into the text a parser sees, and
/// checking an invariant so that a violation is a crash libFuzzer records, like a trap.
public enum FuzzInput {
    /// The bytes as the library reads a kernel file: invalid UTF-8 repaired, never rejected
    /// (`ProcFile.read` does exactly this).
    public static func text(_ start: UnsafeRawPointer, _ count: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    }

    /// The raw bytes.
    public static func bytes(_ start: UnsafeRawPointer, _ count: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: start, count: count))
    }
}

/// Stops the run when an invariant does not hold; libFuzzer saves the input as a crash.
public func invariant(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() {
        fatalError("invariant violated: \(message())", file: file, line: line)
    }
}

/// The lines of `text` as the parsers count them (split on "\n" scalars, empty ones kept), for
/// checking the line numbers errors report.
public func lineCount(_ text: String) -> Int {
    text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
}

/// `text` split on scalars, as the kernel's byte formats (and now the parsers) split.
public func scalarSplit(_ text: Substring, where isSeparator: (Unicode.Scalar) -> Bool) -> [Substring] {
    text.unicodeScalars.split(whereSeparator: isSeparator).map(Substring.init)
}

/// A fresh folder named `prefix.XXXXXX` under `base` (made with `mkdtemp`), removed when the
/// process exits normally; a crash leaves it, with the input that crashed inside.
public func temporaryFolder(_ prefix: String, in base: String = NSTemporaryDirectory()) -> String {
    var template = Array(URL(fileURLWithPath: base).appendingPathComponent("\(prefix).XXXXXX").path.utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot make a temporary folder in \(base)") }
    let path = String(cString: made)
    let first = madeFolders.withLock { folders in
        folders.append(path)
        return folders.count == 1
    }
    if first {
        atexit {
            for folder in madeFolders.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: folder) }
        }
    }
    return path
}

/// The folders ``temporaryFolder(_:in:)`` made, for removing them at exit.
private let madeFolders = Mutex<[String]>([])
