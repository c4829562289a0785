import ArgumentParser
import Foundation
import StateStore

extension Statectl {
    /// `statectl inspect`: what the database holds, read-only.
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the stored states, one state, pressure events, quarantine or the hierarchy.",
            discussion: """
                Opens the database read-only: it never creates, migrates or writes the file, and \
                works while an application writes to it (WAL). A missing file is not created (exit 3).

                Without PATH: a table of every state sorted by path (path, type, version, size, \
                generation, last update in UTC) and a summary line. With PATH: the state stored \
                exactly there, with its metadata, JSON pretty-printed with sorted keys and other \
                bytes as a hex dump; when nothing is stored exactly at PATH, the table of the \
                states below it (--list always shows the table).

                Sealed states (encrypted at rest) are listed with the key id they are sealed with, \
                and shown only when --key-file or --credential gives that key.

                --hierarchy draws the window hierarchy the application archived for --scene (the \
                controllers by storyboard identifier, or built in code by restoration identifier, in \
                their navigation stacks, tabs, containers and presentations), the one \
                restoreHierarchy(in:) rebuilds at the next launch, then the controllers that could not \
                be archived and why; with --set-aside, the archive set aside instead (by the crash-loop \
                guard, or because it could not be rebuilt).

                --scenes lists the window scenes the database knows (each one a window of the \
                application, saved under its own paths), and each one's claim: the live process \
                whose window shows it now, and since when, or "unclaimed". A scene no window takes \
                again is kept, with its states, until the application's retention removes them. \
                Scenes a process holds that have no archive yet are listed too.

                Example:
                  statectl inspect --db ./state.sqlite
                  statectl inspect --db ./state.sqlite root/inbox
                  statectl inspect --db ./state.sqlite --quarantine --json
                  statectl inspect --db ./state.sqlite --hierarchy
                  statectl inspect --db ./state.sqlite --scenes

                JSON (--json), by "kind":
                  "entries":     {"prefix", "count", "total_bytes", "entries": [{"path", "type_name", \
                "version", "encoding", "byte_count", "generation", "updated_at", "key_id" (sealed states)}], "invalid_rows": \
                [{"rowid", "path", "reason", "byte_count", "updated_at"}] (rows whose path is not valid)}
                  "state":       {"path", "type_name", "version", "encoding", "byte_count", "generation", \
                "updated_at", "checksum" (16 hex digits), "checksum_valid", "key_id" (a sealed state), and \
                "value" (a JSON state) or "base64" (any other bytes; neither for a sealed state without its key)}
                  "events":      {"events": [{"occurred_at", "level", "available_bytes", "rss_before", \
                "rss_after", "bytes_freed", "duration_us"}]}
                  "quarantine":  {"quarantined": [{"id", "path", "type_name", "version", "generation", \
                "encoding", "byte_count", "updated_at", "quarantined_at", "reason"}]}
                  "hierarchy":   {"scene", "set_aside", "found", "set_aside_reason" (with --set-aside, when \
                recorded), and when found "byte_count", "readable", \
                "archive" (the decoded archive: "format", "orientation", "root" with "storyboardIdentifier", \
                "restorationIdentifier", "restorationClass", "kind", "children", "selectedIndex", "presented", \
                and "unarchived": [{"path", "typeName", "reason"}]; when not readable, \
                the stored JSON or null), "reason" and "base64" (when not readable / not JSON)}
                  "scenes":      {"scenes": [{"scene", "path_prefix", "created_at", "archive_byte_count", \
                "archive_updated_at", "set_aside", "claim": {"pid", "since"} or null}]} (null: not recorded)
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var key: KeyOptions

        @Argument(help: "A restoration path: the state stored there, else the states below it.")
        var path: String?

        @Flag(help: "Always list the states at and below PATH as a table, even when a state is stored at PATH.")
        var list = false

        @Flag(help: "Show the memory-pressure events the application handled, newest first.")
        var events = false

        @Option(help: "How many pressure events --events shows.")
        var limit = 100

        @Flag(help: "Show the quarantined states and why they were quarantined, newest first.")
        var quarantine = false

        @Flag(help: "Show the saved window hierarchy archive.")
        var hierarchy = false

        @Option(help: "The window scene whose hierarchy --hierarchy shows.")
        var scene = "main"

        @Flag(help: "With --hierarchy: the archive the crash-loop guard set aside instead of the live one.")
        var setAside = false

        @Flag(help: "Show the window scenes and which live process holds each.")
        var scenes = false

        func validate() throws {
            let modes = [events, quarantine, hierarchy, scenes].filter { $0 }.count
            if modes > 1 {
                throw ValidationError("Use at most one of --events, --quarantine, --hierarchy and --scenes.")
            }
            if modes == 1 && (path != nil || list) {
                throw ValidationError(
                    "PATH and --list cannot be combined with --events, --quarantine, --hierarchy or --scenes.")
            }
            if limit < 0 { throw ValidationError("--limit must be zero or more.") }
            if let path {
                do { _ = try RestorationPath(validating: path) } catch { throw ValidationError(error.description) }
            }
        }

        func run() throws {
            let store = try database.openReadOnly(sealer: try key.keyring())
            if events { return try showEvents(store) }
            if quarantine { return try showQuarantine(store) }
            if hierarchy { return try showHierarchy(store) }
            if scenes { return try showScenes(store) }
            let prefix = try path.map { (path) throws(StateStoreError) in try RestorationPath(validating: path) }
            if let prefix, !list {
                let state: StoredState?
                switch Result(catching: { () throws(StateStoreError) in try store.state(at: prefix) }) {
                case .success(let found): state = found
                case .failure(.stateTooLarge(_, let byteCount, let limit)):
                    throw CLIError(
                        message:
                            "The state at \(prefix) is \(Format.bytes(byteCount)), over the \(Format.bytes(limit)) inspect shows; `statectl inspect --list \(prefix)` lists it and `statectl export --max-state-size SIZE` writes it out."
                    )
                case .failure(let error): throw error
                }
                if let state { return try show(state, opening: store) }
            }
            // One snapshot, read in one pass for JSON (the entries' objects gathered, then the
            // count and total written ahead of them) and in two for the table (the first finds
            // the columns' widths). Neither the entries nor the table's cells are held, only the
            // listing's bytes, which are written once the snapshot has ended: a pager left open
            // on the output must not keep a read transaction open, which would stop the
            // application's checkpoints (its WAL would grow for as long as the pager stays).
            let json = output.json, below = prefix.map { " at or below \($0)" } ?? "", path = database.path
            let listing = try store.withSnapshot { (snapshot) throws(StateStoreError) -> GatheredOutput? in
                // Rows no restoration path can name are listed with the whole database, never
                // hidden: found by the first scan of every row.
                var invalid: [StateStore.InvalidRow] = []
                if json {
                    let (document, listing) = try EntryOutput.document(
                        kind: "entries",
                        { listing in
                            [
                                ("prefix", prefix.map { .string($0.rawValue) } ?? .null),
                                ("count", .int(listing.count)),
                                ("total_bytes", .int(listing.totalBytes)),
                            ]
                        }, listing: "entries",
                        { (visit) throws(StateStoreError) in
                            invalid = try snapshot.forEachEntryFindingInvalidRows(under: prefix, visit)
                        }, trailing: { [("invalid_rows", .array(invalid.map(EntryOutput.json)))] })
                    return prefix != nil && listing.count == 0 && !list ? nil : document
                }
                var listing = EntryListing()
                invalid = try snapshot.forEachEntryFindingInvalidRows(under: prefix) { listing.measure($0) }
                if prefix != nil, listing.count == 0, !list { return nil }
                var text = GatheredOutput()
                if listing.count == 0 {
                    text.appendLine("No states in \(path)\(below).")
                } else {
                    text = try EntryOutput.table(listing) { (visit) throws(StateStoreError) in
                        try snapshot.forEachEntry(under: prefix, visit)
                    }
                    text.appendLine(listing.summary + below + " in \(path)")
                }
                if !invalid.isEmpty { text.appendLine("\n" + EntryOutput.table(invalid)) }
                return text
            }
            guard let listing else {
                throw CLIError(message: "Nothing is stored at or below \(prefix?.rawValue ?? "") in \(database.path).")
            }
            try listing.write()
        }

        /// What `statectl demo` prints of the states it left: the table of `entries` and a
        /// summary line, or one line saying there is nothing.
        static func entriesText(_ entries: [StateStore.Entry], databasePath: String) -> String {
            if entries.isEmpty { return "No states in \(databasePath)." }
            var listing = EntryListing()
            for entry in entries { listing.measure(entry) }
            let lines = [listing.header] + entries.map(listing.line) + [listing.summary + " in \(databasePath)"]
            return lines.joined(separator: "\n")
        }

        // MARK: One state

        /// One state: its row, and its value (a sealed state's only when the key given opens it).
        private func show(_ state: StoredState, opening store: StateStore) throws {
            var bytes: Data? = state.bytes
            var sealing: String?
            if let keyID = state.keyID {
                switch Result(catching: { () throws(StateStoreError) in try store.plaintext(of: state) }) {
                case .success(let plaintext):
                    bytes = plaintext
                    sealing = "with key \(keyID) (opened with the key given)"
                case .failure(.keyMismatch(_, _, let configured)):
                    bytes = nil
                    sealing =
                        "with key \(keyID) (not shown: "
                        + (configured.map { "the key given is \($0)" } ?? "pass --key-file or --credential to show it")
                        + ")"
                case .failure(let error):
                    throw error
                }
            }
            let value = bytes.flatMap { StatePrinter.jsonValue(of: $0) }
            if output.json {
                var members: [(key: String, value: JSON)] = [
                    ("path", .string(state.path.rawValue)),
                    ("type_name", .string(state.typeName)),
                    ("version", .int(state.version)),
                    ("encoding", .string(state.encoding.rawValue)),
                    ("byte_count", .int(state.bytes.count)),
                    ("generation", .int(state.generation)),
                    ("updated_at", .string(Format.iso8601(state.updatedAt))),
                    ("checksum", .string(Format.checksum(state.checksum))),
                    ("checksum_valid", .bool(state.checksumIsValid)),
                ]
                if let keyID = state.keyID { members.append(("key_id", .string(keyID))) }
                if let value {
                    members.append(("value", value))
                } else if let bytes {
                    members.append(("base64", .string(bytes.base64EncodedString())))
                }
                Output.json(kind: "state", members)
                return
            }
            var rows: [(String, String)] = [
                ("Path:", state.path.rawValue),
                ("Type:", state.typeName),
                ("Version:", String(state.version)),
                ("Encoding:", state.encoding.rawValue),
                (
                    "Size:",
                    Format.bytes(state.bytes.count) + (state.bytes.count >= 1024 ? " (\(state.bytes.count) bytes)" : "")
                ),
                ("Generation:", String(state.generation)),
                ("Updated:", Format.iso8601(state.updatedAt)),
                (
                    "Checksum:",
                    Format.checksum(state.checksum)
                        + (state.checksumIsValid ? " (ok)" : " (MISMATCH: the bytes were changed outside StateStore)")
                ),
            ]
            if let sealing { rows.append(("Sealed:", sealing)) }
            print(Table.keyValue(rows))
            guard let bytes else { return }
            print("")
            if let value {
                print(value.serialized(pretty: true, sortKeys: true))
            } else {
                print("Not JSON; the first bytes:")
                print(Format.hexDump(bytes))
            }
        }

        // MARK: Events, quarantine, hierarchy

        private func showEvents(_ store: StateStore) throws {
            let events = try store.pressureEvents(limit: limit)
            if output.json {
                Output.json(kind: "events", [("events", .array(events.map(EntryOutput.json)))])
            } else if events.isEmpty {
                print("No memory-pressure events in \(database.path).")
            } else {
                print(EntryOutput.table(events))
                print("\(events.count) \(events.count == 1 ? "event" : "events"), newest first")
            }
        }

        private func showQuarantine(_ store: StateStore) throws {
            let states = try store.quarantinedStates()
            if output.json {
                Output.json(kind: "quarantine", [("quarantined", .array(states.map(EntryOutput.json)))])
            } else if states.isEmpty {
                print("No quarantined states in \(database.path).")
            } else {
                print(EntryOutput.table(states))
                print("\(states.count) quarantined \(states.count == 1 ? "state" : "states"), newest first")
            }
        }

        private func showHierarchy(_ store: StateStore) throws {
            let archive = try store.hierarchyArchive(scene: scene, setAside: setAside)
            if output.json {
                Output.json(
                    kind: "hierarchy",
                    HierarchyPrinter.json(
                        archive: archive, scene: scene, setAside: setAside,
                        setAsideReason: HierarchyPrinter.setAsideReason(in: store, scene: scene)))
            } else {
                print(
                    HierarchyPrinter.text(
                        archive: archive, scene: scene, setAside: setAside,
                        otherScenes: HierarchyPrinter.savedScenes(in: store),
                        setAsideReason: HierarchyPrinter.setAsideReason(in: store, scene: scene)))
            }
        }

        /// One scene of `--scenes --json`.
        private static func json(_ scene: StateStore.Scene, holder: SceneHolder?) -> JSON {
            func date(_ value: Date?) -> JSON { value.map { .string(Format.iso8601($0)) } ?? .null }
            var claim = JSON.null
            if let holder {
                let pid: JSON = holder.processIdentifier.map { .int(Int($0)) } ?? .null
                claim = .object([("pid", pid), ("since", date(holder.since))])
            }
            let prefix: JSON = scene.pathPrefix.map { .string($0) } ?? .null
            let byteCount: JSON = scene.archiveByteCount.map { .int($0) } ?? .null
            return .object([
                ("scene", .string(scene.identifier)),
                ("path_prefix", prefix),
                ("created_at", date(scene.createdAt)),
                ("archive_byte_count", byteCount),
                ("archive_updated_at", date(scene.archiveUpdatedAt)),
                ("set_aside", .bool(scene.hasSetAsideArchive)),
                ("claim", claim),
            ])
        }

        /// The scenes the database knows and those a live process holds, each with its claim.
        private func showScenes(_ store: StateStore) throws {
            let known = try store.scenes()
            // Each known scene through its own claim file (a scene from before scenes had
            // identities shares the default scene's), then those held before their first archive.
            var holders: [String: SceneHolder] = [:]
            for scene in known { holders[scene.identifier] = try? store.sceneHolder(of: scene.identifier) }
            for holder in try store.sceneHolders() where !known.contains(where: { $0.identifier == holder.scene }) {
                holders[holder.scene] = holders[holder.scene] ?? holder
            }
            // A scene a process holds before its window's first archive is in no table yet.
            let unrecorded = holders.keys.filter { scene in !known.contains { $0.identifier == scene } }.sorted()
            let all = known + unrecorded.map { StateStore.Scene(identifier: $0) }
            if output.json {
                Output.json(
                    kind: "scenes", [("scenes", .array(all.map { Self.json($0, holder: holders[$0.identifier]) }))])
                return
            }
            guard !all.isEmpty else {
                print("No window scenes in \(database.path).")
                return
            }
            var table = Table(["SCENE", "SAVES UNDER", "ARCHIVE", "ARCHIVED (UTC)", "CLAIM"])
            for scene in all {
                var archive =
                    scene.archiveByteCount.map { Format.bytes($0) }
                    ?? (scene.createdAt == nil ? "not yet" : "none (closed)")
                if scene.hasSetAsideArchive { archive += ", one set aside" }
                let prefix = scene.pathPrefix.map { $0.isEmpty ? "(no prefix)" : $0 + "/" } ?? "-"
                let claim =
                    holders[scene.identifier].map { holder in
                        (holder.processIdentifier.map { "process \($0)" } ?? "a process")
                            + (holder.since.map { " since " + Format.table($0) } ?? "")
                    } ?? "unclaimed"
                table.append([
                    Table.visible(scene.identifier), Table.visible(prefix), archive,
                    scene.archiveUpdatedAt.map(Format.table) ?? "-", claim,
                ])
            }
            print(table.render())
            let claimed = all.filter { holders[$0.identifier] != nil }.count
            print(
                "\(all.count) \(all.count == 1 ? "scene" : "scenes"), \(claimed) claimed by a live process, in \(database.path)"
            )
        }
    }
}
