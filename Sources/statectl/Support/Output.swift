import Foundation
import StateStore

#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr, and the shape shared by every `--json` document.
///
/// Every document `statectl` prints with `--json` (and the `export` document) is one JSON
/// object whose first two members are `"schema"` (``schemaVersion``, today 1) and `"kind"`:
///
/// | kind         | command                  | other members |
/// |--------------|--------------------------|---------------|
/// | `entries`    | `inspect [PREFIX]`       | `prefix`, `count`, `total_bytes`, `entries` |
/// | `state`      | `inspect PATH`           | `path`, `type_name`, `version`, `encoding`, `byte_count`, `generation`, `updated_at`, `checksum`, `checksum_valid`, `value` or `base64` |
/// | `events`     | `inspect --events`       | `events`: `occurred_at`, `level`, `available_bytes`, `rss_before`, `rss_after`, `bytes_freed`, `duration_us` |
/// | `quarantine` | `inspect --quarantine`   | `quarantined`: `id`, `path`, `type_name`, `version`, `generation`, `encoding`, `byte_count`, `updated_at`, `quarantined_at`, `reason` |
/// | `hierarchy`  | `inspect --hierarchy`    | `scene`, `set_aside`, `found`, `byte_count`, `readable`, `archive` (the decoded ``HierarchyArchive``), `reason`, `base64` |
/// | `scenes`     | `inspect --scenes`       | `scenes`: `scene`, `path_prefix`, `created_at`, `archive_byte_count`, `archive_updated_at`, `set_aside`, `claim` (`pid`, `since`, or `null`) |
/// | `check`      | `check`                  | `database`, `healthy`, `problems`, `integrity`, `schema_version`, `latest_schema_version`, `journal_mode`, `state_count`, `quarantine_count`, `pressure_event_count`, `checksum_mismatches` |
/// | `migrate`    | `migrate`                | `database`, `dry_run`, `created`, `from_version`, `to_version`, `migrations` |
/// | `export`     | `export`                 | `database_schema_version`, `exported_at`, `state_count`, `states` (see ``StateExport``) |
/// | `import`     | `import`                 | `database`, `source`, `imported`, `created`, `replaced`, `removed` |
/// | `prune`      | `prune`                  | `database`, `dry_run`, `older_than`, `cutoff`, `path_prefix`, `count`, `total_bytes`, `removed` |
/// | `sample`     | `monitor` (JSON Lines)   | `time`, `level`, `host`, `cgroup`, `pressure`, `effective_total`, `effective_available`, `available_percent` |
/// | `demo`       | `demo`                   | `database`, `continued`, `steps`, `restored_draft`, `entries`, `hierarchy` |
///
/// Keys are snake_case; times are ISO 8601 in UTC with milliseconds (`2026-01-02T03:04:05.678Z`);
/// sizes are bytes; absent optional values are `null`. Members may be added within a schema
/// version; removing or changing one raises it. New commands (`monitor`, `soak`, ...) should
/// print through ``json(kind:_:)`` (or ``document(kind:_:)`` for one compact line) with a kind of their own.
enum Output {
    /// The version of every `--json` document (the export document's is the library's
    /// ``StateExport/currentFormat``). It changes only when a document changes incompatibly
    /// (a key removed or its meaning changed).
    static let schemaVersion = 1

    /// One line on stderr.
    static func error(_ message: String) {
        write(message + "\n", to: STDERR_FILENO)
    }

    /// `text` on stdout, unbuffered (after anything `print` buffered). Returns `errno` when the
    /// write failed (a full disk, a closed descriptor, `EPIPE`), else 0.
    @discardableResult
    static func standardOutput(_ text: String) -> Int32 {
        fflush(nil)
        return write(text, to: STDOUT_FILENO)
    }

    /// `text` on stderr, unbuffered.
    static func standardError(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    /// Writes all of `text` to `descriptor`, and gives up quietly when the descriptor is closed,
    /// full or a pipe nobody reads: reporting must never be what stops `statectl` (Foundation's
    /// `FileHandle.write` traps on such a failure). `SIGPIPE` is ignored from ``Statectl/main()``.
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { write(UnsafeRawBufferPointer($0), to: descriptor) }
    }

    /// The same for bytes.
    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return written < 0 ? errno : EIO
            }
        }
        return 0
    }

    /// A `--json` document: `{"schema": 1, "kind": kind, ...members}`, pretty-printed on stdout.
    static func json(kind: String, _ members: [(key: String, value: JSON)]) {
        print(document(kind: kind, members).serialized(pretty: true))
    }

    static func document(kind: String, _ members: [(key: String, value: JSON)]) -> JSON {
        .object([("schema", .int(schemaVersion)), ("kind", .string(kind))] + members)
    }
}

/// Bytes gathered for stdout in pieces of about 64 KiB, written out by ``write()``: a listing
/// held until its read transaction has ended costs its own bytes, never the copies one buffer
/// makes each time it grows.
struct GatheredOutput {
    private var pieces: [[UInt8]] = []
    private var current: [UInt8] = []

    mutating func append(_ bytes: borrowing [UInt8]) {
        if !current.isEmpty, current.count + bytes.count > 1 << 16 {
            pieces.append(current)
            current = []
            current.reserveCapacity(1 << 16)
        }
        bytes.withUnsafeBufferPointer { current.append(contentsOf: $0) }
    }

    /// Everything `other` gathered, after what this one has.
    mutating func append(contentsOf other: GatheredOutput) {
        if !current.isEmpty { pieces.append(current) }
        pieces += other.pieces
        current = other.current
    }

    /// `text` and a newline.
    mutating func appendLine(_ text: String) {
        append(Array(text.utf8))
        current.append(UInt8(ascii: "\n"))
    }

    /// Writes everything gathered to stdout. Output that does not arrive (a full disk, a closed
    /// stdout) is an error, as for everything `statectl` prints; a reader that left (`| head`) is not.
    /// `done`, when given, says what the command did before its output failed (a removal
    /// committed), so the message does not read as though nothing changed.
    func write(done: String? = nil) throws {
        fflush(nil)
        let failure = write(to: STDOUT_FILENO)
        if failure == 0 || failure == EPIPE { return }
        let reason = String(cString: strerror(failure))
        throw CLIError(
            message: done.map { "\($0), but its list could not be written: \(reason)" }
                ?? "cannot write the output: \(reason)")
    }

    /// Writes everything gathered to `descriptor`, in order. Returns `errno` of the write that
    /// failed (the rest is then not written), else 0.
    func write(to descriptor: Int32) -> Int32 {
        for piece in pieces + [current] {
            let failure = piece.withUnsafeBytes { Output.write($0, to: descriptor) }
            if failure != 0 { return failure }
        }
        return 0
    }
}

/// `text` ending with exactly one full stop (or its own `?`/`!`), so messages built from
/// parts never end in "..".
func sentence(_ text: String) -> String {
    var text = text.trimmingCharacters(in: .whitespaces)
    while text.hasSuffix("..") { text.removeLast() }
    if let last = text.last, ".?!".contains(last) { return text }
    return text + "."
}
