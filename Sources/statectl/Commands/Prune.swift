import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl prune`: removes old states, or the states under a path.
    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove states not updated for a while, or the states at and below a path.",
            discussion: """
                Give exactly one of --older-than, --path and --invalid-paths. --older-than takes a duration: a \
                number and a unit, s (seconds), m (minutes), h (hours), d (days) or w (weeks), \
                and combinations such as 1d12h. Prints the states removed, in one transaction; \
                --dry-run prints what would be removed and changes nothing. With --quarantine, \
                --older-than and --path select quarantined rows instead (by when they were \
                quarantined), once `statectl inspect --quarantine` has shown them; without it, \
                quarantined rows are never pruned. Events and the hierarchy archive never are. \
                A missing database is not created (exit 3).

                Example:
                  statectl prune --db ./state.sqlite --older-than 30d --dry-run
                  statectl prune --db ./state.sqlite --path root/inbox/compose
                  statectl prune --db ./state.sqlite --quarantine --older-than 0s

                JSON (--json): {"schema": 1, "kind": "prune", "database", "dry_run", "older_than", \
                "cutoff", "path_prefix", "count", "total_bytes", "removed": [entries as in inspect]}; \
                with --quarantine, "quarantine": true and "removed_quarantined": [as in inspect --quarantine]
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        @Option(
            help: ArgumentHelp(
                "Remove states last updated longer ago than this (30d, 12h, 90m, 45s).", valueName: "duration"),
            transform: { try DurationValue(parsing: $0) })
        var olderThan: DurationValue?

        @Option(
            name: .customLong("path"),
            help: ArgumentHelp("Remove the state at this path and every state below it.", valueName: "prefix"))
        var pathPrefix: String?

        @Flag(
            name: .customLong("invalid-paths"),
            help: "Remove the rows whose path is not a valid restoration path (as `statectl inspect` lists them).")
        var invalidPaths = false

        @Flag(
            help: "Remove quarantined rows (by --older-than, when they were quarantined, or --path) instead of states.")
        var quarantine = false

        @Flag(help: "Print what would be removed without removing it.")
        var dryRun = false

        func validate() throws {
            switch [olderThan != nil, pathPrefix != nil, invalidPaths].filter({ $0 }).count {
            case 0: throw ValidationError("Give --older-than DURATION, --path PREFIX or --invalid-paths.")
            case 1: break
            default: throw ValidationError("Give only one of --older-than, --path and --invalid-paths.")
            }
            if quarantine && invalidPaths {
                throw ValidationError("--quarantine takes --older-than or --path, not --invalid-paths.")
            }
            if let pathPrefix {
                do { _ = try RestorationPath(validating: pathPrefix) } catch {
                    throw ValidationError(error.description)
                }
            }
        }

        func run() throws {
            if invalidPaths { return try pruneInvalidRows() }
            let prefix = try pathPrefix.map { (text) throws(StateStoreError) in try RestorationPath(validating: text) }
            let cutoff = olderThan.map { Date().addingTimeInterval(-$0.seconds) }
            if quarantine { return try pruneQuarantine(under: prefix, before: cutoff) }
            let criterion =
                prefix.map { "at or below \($0)" }
                ?? "not updated for \(olderThan?.description ?? "") (before \(Format.table(cutoff ?? .distantPast)) UTC)"
            let selection: StateStore.WriteTransaction.Selection =
                prefix.map { .under($0) } ?? .updatedBefore(cutoff ?? .distantPast)
            let report: GatheredOutput
            if dryRun {
                // What would go, listed from one snapshot scanned twice (as `inspect` lists it).
                let store = try database.openReadOnly()
                report = try store.withSnapshot { (snapshot) throws(StateStoreError) -> GatheredOutput in
                    let limit = cutoff.map(Self.wholeMilliseconds)
                    let selected = { (entry: StateStore.Entry) in limit.map { entry.updatedAt < $0 } ?? true }
                    // The same scan twice, written out: a closure kept in a constant cannot
                    // capture the borrowed snapshot (Swift 6.3's compiler crashes on it).
                    return try self.report(
                        criterion: criterion, cutoff: cutoff, prefix: prefix,
                        measuring: { (visit) throws(StateStoreError) in
                            try snapshot.forEachEntry(under: prefix) { if selected($0) { visit($0) } }
                        },
                        listing: { (visit) throws(StateStoreError) in
                            try snapshot.forEachEntry(under: prefix) { if selected($0) { visit($0) } }
                        })
                }
            } else {
                try database.requireExistingFile()
                // Read-only first: prune never turns an empty or unmigrated file into a database.
                _ = try database.openReadOnly()
                let store = try database.openForWriting()
                // Listed from the transaction that removes them, as they are removed: what is
                // reported is what went. Written once committed.
                report = try store.writeDurably { (transaction) throws(StateStoreError) -> GatheredOutput in
                    try self.report(
                        criterion: criterion, cutoff: cutoff, prefix: prefix,
                        measuring: { (visit) throws(StateStoreError) in
                            try transaction.forEachEntry(in: selection, visit)
                        },
                        listing: { (visit) throws(StateStoreError) in
                            _ = try transaction.removeEntries(in: selection, visiting: visit)
                        })
                }
            }
            try report.write(
                done: dryRun
                    ? nil
                    : "The states were removed and the removal committed (do not run the command again; `statectl inspect` shows what is left)"
            )
            if !output.json { noteInvalidRowsKept() }
        }

        /// `date` in whole milliseconds, as the database keeps times and a real prune compares
        /// them: a dry run's cutoff, so the two never disagree on a row of the cutoff's millisecond.
        static func wholeMilliseconds(_ date: Date) -> Date {
            Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
        }

        /// What prune prints of the states removed (or that would be): `listing` visits them for
        /// their lines, after `measuring` has visited them for the table's widths (JSON needs no
        /// first pass: the count and total are written ahead of the objects gathered).
        private func report(
            criterion: String, cutoff: Date?, prefix: RestorationPath?,
            measuring: (_ visit: (StateStore.Entry) -> Void) throws(StateStoreError) -> Void,
            listing scan: (_ visit: (StateStore.Entry) -> Void) throws(StateStoreError) -> Void
        ) throws(StateStoreError) -> GatheredOutput {
            if output.json {
                return try EntryOutput.document(
                    kind: "prune",
                    { listing in
                        [
                            ("database", .string(database.path)),
                            ("dry_run", .bool(dryRun)),
                            ("older_than", olderThan.map { .string($0.description) } ?? .null),
                            ("cutoff", cutoff.map { .string(Format.iso8601($0)) } ?? .null),
                            ("path_prefix", prefix.map { .string($0.rawValue) } ?? .null),
                            ("count", .int(listing.count)),
                            ("total_bytes", .int(listing.totalBytes)),
                        ]
                    }, listing: "removed", scan
                ).document
            }
            var listing = EntryListing()
            try measuring { listing.measure($0) }
            var output = GatheredOutput()
            if listing.count == 0 {
                output.appendLine(
                    "No states \(criterion) in \(database.path); nothing \(dryRun ? "would be" : "was") removed.")
                return output
            }
            output = try EntryOutput.table(listing, scan)
            let noun = listing.count == 1 ? "state" : "states"
            output.appendLine(
                "\(dryRun ? "Would remove" : "Removed") \(listing.count) \(noun) (\(Format.bytes(listing.totalBytes))) \(criterion) from \(database.path)."
                    + (dryRun ? " Nothing was changed (--dry-run)." : ""))
            return output
        }

        /// `--quarantine`: removes (or, with --dry-run, lists) the quarantined rows selected.
        private func pruneQuarantine(under prefix: RestorationPath?, before cutoff: Date?) throws {
            let removed: [StateStore.QuarantinedState]
            if dryRun {
                let limit = cutoff.map(Self.wholeMilliseconds)
                removed = try database.openReadOnly().quarantinedStates().filter { state in
                    (prefix.map(state.path.hasPrefix) ?? true) && (limit.map { state.quarantinedAt < $0 } ?? true)
                }
            } else {
                try database.requireExistingFile()
                _ = try database.openReadOnly()
                removed = try database.openForWriting().writeDurably { (transaction) throws(StateStoreError) in
                    try transaction.removeQuarantined(under: prefix, quarantinedBefore: cutoff)
                }
            }
            if output.json {
                Output.json(
                    kind: "prune",
                    [
                        ("database", .string(database.path)),
                        ("dry_run", .bool(dryRun)),
                        ("quarantine", .bool(true)),
                        ("older_than", olderThan.map { .string($0.description) } ?? .null),
                        ("cutoff", cutoff.map { .string(Format.iso8601($0)) } ?? .null),
                        ("path_prefix", prefix.map { .string($0.rawValue) } ?? .null),
                        ("count", .int(removed.count)),
                        ("removed_quarantined", .array(removed.map(EntryOutput.json))),
                    ])
                return
            }
            let criterion =
                prefix.map { "at or below \($0)" }
                ?? "quarantined more than \(olderThan?.description ?? "") ago (before \(Format.table(cutoff ?? .distantPast)) UTC)"
            if removed.isEmpty {
                print(
                    "No quarantined states \(criterion) in \(database.path); nothing \(dryRun ? "would be" : "was") removed."
                )
                return
            }
            print(EntryOutput.table(removed))
            let noun = removed.count == 1 ? "quarantined state" : "quarantined states"
            print(
                "\(dryRun ? "Would remove" : "Removed") \(removed.count) \(noun) \(criterion) from \(database.path)."
                    + (dryRun ? " Nothing was changed (--dry-run)." : ""))
        }

        /// `--invalid-paths`: removes (or, with --dry-run, lists) the rows no restoration path names.
        private func pruneInvalidRows() throws {
            let rows: [StateStore.InvalidRow]
            if dryRun {
                rows = try database.openReadOnly().invalidRows()
            } else {
                try database.requireExistingFile()
                _ = try database.openReadOnly()
                rows = try database.openForWriting().writeDurably { (transaction) throws(StateStoreError) in
                    try transaction.removeInvalidRows()
                }
            }
            if output.json {
                Output.json(
                    kind: "prune",
                    [
                        ("database", .string(database.path)),
                        ("dry_run", .bool(dryRun)),
                        ("count", .int(rows.count)),
                        ("total_bytes", .int(rows.reduce(0) { $0 + $1.byteCount })),
                        ("removed_invalid_rows", .array(rows.map(EntryOutput.json))),
                    ])
                return
            }
            if rows.isEmpty {
                print("No rows with invalid paths in \(database.path); nothing \(dryRun ? "would be" : "was") removed.")
                return
            }
            print(EntryOutput.table(rows).split(separator: "\n").dropFirst().dropLast().joined(separator: "\n"))
            let noun = rows.count == 1 ? "row" : "rows"
            print(
                "\(dryRun ? "Would remove" : "Removed") \(rows.count) \(noun) with invalid paths from \(database.path)."
                    + (dryRun ? " Nothing was changed (--dry-run)." : ""))
        }

        /// Rows with invalid paths are never removed by --older-than or --path (they could not be
        /// listed by path); say that they are there.
        private func noteInvalidRowsKept() {
            guard !output.json, let rows = try? database.openReadOnly().invalidRows(), !rows.isEmpty else { return }
            print(
                "Kept \(rows.count) row(s) whose path is not a valid restoration path; `statectl prune --invalid-paths` removes them."
            )
        }
    }
}
