import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl prune`: removes old states, or the states under a path.
    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove states not updated for a while, or the states at and below a path.",
            discussion: """
                Give exactly one of --older-than and --path. --older-than takes a duration: a \
                number and a unit, s (seconds), m (minutes), h (hours), d (days) or w (weeks), \
                and combinations such as 1d12h. Prints the states removed, in one transaction; \
                --dry-run prints what would be removed and changes nothing. Quarantined rows, \
                events and the hierarchy archive are never pruned. A missing database is not \
                created (exit 3).

                Example:
                  statectl prune --db ./state.sqlite --older-than 30d --dry-run
                  statectl prune --db ./state.sqlite --path root/inbox/compose

                JSON (--json): {"schema": 1, "kind": "prune", "database", "dry_run", "older_than", \
                "cutoff", "path_prefix", "count", "total_bytes", "removed": [entries as in inspect]}
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        @Option(help: ArgumentHelp("Remove states last updated longer ago than this (30d, 12h, 90m, 45s).", valueName: "duration"), transform: { try DurationValue(parsing: $0) })
        var olderThan: DurationValue?

        @Option(name: .customLong("path"), help: ArgumentHelp("Remove the state at this path and every state below it.", valueName: "prefix"))
        var pathPrefix: String?

        @Flag(help: "Print what would be removed without removing it.")
        var dryRun = false

        func validate() throws {
            switch (olderThan, pathPrefix) {
            case (nil, nil): throw ValidationError("Give --older-than DURATION or --path PREFIX.")
            case (.some, .some): throw ValidationError("Give either --older-than or --path, not both.")
            default: break
            }
            if let pathPrefix {
                do { _ = try RestorationPath(validating: pathPrefix) } catch { throw ValidationError(error.description) }
            }
        }

        func run() throws {
            let prefix = try pathPrefix.map { (text) throws(StateStoreError) in try RestorationPath(validating: text) }
            let cutoff = olderThan.map { Date().addingTimeInterval(-$0.seconds) }
            let removed: [StateStore.Entry]
            if dryRun {
                let store = try database.openReadOnly()
                let entries = try store.entries(under: prefix)
                removed = cutoff.map { cutoff in entries.filter { $0.updatedAt < cutoff } } ?? entries
            } else {
                try database.requireExistingFile()
                let store = try database.openForWriting()
                removed = try store.write { (transaction) throws(StateStoreError) -> [StateStore.Entry] in
                    if let prefix { return try transaction.removeEntries(under: prefix) }
                    return try transaction.removeEntries(updatedBefore: cutoff ?? .distantPast)
                }
            }
            let total = removed.reduce(0) { $0 + $1.byteCount }
            if output.json {
                Output.json(kind: "prune", [
                    ("database", .string(database.path)),
                    ("dry_run", .bool(dryRun)),
                    ("older_than", olderThan.map { .string($0.description) } ?? .null),
                    ("cutoff", cutoff.map { .string(Format.iso8601($0)) } ?? .null),
                    ("path_prefix", prefix.map { .string($0.rawValue) } ?? .null),
                    ("count", .int(removed.count)),
                    ("total_bytes", .int(total)),
                    ("removed", .array(removed.map(EntryOutput.json))),
                ])
                return
            }
            let criterion = prefix.map { "at or below \($0)" }
                ?? "not updated for \(olderThan?.description ?? "") (before \(Format.table(cutoff ?? .distantPast)) UTC)"
            if removed.isEmpty {
                print("No states \(criterion) in \(database.path); nothing \(dryRun ? "would be" : "was") removed.")
                return
            }
            print(EntryOutput.table(removed))
            let noun = removed.count == 1 ? "state" : "states"
            print("\(dryRun ? "Would remove" : "Removed") \(removed.count) \(noun) (\(Format.bytes(total))) \(criterion) from \(database.path)." + (dryRun ? " Nothing was changed (--dry-run)." : ""))
        }
    }
}
