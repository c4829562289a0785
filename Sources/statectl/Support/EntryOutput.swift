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

    /// Aligned columns PATH, TYPE, VERSION, SIZE, GENERATION, UPDATED (UTC), sorted by path; and
    /// SEALED WITH (the key id) when any state is sealed.
    static func table(_ entries: [StateStore.Entry]) -> String {
        let sealed = entries.contains { $0.keyID != nil }
        var table = Table(
            ["PATH", "TYPE", "VERSION", "SIZE", "GENERATION", "UPDATED (UTC)"] + (sealed ? ["SEALED WITH"] : []),
            rightAligned: [2, 3, 4]
        )
        for entry in entries.sorted(by: { $0.path < $1.path }) {
            table.append([
                entry.path.rawValue, entry.typeName, String(entry.version),
                Format.bytes(entry.byteCount), String(entry.generation), Format.table(entry.updatedAt),
            ] + (sealed ? [entry.keyID ?? "-"] : []))
        }
        return table.render()
    }

    /// `3 states, 1.2 KiB` — the summary line under a table; `, 3 sealed` when some are.
    static func summary(_ entries: [StateStore.Entry]) -> String {
        let total = entries.reduce(0) { $0 + $1.byteCount }
        let sealed = entries.filter { $0.keyID != nil }.count
        return "\(entries.count) \(entries.count == 1 ? "state" : "states"), \(Format.bytes(total))" + (sealed > 0 ? ", \(sealed) sealed" : "")
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
            table.append([String(row.rowID), String(row.path.debugDescription.dropFirst().dropLast()), Format.bytes(row.byteCount), row.reason])
        }
        let noun = rows.count == 1 ? "row has a path that is" : "rows have paths that are"
        return "\(rows.count) \(noun) not a valid restoration path (written outside StateStore; no controller can restore them):\n"
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
        var table = Table(["ID", "PATH", "TYPE", "VERSION", "SIZE", "QUARANTINED (UTC)", "REASON"], rightAligned: [0, 3, 4])
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
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
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
