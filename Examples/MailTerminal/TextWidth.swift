import Glibc

/// How many terminal columns text takes, as the terminal draws it: most characters one, wide
/// ones (CJK, most emoji) two, a combining mark nothing beyond the character it joins.
///
/// The widths are glibc's `wcwidth`, which tmux and most terminals on the same system agree
/// with. It answers from the locale's tables, so ``prepare()`` selects the built-in `C.UTF-8`
/// for character classification once, at launch. (Swift's Glibc module does not declare
/// `wcwidth`; it is looked up by name.)
enum TextWidth {
    /// Selects a UTF-8 `LC_CTYPE` (only that category) so `wcwidth` knows non-ASCII characters.
    static func prepare() {
        if setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "C.utf8") }
    }

    private typealias WideCharacterWidth = @convention(c) (wchar_t) -> Int32
    private static let wcwidth: WideCharacterWidth? = dlsym(nil, "wcwidth").map {
        unsafeBitCast($0, to: WideCharacterWidth.self)
    }

    /// The columns one character takes, as tmux and glibc count them: each scalar's
    /// `wcwidth`, added up (a flag's two regional indicators take two columns, an emoji and its
    /// skin-tone modifier four), except that a non-ASCII scalar right after a zero-width joiner
    /// is drawn in the cells of what it joins (in this character, or ending `previous`: Swift
    /// ends a character after a joiner in some scripts, tmux joins all the same), combining
    /// marks, format characters (U+200B, U+FE0F) and controls take none, and a scalar
    /// `wcwidth` does not know takes one.
    static func of(_ character: Character, after previous: Character? = nil) -> Int {
        var joined = previous?.unicodeScalars.last?.value == 0x200D
        if character.isASCII && !joined { return 1 }
        var width = 0
        for scalar in character.unicodeScalars {
            if scalar.value == 0x200D {
                joined = true
                continue
            }
            if joined {
                joined = false
                if !scalar.isASCII { continue }
            }
            let measured = Int(wcwidth?(wchar_t(bitPattern: scalar.value)) ?? 1)
            if measured >= 0 {
                width += measured
            } else {
                switch scalar.properties.generalCategory {
                case .control, .format: break
                default: width += 1
                }
            }
        }
        return width
    }

    /// The columns `text` takes.
    static func of(_ text: some StringProtocol) -> Int {
        var width = 0
        var previous: Character?
        for character in text {
            width += of(character, after: previous)
            previous = character
        }
        return width
    }

    /// The longest prefix of `text` within `columns`, and never less than one character of a
    /// non-empty text (a wide character in a one-column space still moves on).
    static func prefix(_ text: Substring, columns: Int) -> Substring {
        var width = 0
        var end = text.startIndex
        while end < text.endIndex {
            let next = of(text[end], after: end > text.startIndex ? text[text.index(before: end)] : nil)
            if width + next > columns && end > text.startIndex { break }
            width += next
            end = text.index(after: end)
            if width >= columns { break }
        }
        return text[..<end]
    }
}

/// Cuts `text` to `width` columns, ending it with "…" when something was cut.
func fit(_ text: String, _ width: Int) -> String {
    guard width > 0 else { return "" }
    if TextWidth.of(text) <= width { return text }
    var cut = TextWidth.prefix(text[...], columns: width - 1)
    if TextWidth.of(cut) > width - 1 { cut = cut.dropLast() }
    return String(cut) + "…"
}
