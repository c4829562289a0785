import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl migrate [--dry-run]`: creates the database when missing and applies pending migrations.
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the database if needed and apply pending schema migrations.",
            discussion: """
                Applies the migrations embedded in this build (migrations/NNNN_name.sql), each in \
                its own transaction. A missing file is created with mode 0600 (its folder 0700) \
                in WAL mode. A database migrated by a newer build is refused and left untouched \
                (exit 3). --dry-run lists what would be applied and changes nothing, not even \
                creating a missing file.

                Example:
                  statectl migrate --db ./state.sqlite --dry-run
                  statectl migrate --db ./state.sqlite

                JSON (--json): {"schema": 1, "kind": "migrate", "database", "dry_run", \
                "from_version", "to_version", "migrations": [{"version", "name"}]}
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        @Flag(help: "List the pending migrations without applying them.")
        var dryRun = false

        func run() throws {
            let path = database.path
            let exists = FileManager.default.fileExists(atPath: path)
            let pending: [(version: Int, name: String)]
            if exists {
                pending = try StateStore.pendingMigrations(at: path)
            } else {
                pending = StateStore.knownMigrations
            }
            let latest = StateStore.latestSchemaVersion
            let from = (pending.first?.version ?? latest + 1) - 1
            if !dryRun {
                _ = try database.openForWriting()
            }
            if output.json {
                Output.json(kind: "migrate", [
                    ("database", .string(path)),
                    ("dry_run", .bool(dryRun)),
                    ("created", .bool(!exists && !dryRun)),
                    ("from_version", .int(from)),
                    ("to_version", .int(latest)),
                    ("migrations", .array(pending.map { .object([("version", .int($0.version)), ("name", .string($0.name))]) })),
                ])
                return
            }
            if pending.isEmpty {
                print("\(path) is at schema version \(latest); nothing to migrate.")
                return
            }
            let noun = pending.count == 1 ? "migration" : "migrations"
            if dryRun {
                print("\(pending.count) pending \(noun) for \(path) (schema \(from) → \(latest)):")
            } else {
                print("Applied \(pending.count) \(noun) to \(path)\(exists ? "" : " (created)") (schema \(from) → \(latest)):")
            }
            for migration in pending {
                print("  " + String(format: "%04d", migration.version) + " " + migration.name)
            }
            if dryRun { print("Nothing was changed (--dry-run).") }
        }
    }
}
