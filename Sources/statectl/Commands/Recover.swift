import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl recover`: what `StateStore.openOrRecover` does at an application's launch, on demand.
    struct Recover: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a damaged database aside and start a fresh one holding every state that can still be read.",
            discussion: """
                Opens the database and checks every page and index (PRAGMA integrity_check, as \
                check does). A sound database \
                is left as it is (a database of an older schema is migrated, as by any command \
                that writes). One that is damaged, is not a database, has lost its WAL, or whose \
                tables were changed outside StateStore is moved aside as <file>.broken-<UTC time> \
                with its -wal and -shm (nothing is deleted, and the moved file is not changed), \
                and a fresh database takes its place, holding everything of the old one that can \
                still be read and checked: every state whose bytes match their checksum (sealed \
                ones as they are), the window hierarchy archives, the quarantine, the pressure \
                events and the metadata. Reading goes on past damaged pages; the states on them, \
                states whose bytes fail their checksum, and states over --max-state-size (give \
                the application's own limit) stay in the moved file. A large quarantined row or \
                archive is copied a megabyte at a time, never held whole.

                The fresh database is built beside the old one as <file>.recovering and takes its \
                name once it is whole: a recovery interrupted (killed, a power cut) leaves the old \
                file in place, and the next one starts again; one interrupted between its renames \
                leaves no file at --db, and its whole copy, which the next run puts in place. A \
                database another process has open is not moved (exit 1): stop the application \
                first. Nor is one another process is recovering (exit 1): each recovery holds a \
                lock on <file>.recovering-lock until it ends. When the fresh database cannot \
                take the copy (a full disk), it is removed and the old file stays where it is \
                (exit 1; run it again once there is room). A --db that is a symbolic link is followed: the file it leads to is \
                moved aside beside itself and made afresh there. A database from a newer build, \
                or another program's, is never moved (exit 3).

                Exit status: 0 when the database was sound or was recovered; 1 when it was not \
                moved; 3 when it cannot be opened at all; 4 when the recovered database was \
                committed but could not be synced to storage.

                Example:
                  statectl recover --db ./state.sqlite

                JSON (--json): {"schema": 1, "kind": "recover", "database", "recovered", \
                "reason", "moved_to", "states", "states_left_behind", "unreadable_stretches", \
                "archives", "quarantined", "salvage_error"} (the last eight null when nothing was recovered)
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var limit: StateSizeOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let path = database.path
            // A recovery stopped between its renames left no file at the path, and its whole copy
            // beside it, which the open puts in place.
            let interrupted = StateStore.isMissingBesideWholeRecoveryCopy(path)
            if !interrupted { try database.requireExistingFile() }
            let recovery = try Self.recover(path, maximumStateSize: Int(limit.maximumStateSize.bytes))
            let salvage = recovery?.salvage
            if output.json {
                Output.json(
                    kind: "recover",
                    [
                        ("database", .string(path)),
                        ("recovered", .bool(recovery != nil)),
                        ("reason", recovery.map { .string(Self.reason($0.reason)) } ?? .null),
                        ("moved_to", recovery.map { .string($0.movedTo) } ?? .null),
                        ("states", Self.number(salvage?.states)),
                        ("states_left_behind", Self.number(salvage?.statesLeftBehind)),
                        ("unreadable_stretches", Self.number(salvage?.unreadableStretches)),
                        ("archives", Self.number(salvage?.archives)),
                        ("quarantined", Self.number(salvage?.quarantined)),
                        ("salvage_error", salvage?.error.map { .string(oneLine($0.description)) } ?? .null),
                    ])
            } else if let recovery, let salvage {
                print("\(path) could not be used: \(Self.reason(recovery.reason)).")
                let companions = ["-wal", "-shm"].filter {
                    FileManager.default.fileExists(atPath: recovery.movedTo + $0)
                }
                let beside = companions.isEmpty ? "" : " (with its " + companions.joined(separator: " and ") + ")"
                print("It was moved aside, unchanged, to \(recovery.movedTo)\(beside).")
                print(
                    Table.keyValue([
                        ("States copied:", String(salvage.states)),
                        (
                            "States left behind:",
                            salvage.statesLeftBehind == 0
                                ? "0"
                                : "\(salvage.statesLeftBehind) (their bytes fail their checksum, a column cannot be read, or they are over --max-state-size \(limit.maximumStateSize))"
                        ),
                        (
                            "Unreadable stretches:",
                            salvage.unreadableStretches == 0
                                ? "0"
                                : "\(salvage.unreadableStretches) (damaged pages of the states table; the states on them stay behind)"
                        ),
                        ("Archives copied:", String(salvage.archives)),
                        ("Quarantined rows copied:", String(salvage.quarantined)),
                    ]))
                if let error = salvage.error {
                    print("Not everything readable could be copied: \(oneLine(error.description))")
                } else {
                    print("The fresh \(path) holds everything of the old one that could be read and checked.")
                }
            } else if interrupted {
                print(
                    "\(path): the copy an interrupted recovery had made took its place; every page read and no damage found."
                )
            } else {
                print("\(path): every page read and no damage found; nothing was moved.")
            }
            if let error = salvage?.error, case .notSynced = error { throw error }
        }

        /// `openOrRecover`, checking every page and index; a database another process has open is refused
        /// in the command's words.
        private static func recover(_ path: String, maximumStateSize: Int) throws -> StateStore.Recovery? {
            do {
                return try StateStore.openOrRecover(
                    path: path,
                    options: .init(openCheck: .full, maximumStateSize: maximumStateSize, backgroundCheck: .off)
                ).recovery
            } catch {
                guard case .busy(let failure) = error else { throw error }
                throw CLIError(message: failure.message + "; nothing was moved or changed")
            }
        }

        /// Why the database was moved aside, without the library's advice (which this command follows).
        private static func reason(_ error: StateStoreError) -> String {
            switch error {
            case .corrupt(_, let failure): "it is damaged (\(oneLine(failure.message)))"
            case .notADatabase: "it is not an SQLite database"
            case .walMissing(let file, let frames):
                "its write-ahead log \(file)-wal is missing, and \(frames) committed pages were only in it"
            case .schemaMismatch(_, let detail): "its schema was changed outside StateStore (\(oneLine(detail)))"
            default: oneLine(error.description)
            }
        }

        private static func number(_ value: Int?) -> JSON { value.map { .int($0) } ?? .null }
    }
}
