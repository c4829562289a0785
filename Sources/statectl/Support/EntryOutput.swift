import Foundation
import StateStore

/// How stored states, quarantined rows and pressure events are shown, in tables and in JSON.
/// Shared by `inspect`, `prune` and anything else that lists rows.
enum EntryOutput {
    // MARK: States

    /// `{"path", "type_name", "version", "encoding", "byte_count", "generation", "updated_at"}`,
    /// and `"key_id"` for a sealed state.
    static func json(_ entry: StateStore.Entry) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("path", .string(entry.path.rawValue)),
            ("type_name", .string(entry.typeName)),
            ("version", .int(entry.version)),
            ("encoding", .string(entry.encoding.rawValue)),
            ("byte_count", .int(entry.byteCount)),
            ("generation", .int(entry.generation)),
            ("updated_at", .string(Format.iso8601(entry.updatedAt))),
        ]
        if let keyID = entry.keyID { members.append(("key_id", .string(keyID))) }
        return .object(members)
    }

    /// The `--json` document of `kind` whose member `name` holds the entries `scan` visits (each
    /// as ``json(_:)-(StateStore.Entry)`` gives it), in one pass: the entries' objects are
    /// gathered as they come (the list's JSON value is never built), then `members`, made from
    /// their count and total, are written ahead of them; `trailing`, made once the scan is
    /// done, after them.
    static func document<E: Error>(
        kind: String, _ members: (EntryListing) -> [(key: String, value: JSON)], listing name: String,
        _ scan: (_ visit: (StateStore.Entry) -> Void) throws(E) -> Void,
        trailing: () -> [(key: String, value: JSON)] = { [] }
    ) throws(E) -> (document: GatheredOutput, listing: EntryListing) {
        var listing = EntryListing()
        var elements = GatheredOutput()
        var piece: [UInt8] = []
        try scan { entry in
            JSON.ObjectWriter.writeElement(json(entry), after: listing.count, to: &piece)
            listing.tally(entry)
            if piece.count >= 1 << 16 {
                elements.append(piece)
                piece.removeAll(keepingCapacity: true)
            }
        }
        elements.append(piece)
        var output = GatheredOutput()
        var writer = JSON.ObjectWriter()
        writer.member("schema", .int(Output.schemaVersion))
        writer.member("kind", .string(kind))
        for (key, value) in members(listing) { writer.member(key, value) }
        writer.beginArray(name, writtenApart: listing.count)
        writer.take { output.append($0) }
        output.append(contentsOf: elements)
        writer.endArray()
        for (key, value) in trailing() { writer.member(key, value) }
        writer.end()
        writer.take { output.append($0) }
        return (output, listing)
    }

    /// The table of the entries `scan` visits, measured before by `listing` (``EntryListing``):
    /// the header, then a line per entry.
    static func table<E: Error>(
        _ listing: EntryListing, _ scan: (_ visit: (StateStore.Entry) -> Void) throws(E) -> Void
    ) throws(E) -> GatheredOutput {
        var output = GatheredOutput()
        output.appendLine(listing.header)
        try scan { output.appendLine(listing.line($0)) }
        return output
    }

    // MARK: Invalid rows

    /// `{"rowid", "path", "reason", "byte_count", "updated_at"}`; the path as JSON escapes it,
    /// so a NUL or another control character is visible.
    static func json(_ row: StateStore.InvalidRow) -> JSON {
        .object([
            ("rowid", .int(row.rowID)),
            ("path", .string(row.path)),
            ("reason", .string(row.reason)),
            ("byte_count", .int(row.byteCount)),
            ("updated_at", .string(Format.iso8601(row.updatedAt))),
        ])
    }

    /// ROWID, PATH (escaped), SIZE, REASON; and a line saying what the rows are.
    static func table(_ rows: [StateStore.InvalidRow]) -> String {
        var table = Table(["ROWID", "PATH (ESCAPED)", "SIZE", "REASON"], rightAligned: [0, 2])
        for row in rows {
            table.append([
                String(row.rowID), String(row.path.debugDescription.dropFirst().dropLast()),
                Format.bytes(row.byteCount), row.reason,
            ])
        }
        let noun = rows.count == 1 ? "row has a path that is" : "rows have paths that are"
        return
            "\(rows.count) \(noun) not a valid restoration path (written outside StateStore; no controller can restore them):\n"
            + table.render() + "\n`statectl prune --invalid-paths` removes them; `statectl check` reports them."
    }

    // MARK: Quarantine

    static func json(_ state: StateStore.QuarantinedState) -> JSON {
        .object([
            ("id", .int(state.id)),
            ("path", .string(state.path.rawValue)),
            ("type_name", .string(state.typeName)),
            ("version", .int(state.version)),
            ("generation", .int(state.generation)),
            ("encoding", .string(state.encoding.rawValue)),
            ("byte_count", .int(state.byteCount)),
            ("updated_at", .string(Format.iso8601(state.updatedAt))),
            ("quarantined_at", .string(Format.iso8601(state.quarantinedAt))),
            ("reason", .string(state.reason)),
        ])
    }

    static func table(_ states: [StateStore.QuarantinedState]) -> String {
        var table = Table(
            ["ID", "PATH", "TYPE", "VERSION", "SIZE", "QUARANTINED (UTC)", "REASON"], rightAligned: [0, 3, 4])
        for state in states {
            table.append([
                String(state.id), state.path.rawValue, state.typeName, String(state.version),
                Format.bytes(state.byteCount), Format.table(state.quarantinedAt), state.reason,
            ])
        }
        return table.render()
    }

    // MARK: Pressure events

    static func levelName(_ level: MemoryPressureLevel) -> String {
        switch level {
        case .normal: "normal"
        case .warning: "warning"
        case .critical: "critical"
        }
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        duration.saturatingMicroseconds
    }

    static func json(_ event: PressureEvent) -> JSON {
        .object([
            ("occurred_at", .string(Format.iso8601(event.occurredAt))),
            ("level", .string(levelName(event.level))),
            ("available_bytes", .int(event.availableBytes)),
            ("rss_before", .int(event.rssBefore)),
            ("rss_after", .int(event.rssAfter)),
            ("bytes_freed", .int(event.bytesFreed)),
            ("duration_us", .int(microseconds(event.duration))),
        ])
    }

    static func table(_ events: [PressureEvent]) -> String {
        var table = Table(
            ["OCCURRED (UTC)", "LEVEL", "AVAILABLE", "RSS BEFORE", "RSS AFTER", "FREED", "DURATION"],
            rightAligned: [2, 3, 4, 5, 6]
        )
        for event in events {
            let micros = microseconds(event.duration)
            table.append([
                Format.table(event.occurredAt), levelName(event.level), Format.bytes(event.availableBytes),
                Format.bytes(event.rssBefore), Format.bytes(event.rssAfter), Format.bytes(event.bytesFreed),
                micros >= 1000 ? String(format: "%.1f ms", Double(micros) / 1000) : "\(micros) µs",
            ])
        }
        return table.render()
    }
}

/// A table of stored states made from two passes over them, for listings of any length: the
/// first (``measure(_:)``) finds the columns' widths, the count and the total; the second makes
/// each entry's line (``line(_:)``). Neither the entries nor the table's cells are held. Columns
/// PATH, TYPE, VERSION, SIZE, GENERATION, UPDATED (UTC), and SEALED WITH (the key id) when
/// any state is sealed; the lines are in the entries' order (by path, as the store lists them).
struct EntryListing {
    private static let headers = ["PATH", "TYPE", "VERSION", "SIZE", "GENERATION", "UPDATED (UTC)", "SEALED WITH"]
    private static let rightAligned: Set<Int> = [2, 3, 4]

    private(set) var count = 0
    private(set) var totalBytes = 0
    private(set) var sealedCount = 0
    private var widths = EntryListing.headers.map(Table.width)

    /// The visible cells of `entry`, SEALED WITH included.
    private static func cells(_ entry: StateStore.Entry) -> [String] {
        [
            entry.path.rawValue, entry.typeName, String(entry.version), Format.bytes(entry.byteCount),
            String(entry.generation), Format.table(entry.updatedAt), entry.keyID ?? "-",
        ].map(Table.visible)
    }

    /// Takes `entry` into the count and the total: all a JSON listing needs.
    mutating func tally(_ entry: StateStore.Entry) {
        count += 1
        totalBytes += entry.byteCount
        if entry.keyID != nil { sealedCount += 1 }
    }

    /// Takes `entry` into the count, the total and the columns' widths (a table's first pass).
    mutating func measure(_ entry: StateStore.Entry) {
        tally(entry)
        // The widths of the cells ``cells(_:)`` makes, found without making the costly ones: a
        // time with a four-digit year is always 19 characters (`2026-01-02 03:04:05`).
        let milliseconds = TextFormat.milliseconds(entry.updatedAt)
        let measured = [
            Table.width(Table.visible(entry.path.rawValue)), Table.width(Table.visible(entry.typeName)),
            String(entry.version).utf8.count, Format.bytes(entry.byteCount).utf8.count,
            String(entry.generation).utf8.count,
            TextFormat.representableMilliseconds.contains(milliseconds) ? 19 : Format.table(entry.updatedAt).utf8.count,
            Table.width(Table.visible(entry.keyID ?? "-")),
        ]
        for column in widths.indices { widths[column] = max(widths[column], measured[column]) }
    }

    private var columns: Int { sealedCount > 0 ? 7 : 6 }

    var header: String {
        Table.line(Array(Self.headers.prefix(columns)), widths: widths, rightAligned: Self.rightAligned)
    }

    /// The line of an entry measured in the first pass.
    func line(_ entry: StateStore.Entry) -> String {
        Table.line(Array(Self.cells(entry).prefix(columns)), widths: widths, rightAligned: Self.rightAligned)
    }

    /// `3 states, 1.2 KiB` — the summary line under the table; `, 3 sealed` when some are.
    var summary: String {
        "\(count) \(count == 1 ? "state" : "states"), \(Format.bytes(totalBytes))"
            + (sealedCount > 0 ? ", \(sealedCount) sealed" : "")
    }
}
