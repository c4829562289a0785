import Glibc

/// The controlling terminal: raw mode, its size, and what is written to it.
///
/// Raw mode is left on every exit the process controls: ``enterRawMode()`` registers
/// ``restore()`` with `atexit`, so a quit, the termination handlers' `exit(128 + signal)` and
/// an error's `exit(1)` all put the terminal back as they found it. Only `kill -9` cannot; then
/// `reset` (or `stty sane`) in the shell brings it back.
enum Terminal {
    /// The settings found at start, put back at exit.
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var isRaw = false

    /// Switches standard input to raw mode (no echo, no line editing, no signals from keys),
    /// shows the alternate screen and hides nothing else. Returns `false` when standard input
    /// is not a terminal.
    static func enterRawMode() -> Bool {
        guard isatty(0) == 1, tcgetattr(0, &saved) == 0 else { return false }
        var raw = saved
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        guard tcsetattr(0, TCSAFLUSH, &raw) == 0 else { return false }
        isRaw = true
        atexit { Terminal.restore() }
        write("\u{1B}[?1049h\u{1B}[H\u{1B}[2J")
        return true
    }

    /// Leaves the alternate screen and puts the terminal's settings back. Safe to call twice.
    static func restore() {
        guard isRaw else { return }
        isRaw = false
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        _ = tcsetattr(0, TCSAFLUSH, &saved)
    }

    /// The terminal's size in columns and rows (80 × 24 when it cannot say).
    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Writes `text` to standard output, all of it.
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(1, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 { if errno == EINTR { continue }; return }
            offset += written
        }
    }
}

/// A key, decoded from the bytes a terminal sends.
enum Key: Equatable {
    case character(Character)
    case up, down, left, right
    case enter, backspace, tab, escape
    case control(Character)

    /// Decodes every key in `bytes` (one read's worth).
    static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O") {
                    switch bytes[index + 2] {
                    case UInt8(ascii: "A"): keys.append(.up)
                    case UInt8(ascii: "B"): keys.append(.down)
                    case UInt8(ascii: "C"): keys.append(.right)
                    case UInt8(ascii: "D"): keys.append(.left)
                    default: break
                    }
                    index += 3
                    // Sequences with parameters (ESC [ 1 ; 5 C) end at their final byte.
                    while index < bytes.count, bytes[index - 1] < 0x40 || bytes[index - 1] > 0x7E { index += 1 }
                    continue
                }
                keys.append(.escape)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x09: keys.append(.tab)
            case 0x01...0x1A: keys.append(.control(Character(Unicode.Scalar(byte + 0x60))))
            case 0x20...0x7E: keys.append(.character(Character(Unicode.Scalar(byte))))
            case 0xC0...0xFF:
                // One UTF-8 character: its lead byte says how many follow.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                if index + length <= bytes.count, let text = String(validating: bytes[index..<index + length], as: UTF8.self),
                   let character = text.first {
                    keys.append(.character(character))
                }
                index += length
                continue
            default: break
            }
            index += 1
        }
        return keys
    }
}
