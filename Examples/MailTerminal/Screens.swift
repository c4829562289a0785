import MailExample
import StateStore

/// A controller that draws itself as lines of text and takes keys.
@MainActor
protocol TerminalScreen: AnyObject {
    /// The breadcrumb shown above the content.
    var title: String { get }
    /// The keys this screen takes, for the help line.
    var help: String { get }
    /// The content, at most `height` lines of at most `width` columns.
    func draw(width: Int, height: Int, traits: TraitCollection) -> [String]
    /// Handles `key`; returns whether it did.
    func handle(_ key: Key, in app: TerminalMailApp) -> Bool
    /// Where the terminal's cursor goes within the content, when the screen edits text.
    func cursor(width: Int) -> (row: Int, column: Int)?
}

extension TerminalScreen {
    func cursor(width: Int) -> (row: Int, column: Int)? { nil }
}

/// The message list. State: the selected row and the first row shown.
final class InboxScreen: ViewController, StateRestoring, TerminalScreen {
    struct State: Codable, Sendable, Hashable {
        var selected = 0
        var top = 0
    }
    var restorableState = State()

    var title: String { "Inbox" }
    var help: String { "↑/↓ select · enter open · tab settings · q quit" }

    func draw(width: Int, height: Int, traits: TraitCollection) -> [String] {
        // Regular width: a preview under each subject; compact: one line a message.
        let perRow = traits.horizontalSizeClass == .regular ? 2 : 1
        let visible = max(1, height / perRow)
        if restorableState.selected < restorableState.top { restorableState.top = restorableState.selected }
        if restorableState.selected >= restorableState.top + visible {
            restorableState.top = restorableState.selected - visible + 1
        }
        var lines: [String] = []
        for index in restorableState.top..<min(MailMessage.mailbox.count, restorableState.top + visible) {
            let message = MailMessage.mailbox[index]
            let marker = index == restorableState.selected ? ">" : " "
            lines.append(fit("\(marker) \(message.subject)  \(message.from)", width))
            if perRow == 2 {
                lines.append(
                    fit(
                        "    " + TerminalMailApp.rows.value(forKey: message.id) { String(message.body.prefix(200)) },
                        width))
            } else {
                _ = TerminalMailApp.rows.value(forKey: message.id) { String(message.body.prefix(200)) }
            }
        }
        return lines
    }

    func handle(_ key: Key, in app: TerminalMailApp) -> Bool {
        switch key {
        case .up, .character("k"): restorableState.selected = max(0, restorableState.selected - 1)
        case .down, .character("j"):
            restorableState.selected = min(MailMessage.mailbox.count - 1, restorableState.selected + 1)
        case .enter, .right: app.open(MailMessage.mailbox[restorableState.selected])
        default: return false
        }
        return true
    }
}

/// One message. State: which message and the first line shown.
final class MessageScreen: ViewController, StateRestoring, TerminalScreen {
    struct State: Codable, Sendable, Hashable {
        var messageID: String?
        var line = 0
    }
    var restorableState = State()
    /// The message the user opened, when the screen was pushed for it (not rebuilt at launch).
    var opening: String?
    var message: MailMessage? { MailMessage.find(restorableState.messageID) }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        // Restored already. The state found at this place is kept only when it is about the
        // message opened: another instance of the app may have left another one there.
        if let opening, restorableState.messageID != opening {
            restorableState = State(messageID: opening, line: 0)
        }
    }

    var title: String { "Inbox › \(message?.subject ?? "?")" }
    var help: String { "↑/↓ scroll · r reply · ← back · q quit" }

    /// The body wrapped at `width`, from the cache (purged on memory warnings).
    func wrapped(_ width: Int) -> [String] {
        guard let message else { return [] }
        return TerminalMailApp.wrapped.value(forKey: "\(message.id)@\(width)") {
            var lines: [String] = [], line = "", lineWidth = 0
            for var word in message.body.split(separator: " ") {
                // A word wider than the screen is cut across lines of its own.
                while TextWidth.of(word) > width {
                    if !line.isEmpty {
                        lines.append(line)
                        line = ""
                        lineWidth = 0
                    }
                    let head = TextWidth.prefix(word, columns: width)
                    lines.append(String(head))
                    word = word[head.endIndex...]
                }
                if word.isEmpty { continue }
                let wordWidth = TextWidth.of(word)
                if !line.isEmpty, lineWidth + 1 + wordWidth > width {
                    lines.append(line)
                    line = ""
                    lineWidth = 0
                }
                if !line.isEmpty {
                    line += " "
                    lineWidth += 1
                }
                line += word
                lineWidth += wordWidth
            }
            if !line.isEmpty { lines.append(line) }
            return lines
        }
    }

    func draw(width: Int, height: Int, traits: TraitCollection) -> [String] {
        guard let message else { return ["(this message is no longer in the mailbox)"] }
        let body = wrapped(max(1, width))
        restorableState.line = min(restorableState.line, max(0, body.count - (height - 3)))
        let header = [fit("From: \(message.from)", width), fit("Subject: \(message.subject)", width), ""]
        return header + body.dropFirst(restorableState.line).prefix(max(0, height - 3))
    }

    func handle(_ key: Key, in app: TerminalMailApp) -> Bool {
        switch key {
        case .up, .character("k"): restorableState.line = max(0, restorableState.line - 1)
        case .down, .character("j"): restorableState.line += 1
        case .character("r"): app.reply(to: self)
        case .left, .backspace, .escape, .character("h"): app.back()
        default: return false
        }
        return true
    }
}

/// A reply, presented as a sheet over the tabs. State: the draft and the cursor in its body.
final class ComposeScreen: ViewController, StateRestoring, TerminalScreen {
    struct Draft: Codable, Sendable, Hashable {
        var to = ""
        var subject = ""
        var body = ""
        /// The cursor, in characters from the start of the body.
        var cursor = 0
        /// The message answered (its ``MailMessage/id``).
        var inReplyTo: String?
    }
    var restorableState = Draft()
    /// The message being answered, set before the sheet is first presented.
    var replyingTo: MailMessage?

    var title: String { "Compose › \(restorableState.subject)" }
    var help: String { "type the reply · ←/→ move · ctrl-s send · esc discard · ctrl-q quit" }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        // Restored already: a relaunch brings its draft back. A new reply starts addressed,
        // and keeps a restored draft only when that draft answers the same message (another
        // instance of the app may have left one for another message at this place).
        if let replyingTo, restorableState.to.isEmpty || restorableState.inReplyTo != replyingTo.id {
            restorableState = Draft(to: replyingTo.from, subject: "Re: \(replyingTo.subject)", inReplyTo: replyingTo.id)
        }
        restorableState.cursor = min(max(0, restorableState.cursor), restorableState.body.count)
    }

    /// The first body line shown: the body scrolls to keep the cursor's line in view.
    private var top = 0
    /// The cursor's place on screen, from the last ``draw(width:height:traits:)``.
    private var cursorPlace = (row: 0, column: 0)

    /// The body cut into lines of at most `width` columns, each with the offset (in
    /// characters) of its first character.
    private func layout(_ width: Int) -> [(offset: Int, text: String)] {
        var lines: [(offset: Int, text: String)] = []
        var start = 0, offset = 0, current = "", currentWidth = 0
        var previous: Character?
        for character in restorableState.body {
            defer { previous = character }
            if character == "\n" {
                lines.append((start, current))
                offset += 1
                start = offset
                current = ""
                currentWidth = 0
                continue
            }
            let characterWidth = TextWidth.of(character, after: previous)
            if currentWidth + characterWidth > width, !current.isEmpty {
                lines.append((start, current))
                start = offset
                current = ""
                currentWidth = 0
            }
            current.append(character)
            currentWidth += characterWidth
            offset += 1
        }
        lines.append((start, current))
        // A last line that fills the width: the cursor after it is at the start of the next.
        if currentWidth >= width { lines.append((offset, "")) }
        return lines
    }

    func draw(width: Int, height: Int, traits: TraitCollection) -> [String] {
        // Three header lines, the body, a blank line and the cursor's line; on a short screen
        // the body keeps at least two lines, and the header and then the status make room.
        let header =
            height >= 7
            ? [
                fit("To: \(restorableState.to)", width), fit("Subject: \(restorableState.subject)", width),
                String(repeating: "─", count: width),
            ]
            : []
        let status =
            height - header.count >= 4
            ? ["", fit("cursor \(restorableState.cursor) of \(restorableState.body.count)", width)] : []
        let rows = max(1, height - header.count - status.count)
        let lines = layout(max(1, width))
        let cursor = restorableState.cursor
        let index = lines.lastIndex { $0.offset <= cursor } ?? 0
        if index < top { top = index }
        if index >= top + rows { top = index - rows + 1 }
        top = min(top, max(0, lines.count - rows))
        let line = lines[index]
        cursorPlace = (header.count + index - top, min(width - 1, TextWidth.of(line.text.prefix(cursor - line.offset))))
        let body = lines[top..<min(lines.count, top + rows)].map(\.text)
        return header + body + Array(repeating: "", count: rows - body.count) + status
    }

    func cursor(width: Int) -> (row: Int, column: Int)? { cursorPlace }

    /// Types `text` at the cursor: a key, or a run of them (a paste arrives as one read), in
    /// one edit. The cursor ends after what was typed, counted after it joined the body: a
    /// combining mark joins the character before it and does not move the cursor.
    func insert(_ text: String, in app: TerminalMailApp) {
        var draft = restorableState
        let body = Array(draft.body)
        let cursor = min(max(0, draft.cursor), body.count)
        let before = String(body[..<cursor]) + text
        draft.body = before + String(body[cursor...])
        draft.cursor = min(before.count, draft.body.count)
        restorableState = draft
        app.draftChanged()
    }

    func handle(_ key: Key, in app: TerminalMailApp) -> Bool {
        var draft = restorableState
        let body = Array(draft.body)
        draft.cursor = min(max(0, draft.cursor), body.count)
        switch key {
        case .character(let character):
            insert(String(character), in: app)
            return true
        case .enter:
            insert("\n", in: app)
            return true
        case .backspace:
            guard draft.cursor > 0 else { return true }
            draft.body = String(body[..<(draft.cursor - 1)]) + String(body[draft.cursor...])
            draft.cursor -= 1
        case .tab: return true  // taken by the sheet: the tabs under it do not switch
        case .left: draft.cursor = max(0, draft.cursor - 1)
        case .right: draft.cursor = min(body.count, draft.cursor + 1)
        case .control("s"):
            app.closeCompose(sent: true)
            return true
        case .escape:
            app.closeCompose(sent: false)
            return true
        default: return false
        }
        draft.cursor = min(draft.cursor, draft.body.count)
        restorableState = draft
        app.draftChanged()
        return true
    }
}

/// The settings tab: the database, memory and caches, and a simulated memory warning.
final class SettingsScreen: ViewController, StateRestoring, TerminalScreen {
    struct State: Codable, Sendable, Hashable {
        var visits = 0
    }
    var restorableState = State()
    weak var app: TerminalMailApp?

    var title: String { "Settings" }
    var help: String { "w simulate a memory warning · tab mail · q quit" }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        restorableState.visits += 1
    }

    func draw(width: Int, height: Int, traits: TraitCollection) -> [String] {
        guard let app else { return [] }
        return [
            fit("Database   \(app.databasePath)", width),
            fit("Memory     \(app.monitor.level) (\(app.monitor.watchDescription))", width),
            fit("Caches     \(TerminalMailApp.cacheSummary)", width),
            fit(
                "Window     \(Int(app.window.size.width / TerminalMailApp.pointsPerColumn))×\(Int(app.window.size.height / TerminalMailApp.pointsPerRow)), \(traits)",
                width),
            fit("Visits     \(restorableState.visits)", width),
        ]
    }

    func handle(_ key: Key, in app: TerminalMailApp) -> Bool {
        guard key == .character("w") else { return false }
        app.application.didReceiveMemoryWarning(level: .warning)
        return true
    }
}
