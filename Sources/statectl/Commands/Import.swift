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

        func run() throws {
            let maximumStateSize = Int(limit.maximumStateSize.bytes)
            // Everything is validated before the database is even opened.
            let states = try ExportDocument.read(file: file, maximumStateSize: maximumStateSize)
            let store = try database.openForWriting(maximumStateSize: maximumStateSize)
            let replace = self.replace
            let (created, replaced, removed) = try store.write { (transaction) throws(StateStoreError) -> (Int, Int, Int) in
                let stored = try transaction.storedPaths()
                let existing = Set(stored.map { Array($0.utf8) })
                let removed = replace ? try transaction.removeStates(notIn: Set(states.map(\.path))) : 0
                var created = 0, replaced = 0
                for state in states {
                    try transaction.insert(verbatim: state)
                    if existing.contains(Array(state.path.rawValue.utf8)) { replaced += 1 } else { created += 1 }
                }
                return (created, replaced, removed)
            }
            if output.json {
                Output.json(kind: "import", [
                    ("database", .string(database.path)),
                    ("source", .string(file)),
                    ("imported", .int(states.count)),
                    ("created", .int(created)),
                    ("replaced", .int(replaced)),
                    ("removed", .int(removed)),
                ])
            } else {
                var line = "Imported \(states.count) \(states.count == 1 ? "state" : "states") into \(database.path): \(created) new, \(replaced) replaced"
                if replace { line += ", \(removed) removed" }
                print(line + ".")
            }
        }
    }
}
