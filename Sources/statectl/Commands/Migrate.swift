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

                --repair re-records the schema version of a database whose version records \
                (PRAGMA user_version, schema_migrations) were erased or damaged outside \
                StateStore, when its tables and indexes match this build's schema exactly; \
                otherwise it is refused (exit 3), naming each difference, and nothing changes. \
                No table or row of the user's is touched.

                Example:
                  statectl migrate --db ./state.sqlite --dry-run
                  statectl migrate --db ./state.sqlite
                  statectl migrate --db ./state.sqlite --repair

                JSON (--json): {"schema": 1, "kind": "migrate", "database", "dry_run", \
                "from_version", "to_version", "migrations": [{"version", "name"}]} \
                (with --repair: "repair", "repaired", "from_version", "to_version")
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        @Flag(help: "List the pending migrations without applying them.")
        var dryRun = false

        @Flag(
            help:
                "Re-record the schema version of a database whose tables match this build's schema exactly but whose version records were erased."
        )
        var repair = false

        func validate() throws {
            if repair && dryRun { throw ValidationError("--repair and --dry-run cannot be combined.") }
        }

        func run() throws {
            let path = database.path
            if repair {
                try database.requireExistingFile()
                let found = try StateStore.repairSchemaVersion(at: path)
                let latest = StateStore.latestSchemaVersion
                if output.json {
                    Output.json(
                        kind: "migrate",
                        [
                            ("database", .string(path)),
                            ("repair", .bool(true)),
                            ("repaired", .bool(found != nil)),
                            ("from_version", .int(found ?? latest)),
                            ("to_version", .int(latest)),
                        ])
                } else if let found {
                    print(
                        "Re-recorded schema version \(latest) in \(path) (its header said \(found)); its tables already matched it exactly. No state or other row of the app's was changed."
                    )
                } else {
                    print("\(path) records schema version \(latest) already; nothing to repair.")
                }
                return
            }
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
                Output.json(
                    kind: "migrate",
                    [
                        ("database", .string(path)),
                        ("dry_run", .bool(dryRun)),
                        ("created", .bool(!exists && !dryRun)),
                        ("from_version", .int(from)),
                        ("to_version", .int(latest)),
                        (
                            "migrations",
                            .array(
                                pending.map { .object([("version", .int($0.version)), ("name", .string($0.name))]) })
                        ),
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
                print(
                    "Applied \(pending.count) \(noun) to \(path)\(exists ? "" : " (created)") (schema \(from) → \(latest)):"
                )
            }
            for migration in pending {
                print("  " + String(format: "%04d", migration.version) + " " + migration.name)
            }
            if dryRun { print("Nothing was changed (--dry-run).") }
        }
    }
}
