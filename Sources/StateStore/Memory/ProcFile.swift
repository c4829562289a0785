import Glibc

/// Reads small kernel files (`/proc`, `/sys`) with plain `read(2)`: they report a size of 0, so
/// anything that trusts `stat` would read nothing. An empty file (`cgroup.procs` of an empty
/// cgroup) costs nothing either, where Foundation's `String(contentsOfFile:)` and
/// `FileManager.contents(atPath:)` in Swift 6.3 leak a 4 KiB buffer each time.
package enum ProcFile {
    /// The whole file as text. Invalid UTF-8 is repaired, not rejected: parsers decide what is garbage.
    package static func read(_ path: String, limit: Int = 1 << 20) throws(MemoryError) -> String {
        // O_NONBLOCK: opening a FIFO must not wait for a writer. Kernel files are regular.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        if fd < 0 { throw .unreadable(path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path: path) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The file's text, or `nil` when it does not exist or cannot be read.
    package static func readIfPresent(_ path: String) -> String? {
        try? read(path)
    }

    /// Whether a path exists.
    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Joins a root standing in for `/` with an absolute path.
    static func join(_ root: String, _ path: String) -> String {
        var base = root
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        if base == "/" || base.isEmpty { return path.hasPrefix("/") ? path : "/" + path }
        return base + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// Splits kernel text where `isSeparator` says, on single Unicode scalars, as the kernel's
    /// byte-oriented formats mean it. Never on `Character`s: "\r\n" is one Character (a CRLF file
    /// would be one long line), and a space, ':' or '=' followed by a combining mark is one
    /// Character too (it would stop separating, and fields would run together).
    static func split(
        _ text: Substring, maxSplits: Int = .max, omittingEmpty: Bool = true,
        where isSeparator: (Unicode.Scalar) -> Bool
    ) -> [Substring] {
        text.unicodeScalars.split(
            maxSplits: maxSplits, omittingEmptySubsequences: omittingEmpty, whereSeparator: isSeparator
        )
        .map(Substring.init)
    }

    /// The lines of `text`, split on "\n" scalars; a "\r\n" ending counts as "\n" (its "\r" is
    /// dropped). Empty lines are kept unless `omittingEmpty`, so that line numbers stay right.
    static func lines(_ text: String, omittingEmpty: Bool = false) -> [Substring] {
        split(Substring(text), omittingEmpty: false) { $0 == "\n" }.compactMap { line in
            let trimmed = line.unicodeScalars.last == "\r" ? Substring(line.unicodeScalars.dropLast()) : line
            return omittingEmpty && trimmed.isEmpty ? nil : trimmed
        }
    }

    /// Space, tab or carriage return: what separates fields in /proc and cgroup files.
    static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\r"
    }

    /// The text before and after the first `separator` scalar, or `nil` when there is none.
    static func cut(_ text: Substring, at separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        guard let index = text.unicodeScalars.firstIndex(of: separator) else { return nil }
        return (
            Substring(text.unicodeScalars[..<index]),
            Substring(text.unicodeScalars[text.unicodeScalars.index(after: index)...])
        )
    }

    /// Parses a decimal unsigned integer, without the quirks of `Int(_:)` (no sign, no spaces).
    static func unsigned(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }
}
