import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl rekey`: seal a clear database, rotate to a new key, or unseal, in one transaction.
    struct Rekey: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal every state with a new key, or make every state clear, in one transaction.",
            discussion: """
                Opens each state with the current key (--key-file or --credential; none for a clear \
                database) and writes it back sealed with the new one (--new-key-file or \
                --new-credential), or clear (--clear). Path, type, version, generation and update \
                time stay as they were. Quarantined rows are rewritten too when they open, and kept \
                as they are when not.

                Everything is one transaction: killed half-way, the database is exactly as it was, \
                every state still opens with the current key, and running the command again does \
                the whole of it. A state sealed with a key that was not given, or damaged, refuses \
                the whole rekey (exit 1) and changes nothing, as does a state that would be over \
                --max-state-size once sealed (give the application's own limit). The database \
                records the key it is sealed with, so a store or command without a key writes \
                nothing clear into it. Stop the applications that use the database first, or give \
                them a keyring that opens both keys.

                Example:
                  statectl rekey --db ./state.sqlite --new-key-file ./new.key
                  statectl rekey --db ./state.sqlite --key-file ./old.key --new-key-file ./new.key
                  statectl rekey --db ./state.sqlite --key-file ./new.key --clear

                JSON (--json): {"schema": 1, "kind": "rekey", "database", "key_id", "rewritten", \
                "unchanged", "quarantine_rewritten", "quarantine_kept"}
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var key: KeyOptions

        @Option(
            name: .customLong("new-key-file"),
            help: ArgumentHelp(
                "Seal every state with the key in this file (mode 600 or 400, owned by you).", valueName: "path"),
            completion: .file()
        )
        var newKeyFile: String?

        @Option(
            name: .customLong("new-credential"),
            help: ArgumentHelp("Seal every state with the systemd credential NAME.", valueName: "name"))
        var newCredential: String?

        @Flag(help: "Make every state clear: unseal the database.")
        var clear = false

        @OptionGroup var limit: StateSizeOptions

        func validate() throws {
            if [newKeyFile != nil, newCredential != nil, clear].filter({ $0 }).count != 1 {
                throw ValidationError("Give exactly one of --new-key-file, --new-credential and --clear.")
            }
            if newKeyFile != nil || newCredential != nil { try KeyOptions.requireSealing() }
        }

        func run() throws {
            try database.requireExistingFile()
            let current = try key.keyring()
            let target = try KeyOptions.key(file: newKeyFile, credential: newCredential)
            let result = try StateStore.rekey(
                at: database.path, from: current, to: target,
                options: .init(maximumStateSize: Int(limit.maximumStateSize.bytes))
            )
            if output.json {
                Output.json(
                    kind: "rekey",
                    [
                        ("database", .string(database.path)),
                        ("key_id", target.map { .string($0.keyID) } ?? .null),
                        ("rewritten", .int(result.rewritten)),
                        ("unchanged", .int(result.unchanged)),
                        ("quarantine_rewritten", .int(result.quarantineRewritten)),
                        ("quarantine_kept", .int(result.quarantineKept)),
                    ])
                return
            }
            let noun = { (count: Int) in "\(count) \(count == 1 ? "state" : "states")" }
            let done =
                target.map { "Sealed \(noun(result.rewritten)) with key \($0.keyID)" }
                ?? "Made \(noun(result.rewritten)) clear"
            var line =
                "\(done) in \(database.path); \(result.unchanged) already \(result.unchanged == 1 ? "was" : "were")."
            if result.quarantineRewritten + result.quarantineKept > 0 {
                line +=
                    " Quarantine: \(result.quarantineRewritten) rewritten, \(result.quarantineKept) kept as they were (they do not open with the key given)."
            }
            print(line)
        }
    }
}
