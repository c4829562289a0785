import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl check`: integrity, schema version, counts, quarantine and checksums.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the database's integrity, schema version, checksums and quarantine.",
            discussion: """
                Opens the database read-only, verifies its tables, columns and triggers against \
                the schema StateStore wrote, runs PRAGMA integrity_check, verifies every state's \
                checksum, path and generation, and counts states, quarantined rows and pressure events. \
                Checksums cover the stored bytes, so sealed states are checked without their key; \
                with --key-file or --credential, every state sealed with that key is also opened, \
                and one that does not open is a problem.

                Exit status: 0 when healthy; 1 when a problem is found (integrity errors, \
                damage met while reading, tables or triggers changed outside StateStore, checksum \
                mismatches, sealed states that do not open with their key, invalid paths, exhausted \
                generations, update times outside the years 0000–9999, type names that are not UTF-8, quarantined rows, a schema older \
                than this build's); 3 when the file cannot be opened (missing, not a regular file, \
                not a database, another program's database, newer schema).

                Example:
                  statectl check --db ./state.sqlite
                  statectl check --db ./state.sqlite --json

                JSON (--json): {"schema": 1, "kind": "check", "database", "healthy", "problems": [..], \
                "integrity": [..], "schema_version", "latest_schema_version", "journal_mode", \
                "state_count", "quarantine_count", "pressure_event_count", "checksum_mismatches": [paths], \
                "header_schema_version", "invalid_rows": [{"rowid", "path", "reason", "byte_count", \
                "updated_at"}], "exhausted_generations": [paths], "times_out_of_range": [paths], "invalid_type_names": [paths], "versions_out_of_range": [paths], "sealed_states": {key id: count}, \
                "unopened_key_ids": [key ids not given], "unopenable_states": [paths]}
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var key: KeyOptions

        func run() throws {
            let path = database.path
            let keyring = try key.keyring()
            let health: StateStore.Health
            var salvage: String?
            do {
                // Header-level open check: page damage is reported below as a finding (exit 1).
                let store = try database.openReadOnly(warnSalvage: false, sealer: keyring)
                health = try store.check()
                salvage = try database.salvageProblem(of: store)
            } catch let error as StateStoreError {
                switch error {
                case .corrupt, .schemaTooOld, .schemaMismatch:
                    report(path: path, failure: error)
                    throw ExitCode(ExitStatus.problemFound.rawValue)
                default:
                    throw error
                }
            }
            var problems: [String] = []
            if health.integrity != ["ok"] {
                problems.append("integrity check failed: " + health.integrity.joined(separator: "; "))
            }
            if !health.checksumMismatches.isEmpty {
                problems.append("\(health.checksumMismatches.count) state(s) do not match their checksum")
            }
            if health.quarantineCount > 0 {
                problems.append(
                    "\(health.quarantineCount) quarantined state(s); see `statectl inspect --quarantine`, and `statectl prune --quarantine` once they are not wanted"
                )
            }
            if let salvage {
                problems.append(salvage)
            } else if health.schemaVersion != health.latestSchemaVersion {
                problems.append("schema version \(health.schemaVersion), this build uses \(health.latestSchemaVersion)")
            }
            if salvage == nil, health.headerSchemaVersion != health.schemaVersion {
                problems.append(
                    "the header's user_version is \(health.headerSchemaVersion) while schema_migrations records \(health.schemaVersion); `statectl migrate` puts the header right"
                )
            }
            if !health.invalidRows.isEmpty {
                problems.append(
                    "\(health.invalidRows.count) row(s) have a path that is not a valid restoration path (\(health.invalidRows.map { "rowid \($0.rowID): \($0.reason)" }.joined(separator: "; "))); `statectl inspect` lists them, `statectl prune --invalid-paths` removes them"
                )
            }
            if !health.unopenableStates.isEmpty {
                problems.append(
                    "\(health.unopenableStates.count) sealed state(s) do not open with their key (\(health.unopenableStates.map(\.rawValue).joined(separator: ", "))): altered or copied outside StateStore; an application quarantines each when it reads it"
                )
            }
            if let keyring {
                // A key given to check the sealed states with that does not open some of them:
                // a wrong key (or a backup key being tried) is not a healthy check.
                let skipped = unopened(health, keyring: keyring)
                if !skipped.isEmpty {
                    let count = skipped.reduce(0) { $0 + health.sealedStates[$1, default: 0] }
                    problems.append(
                        "\(count) sealed state(s) are sealed with \(skipped.count == 1 ? "a key" : "keys") the key given (\(keyring.keyID)) does not open (\(skipped.joined(separator: ", "))), so they were not checked; give the key they were sealed with"
                    )
                }
            }
            if !health.exhaustedGenerations.isEmpty {
                problems.append(
                    "\(health.exhaustedGenerations.count) state(s) have a generation past \(StoredState.maximumGeneration) and cannot rise (\(health.exhaustedGenerations.map(\.rawValue).joined(separator: ", "))); the next save of each moves the old row to quarantine, bytes intact, and starts the path again at generation 1"
                )
            }
            if !health.timesOutOfRange.isEmpty {
                problems.append(
                    "\(health.timesOutOfRange.count) state(s) have an update time outside the years 0000–9999, written outside StateStore (\(health.timesOutOfRange.map(\.rawValue).joined(separator: ", "))); `statectl export` refuses them until each is saved again or removed (`statectl prune --path`)"
                )
            }
            if !health.invalidTypeNames.isEmpty {
                problems.append(
                    "\(health.invalidTypeNames.count) state(s) have a type name that is not valid UTF-8, holds a control character or is over 4096 bytes, written outside StateStore (\(health.invalidTypeNames.map(\.rawValue).joined(separator: ", "))); the app cannot restore them and `statectl export` refuses them until each is saved again or removed (`statectl prune --path`)"
                )
            }
            if !health.versionsOutOfRange.isEmpty {
                problems.append(
                    "\(health.versionsOutOfRange.count) state(s) have a version outside 0–\(StoredState.maximumVersion), written outside StateStore (\(health.versionsOutOfRange.map(\.rawValue).joined(separator: ", "))); `statectl export` refuses them until each is saved again or removed (`statectl prune --path`)"
                )
            }
            if output.json {
                Output.json(
                    kind: "check",
                    [
                        ("database", .string(path)),
                        ("healthy", .bool(problems.isEmpty)),
                        ("problems", .strings(problems)),
                        ("integrity", .strings(health.integrity)),
                        ("schema_version", .int(health.schemaVersion)),
                        ("latest_schema_version", .int(health.latestSchemaVersion)),
                        ("journal_mode", .string(health.journalMode)),
                        ("state_count", .int(health.stateCount)),
                        ("quarantine_count", .int(health.quarantineCount)),
                        ("pressure_event_count", .int(health.pressureEventCount)),
                        ("checksum_mismatches", .strings(health.checksumMismatches.map(\.rawValue))),
                        ("header_schema_version", .int(health.headerSchemaVersion)),
                        ("invalid_rows", .array(health.invalidRows.map(EntryOutput.json))),
                        ("exhausted_generations", .strings(health.exhaustedGenerations.map(\.rawValue))),
                        ("times_out_of_range", .strings(health.timesOutOfRange.map(\.rawValue))),
                        ("invalid_type_names", .strings(health.invalidTypeNames.map(\.rawValue))),
                        ("versions_out_of_range", .strings(health.versionsOutOfRange.map(\.rawValue))),
                        (
                            "sealed_states",
                            .object(health.sealedStates.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
                        ),
                        ("unopened_key_ids", .strings(unopened(health, keyring: keyring))),
                        ("unopenable_states", .strings(health.unopenableStates.map(\.rawValue))),
                    ])
            } else {
                print(
                    Table.keyValue([
                        ("Database:", path),
                        ("Integrity:", health.integrity.joined(separator: "; ")),
                        ("Schema version:", "\(health.schemaVersion) (this build: \(health.latestSchemaVersion))"),
                        ("Journal mode:", health.journalMode),
                        ("States:", String(health.stateCount)),
                        ("Quarantined:", String(health.quarantineCount)),
                        ("Pressure events:", String(health.pressureEventCount)),
                        (
                            "Checksum mismatches:",
                            health.checksumMismatches.isEmpty
                                ? "0"
                                : "\(health.checksumMismatches.count) (\(health.checksumMismatches.map(\.rawValue).joined(separator: ", ")))"
                        ),
                        ("Sealed states:", sealedSummary(health, keyring: keyring)),
                    ]))
                print(
                    problems.isEmpty
                        ? "Healthy." : "Problems found:\n" + problems.map { "  - " + $0 }.joined(separator: "\n"))
            }
            if !problems.isEmpty { throw ExitCode(ExitStatus.problemFound.rawValue) }
        }

        /// Key ids of sealed states that were not opened: no key given, or another one.
        private func unopened(_ health: StateStore.Health, keyring: (any StateSealer)?) -> [String] {
            health.sealedStates.keys.filter { !(keyring?.canOpen(keyID: $0) ?? false) }.sorted()
        }

        /// `0`, or `4 (key 1a2b…: 4, opened)`, `4 (key 1a2b…: 4, not opened (no key given))`.
        private func sealedSummary(_ health: StateStore.Health, keyring: (any StateSealer)?) -> String {
            let total = health.sealedStates.values.reduce(0, +)
            guard total > 0 else { return "0" }
            let skipped = Set(unopened(health, keyring: keyring))
            let keys = health.sealedStates.sorted { $0.key < $1.key }.map { id, count in
                "key \(id): \(count), "
                    + (skipped.contains(id)
                        ? "not opened (" + (keyring == nil ? "no key given" : "not the key given") + ")" : "opened")
            }
            return "\(total) (\(keys.joined(separator: "; ")))"
        }

        /// The report for a database whose damage (or old schema) stopped the check itself.
        private func report(path: String, failure: StateStoreError) {
            if output.json {
                Output.json(
                    kind: "check",
                    [
                        ("database", .string(path)),
                        ("healthy", .bool(false)),
                        ("problems", .strings([oneLine(failure.description)])),
                    ])
            } else {
                print("Database: \(path)")
                print("Problems found:\n  - \(oneLine(failure.description))")
            }
        }
    }
}
