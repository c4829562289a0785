import Foundation
import StateStore

/// Human-readable formatting shared by every subcommand's table output.
enum Format {
    /// `512 B`, `1.5 KiB`, `2.0 MiB`.
    static func bytes<I: BinaryInteger>(_ count: I) -> String { TextFormat.bytes(count) }

    /// ISO 8601 in UTC with milliseconds, as the JSON output writes times: `2026-01-02T03:04:05.678Z`.
    static func iso8601(_ date: Date) -> String { TextFormat.iso8601(date) }

    /// Seconds precision in UTC, for tables: `2026-01-02 03:04:05`.
    static func table(_ date: Date) -> String {
        TextFormat.dateTime(milliseconds: TextFormat.milliseconds(date), separator: " ", fraction: false)
    }

    /// `path` as a shell word in messages: as it is when it holds only ordinary characters,
    /// else quoted with its control characters escaped, so a message stays on one line and
    /// names exactly the file.
    static func word(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "/._-+:@%,=~".unicodeScalars.contains(scalar))
        }
        return plain && !path.isEmpty ? path : path.debugDescription
    }

    /// A signed 64-bit checksum as 16 hex digits.
    static func checksum(_ value: Int64) -> String { TextFormat.checksum(value) }

    /// A classic hex dump (offset, 16 bytes, ASCII) of at most `limit` bytes.
    static func hexDump(_ data: Data, limit: Int = 256) -> String {
        let bytes = Array(data.prefix(limit))
        var lines: [String] = []
        var offset = 0
        while offset < bytes.count {
            let row = bytes[offset..<min(offset + 16, bytes.count)]
            var hex = row.map { String(format: "%02x", $0) }.joined(separator: " ")
            hex += String(repeating: " ", count: 47 - hex.count)
            let ascii = String(row.map { $0 >= 0x20 && $0 < 0x7F ? Character(UnicodeScalar($0)) : "." })
            lines.append(String(format: "%08x  ", offset) + hex + "  |" + ascii + "|")
            offset += 16
        }
        if data.count > limit { lines.append("… \(data.count - limit) more bytes") }
        return lines.joined(separator: "\n")
    }
}

/// A plain-text table with aligned columns; right-aligned columns for numbers.
struct Table {
    var headers: [String]
    var rightAligned: Set<Int> = []
    var rows: [[String]] = []

    init(_ headers: [String], rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rightAligned = rightAligned
    }

    /// Adds a row; control and invisible formatting characters in its cells are shown as
    /// escapes (`\n`, `\u{1B}`, `\u{202E}`), so a value written by another tool can neither
    /// break the table nor disguise itself on the terminal.
    mutating func append(_ row: [String]) { rows.append(row.map(Self.visible)) }

    static func visible(_ text: String) -> String {
        // Printable ASCII (the usual path, type name or number) needs no look at Unicode's categories.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            output += needsEscape(scalar) ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return output
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: true
        default: false
        }
    }

    /// Label/value lines without a header row: `Path:  root/inbox`.
    static func keyValue(_ rows: [(String, String)]) -> String {
        var table = Table(["", ""])
        table.showsHeader = false
        for (label, value) in rows { table.append([label, value]) }
        return table.render()
    }

    var showsHeader = true

    /// The cell's width in characters; printable ASCII's is its length in bytes, found
    /// without grapheme breaking (not so for control characters: `"\r\n"` is one character).
    static func width(_ cell: String) -> Int {
        cell.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x80 } ? cell.utf8.count : cell.count
    }

    func render() -> String {
        let all = showsHeader ? [headers] + rows : rows
        var widths = Array(repeating: 0, count: headers.count)
        for row in all {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], Self.width(cell))
            }
        }
        return all.map { Self.line($0, widths: widths, rightAligned: rightAligned) }.joined(separator: "\n")
    }

    /// One line of a table whose columns are `widths` wide: cells two spaces apart, each padded
    /// to its column's width (on the left in a right-aligned column), the last one not padded.
    /// `row` holds visible cells (``visible(_:)``).
    static func line(_ row: [String], widths: [Int], rightAligned: Set<Int>) -> String {
        row.enumerated().map { column, cell in
            let padding = String(repeating: " ", count: widths[column] - width(cell))
            if rightAligned.contains(column) { return padding + cell }
            return column == row.count - 1 ? cell : cell + padding
        }.joined(separator: "  ")
    }
}
