import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl import FILE`: writes the states of an export document, all or nothing.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the states of an export document, all in one transaction.",
            discussion: """
                Reads the whole document and validates it before writing anything: the format \
                and database schema versions (a newer one is refused, exit 3), every path, type, \
                version, encoding and time, each state's size (at most --max-state-size, 1 MiB by \
                default, as the library's own limit), its checksum when present, and duplicate paths. The file may be at most \
                256 MiB and nest at most 64 levels deep. Any problem refuses the whole import \
                (exit 1) and leaves the database as it was.

                Import merges: each state is written under its path, replacing what is stored \
                there, verbatim (type, version, encoding, bytes, checksum and update time); other \
                stored states stay. A replaced row gets the larger of the imported generation and \
                its stored generation + 1, so a running application notices the change; a new row \
                keeps the imported generation. With --replace, stored states whose paths are not in \
                the document are removed, in the same transaction. A missing database is created \
                and migrated.

                Sealed states (with a "key_id") are written sealed, as exported, and need no key. \
                With --key-file or --credential, clear states are sealed with that key as they are \
                written. A stored state sealed with a key that was not given is replaced only by \
                one sealed with the same key; otherwise the import is refused and nothing changes.

                Example:
                  statectl export --db ./state.sqlite --output backup.json
                  statectl import --db ./restored.sqlite backup.json

                JSON (--json): {"schema": 1, "kind": "import", "database", "source", "imported", \
                "created", "replaced", "removed"}
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        @Argument(help: "The export document to import.", completion: .file())
        var file: String

        @Flag(help: "Also remove stored states whose paths are not in the document.")
        var replace = false

        @OptionGroup var limit: StateSizeOptions
        @OptionGroup var key: KeyOptions

        func run() throws {
            let maximumStateSize = Int(limit.maximumStateSize.bytes)
            // Everything is validated before the database is even opened.
            let export = try ExportFile.read(file: file, maximumStateSize: maximumStateSize)
            let sealer = try key.keyring()
            let store = try database.openForWriting(maximumStateSize: maximumStateSize, sealer: sealer)
            let result = try store.importStates(export, replace: replace)
            if output.json {
                Output.json(
                    kind: "import",
                    [
                        ("database", .string(database.path)),
                        ("source", .string(file)),
                        ("imported", .int(result.imported)),
                        ("created", .int(result.created)),
                        ("replaced", .int(result.replaced)),
                        ("removed", .int(result.removed)),
                    ])
            } else {
                var line =
                    "Imported \(result.imported) \(result.imported == 1 ? "state" : "states") into \(database.path): \(result.created) new, \(result.replaced) replaced"
                if replace { line += ", \(result.removed) removed" }
                print(line + ".")
                if export.quarantineCarried > 0 {
                    // Carried for the record only: say so, as the rows are not in the database now.
                    let count = export.quarantineCarried
                    print(
                        "\(count) quarantined \(count == 1 ? "row" : "rows") in \(file) \(count == 1 ? "was" : "were") not imported (an export carries them for the record; `jq .quarantine` shows them)."
                    )
                }
            }
        }
    }
}
