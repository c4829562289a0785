import Glibc

/// The controlling terminal: raw mode, its size, and what is written to it.
///
/// Raw mode is left on every exit the process controls: ``enterRawMode()`` registers
/// ``restore()`` with `atexit`, so a quit, the termination handlers' `exit(128 + signal)` and
/// an error's `exit(1)` all put the terminal back as they found it. A death the process cannot
/// catch (`kill -9`, a crash, SIGQUIT's core dump) cannot; then `reset` (or `stty sane`) in the
/// shell brings it back.
enum Terminal {
    /// The settings found at start, put back at exit.
    nonisolated(unsafe) private static let saved = settings()
    /// The app's settings, put back when the process continues after a stop.
    nonisolated(unsafe) private static let raw = settings()
    nonisolated(unsafe) private static var isRaw = false

    /// Room for one `termios`, allocated rather than a static variable: Swift 6.3 lays out a
    /// static `termios` variable without the struct's 3 bytes of padding after `c_cc` (57 bytes
    /// instead of 60), so `tcgetattr` writing a whole `termios` into one wrote 3 bytes past it,
    /// as did Swift's own copies (AddressSanitizer's global-buffer-overflow).
    private static func settings() -> UnsafeMutablePointer<termios> {
        let pointer = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        pointer.initialize(to: termios())
        return pointer
    }
    /// Suspended by ``suspend()``, until ``resumed()`` finds the app in the foreground again.
    /// Nothing is drawn meanwhile: the terminal is the shell's.
    nonisolated(unsafe) private(set) static var isSuspended = false

    /// Whether the app's process group is the terminal's foreground group: what `fg` makes it,
    /// and `bg` or a `kill -CONT` from elsewhere does not. A terminal that is not the
    /// process's controlling terminal (`setsid`) has no foreground group: the app is its only user.
    static var isForeground: Bool {
        let group = tcgetpgrp(0)
        return group == -1 || group == getpgrp()
    }

    /// Switches standard input to raw mode (no echo, no line editing, no signals from keys),
    /// shows the alternate screen and hides nothing else. Returns `false` when standard input
    /// is not a terminal.
    static func enterRawMode() -> Bool {
        guard isatty(0) == 1, tcgetattr(0, saved) == 0 else { return false }
        raw.pointee = saved.pointee
        raw.pointee.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.pointee.c_oflag &= ~tcflag_t(OPOST)
        raw.pointee.c_cflag |= tcflag_t(CS8)
        raw.pointee.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        guard tcsetattr(0, TCSAFLUSH, raw) == 0 else { return false }
        isRaw = true
        atexit { Terminal.restore() }
        write(enterScreen)
        return true
    }

    /// The alternate screen, cleared, with bracketed paste on (a paste arrives between
    /// `ESC [200~` and `ESC [201~`, so its control characters are text, not commands).
    private static let enterScreen = "\u{1B}[?1049h\u{1B}[?2004h\u{1B}[H\u{1B}[2J"

    /// Ctrl-z, which raw mode reads as a key: the terminal goes back to the shell as it was
    /// found, and the job stops (SIGTSTP to the process group, a wrapping script included, as
    /// the terminal's own ctrl-z would); `fg` continues it, and ``resumed()`` takes the
    /// terminal again.
    static func suspend() {
        guard isRaw else { return }
        restore()
        isSuspended = true
        stoppedAfter = continuations
        kill(0, SIGTSTP)
    }

    /// The continuations (SIGCONT) the app has seen, and the one after which it last stopped
    /// itself: one stop per continuation. Two resumes follow a `bg` (its SIGCONT's, and the one
    /// a suspend schedules) and both find the app in the background; a stop the process sends
    /// itself is taken by another thread and lands while the main thread runs on, so a second
    /// stop, checked before the first landed and sent after `fg` continued the app, would stop
    /// it again in the foreground.
    nonisolated(unsafe) private static var continuations = 0
    nonisolated(unsafe) private static var stoppedAfter = -1

    /// The process was continued (SIGCONT): ``resumed()``, for this continuation.
    @discardableResult
    static func continued() -> Bool {
        continuations += 1
        return resumed()
    }

    /// The process continued (SIGCONT), or a suspend did not stop it (a process group without
    /// job control ignores SIGTSTP). In the foreground (`fg`): raw mode again, set after any
    /// stop since a shell may reset the terminal meanwhile, and the app's screen after a
    /// suspend; returns `true`, and the caller redraws. In the background (`bg`, a `kill -CONT`
    /// while the shell has the terminal): the process stops again (SIGTTOU, as a program that
    /// writes to the terminal from the background does) and the terminal stays the shell's.
    @discardableResult
    static func resumed() -> Bool {
        guard isRaw || isSuspended else { return false }
        guard isForeground else {
            if isRaw {
                // Keeps what the user typed at the shell meanwhile.
                restore(discardingInput: false)
                isSuspended = true
            }
            // A stop already sent for this continuation is on its way.
            if stoppedAfter != continuations {
                stoppedAfter = continuations
                kill(getpid(), SIGTTOU)
            }
            return false
        }
        _ = tcsetattr(0, TCSADRAIN, raw)
        if isSuspended { write(enterScreen) }
        isSuspended = false
        isRaw = true
        return true
    }

    /// Leaves the alternate screen and puts the terminal's settings back, by default discarding
    /// keys typed for the app and not yet read, so they do not reach the shell. Safe to call twice.
    static func restore(discardingInput: Bool = true) {
        guard isRaw else { return }
        isRaw = false
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?2004l\u{1B}[?1049l")
        _ = tcsetattr(0, discardingInput ? TCSAFLUSH : TCSADRAIN, saved)
    }

    /// The terminal's size in columns and rows (80 × 24 when it cannot say).
    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Writes all of `text` to `descriptor` (standard output by default); gives up quietly
    /// when it cannot (a terminal that went away), as Foundation's `FileHandle.write` would not.
    static func write(_ text: String, to descriptor: Int32 = 1) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
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
    /// Text pasted (bracketed paste): newlines as `\n`, a tab as four spaces, other control
    /// characters dropped.
    case paste(String)

}

/// Decodes the keys in the terminal's reads. A read may end inside a sequence (an arrow's
/// `ESC [ D`, a UTF-8 character's bytes: ssh, a loaded machine, a paste longer than the
/// buffer): the incomplete tail is kept and completed by the next read. A lone ESC at the end
/// of a read is the Escape key only once nothing follows it for a moment (``flush()``), since
/// arrows and Alt+key also begin with ESC. Alt+key (ESC and a character) is no key at all.
struct KeyDecoder {
    /// The bytes of a sequence the last read ended in.
    private(set) var pending: [UInt8] = []
    /// Inside a bracketed paste, until `ESC [201~` (or ``endPaste()``).
    private(set) var inPaste = false
    /// Whether the paste's text so far ended in a carriage return (its line feed may come next).
    private var pasteEndedInReturn = false
    private static let pasteEnd: [UInt8] = Array("\u{1B}[201~".utf8)

    /// Whether what is kept is a lone ESC: the caller calls ``flush()`` if nothing follows soon.
    var endsInEscape: Bool { !inPaste && pending == [0x1B] }

    mutating func decode(_ read: [UInt8]) -> [Key] {
        let bytes = pending + read
        pending = []
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            if inPaste {
                // Up to the end marker; without one yet, all but what may begin it or a
                // character cut by the read's end, which wait for the next read.
                var end = bytes.count
                var found = false
                if let marker = Self.find(Self.pasteEnd, in: bytes, from: index) {
                    end = marker
                    found = true
                } else {
                    end = max(index, bytes.count - (Self.pasteEnd.count - 1))
                    while end > index, (0x80...0xBF).contains(bytes[end]) { end -= 1 }
                }
                if end > index { keys.append(.paste(pasted(bytes[index..<end]))) }
                if found {
                    inPaste = false
                    index = end + Self.pasteEnd.count
                } else {
                    pending = Array(bytes[end...])
                    return keys
                }
                continue
            }
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                guard index + 1 < bytes.count else {
                    pending = [0x1B]
                    return keys
                }
                let next = bytes[index + 1]
                guard next == UInt8(ascii: "[") || next == UInt8(ascii: "O") else {
                    // Alt+key, or ESC typed twice: the second ESC starts over.
                    if next == 0x1B {
                        keys.append(.escape)
                        index += 1
                    } else {
                        index += 2
                    }
                    continue
                }
                // ESC [ or ESC O, parameters (0x20–0x3F), then the final byte (0x40–0x7E).
                var end = index + 2
                while end < bytes.count, !(0x40...0x7E).contains(bytes[end]), bytes[end] != 0x1B { end += 1 }
                guard end < bytes.count else {
                    pending = Array(bytes[index...])
                    return keys
                }
                // An ESC before the final byte: the sequence was cut off; the ESC starts anew.
                if bytes[end] == 0x1B {
                    index = end
                    continue
                }
                if bytes[index + 1...end].elementsEqual("[200~".utf8) {
                    inPaste = true
                    pasteEndedInReturn = false
                } else if end == index + 2 {
                    switch bytes[end] {
                    case UInt8(ascii: "A"): keys.append(.up)
                    case UInt8(ascii: "B"): keys.append(.down)
                    case UInt8(ascii: "C"): keys.append(.right)
                    case UInt8(ascii: "D"): keys.append(.left)
                    default: break
                    }
                }
                index = end + 1
                continue
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x09: keys.append(.tab)
            case 0x01...0x1A: keys.append(.control(Character(Unicode.Scalar(byte + 0x60))))
            case 0x20...0x7E: keys.append(.character(Character(Unicode.Scalar(byte))))
            case 0xC2...0xF4:
                // One UTF-8 character: its lead byte says how many follow. A byte that does not
                // continue it (not UTF-8: Latin-1 typed in a UTF-8 terminal) drops the lead
                // byte alone, and what follows is read as it is.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                var available = index + 1
                while available < min(bytes.count, index + length), (0x80...0xBF).contains(bytes[available]) {
                    available += 1
                }
                if available < index + length {
                    if available == bytes.count {
                        pending = Array(bytes[index...])
                        return keys
                    }
                    index += 1
                    continue
                }
                if let text = String(validating: bytes[index..<index + length], as: UTF8.self),
                    let character = text.first
                {
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

    /// Where `needle` begins in `bytes` at or after `start`.
    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count - start >= needle.count else { return nil }
        for offset in start...(bytes.count - needle.count) where bytes[offset] == needle[0] {
            if bytes[offset..<offset + needle.count].elementsEqual(needle) { return offset }
        }
        return nil
    }

    /// Pasted bytes as text for the draft; a CR LF split between two reads is one newline.
    private mutating func pasted(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let previousWasReturn = pasteEndedInReturn
            pasteEndedInReturn = scalar == "\r"
            switch scalar {
            case "\r": text.unicodeScalars.append("\n")
            case "\n": if !previousWasReturn { text.unicodeScalars.append("\n") }
            case "\t": text += "    "
            default:
                if scalar.properties.generalCategory == .control { continue }
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// Ends a paste whose end marker never came (a terminal that lost it): what is kept is
    /// pasted, and keys are keys again.
    mutating func endPaste() -> [Key] {
        guard inPaste else { return [] }
        defer { pending = [] }
        inPaste = false
        let text = pasted(pending[...])
        pasteEndedInReturn = false
        return text.isEmpty ? [] : [.paste(text)]
    }

    /// What is kept, as keys now: a lone ESC is the Escape key; an incomplete sequence is dropped.
    mutating func flush() -> [Key] {
        defer { pending = [] }
        return endsInEscape ? [.escape] : []
    }
}
