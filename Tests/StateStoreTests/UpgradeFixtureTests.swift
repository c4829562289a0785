import Foundation
import StateStore
import StateStoreCrashVFS
import StateStoreCrypto
import StateStoreSQLite
import Testing

/// The files each earlier on-disk format wrote (`Fixtures/formats/vN`, one a schema version,
/// written by the commit named in its manifest; see the README there), and the shapes their
/// writers saved, declared again as an app of today declares them.
enum UpgradeFixture {
    struct Address: Codable, Sendable, Equatable {
        var street: String
        var city: String
    }

    struct Profile: Codable, Sendable, Equatable {
        var name: String
        var address: Address
        var tags: [String]
        var joined: Date
        var rating: Double?
    }

    struct NoteState: Codable, Sendable, Equatable {
        var text = ""
        var edits = 0
    }

    /// Version 2 of the detail screen's state.
    struct DetailState: Codable, Sendable, Equatable {
        var title = ""
        var words = 0
    }

    /// Version 1 of the detail screen's state.
    struct DetailStateV1: Codable, Sendable, Equatable {
        var text: String
    }

    final class ListScreen: ViewController, StateRestoring {
        var restorableState = NoteState()
    }

    final class DetailScreen: ViewController, StateRestoring {
        var restorableState = DetailState()
        static var restorableStateVersion: Int { 2 }

        static func migrateRestorableState(from version: Int, data: Data) throws -> DetailState {
            let old = try JSONDecoder().decode(DetailStateV1.self, from: data)
            return DetailState(title: old.text, words: old.text.split(separator: " ").count)
        }
    }

    /// What `sqlite3` read from a fixture right after its writer ran (`manifest.json`).
    struct Manifest: Decodable {
        struct State: Decodable {
            var path: String
            var typeName: String
            var version: Int
            var encoding: String
            var keyId: String?
            var bytesHex: String
        }
        struct Archive: Decodable {
            var scene: String
            var setAside: Int
            var format: Int
            var bytesHex: String
        }
        struct Scene: Decodable {
            var identifier: String
            var pathPrefix: String
        }
        struct Quarantined: Decodable {
            var path: String
            var reason: String
            var typeName: String
            var version: Int
            var keyId: String?
            var bytesHex: String
        }
        var commit: String
        var userVersion: Int
        var states: [State]
        var archives: [Archive]
        var scenes: [Scene]
        var quarantine: [Quarantined]
        var pressureEvents: Int
    }

    /// `Fixtures/formats/vN`.
    static func folder(_ schema: Int) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/formats/v\(schema)").path
    }

    static func manifest(_ schema: Int) throws -> Manifest {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(
            Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: folder(schema) + "/manifest.json")))
    }

    /// Copies the fixture of `schema` into `folder` (the committed file is never opened where it
    /// is); returns the copy and, for a sealed fixture, its key file, made mode 0600 again.
    static func copy(_ schema: Int, into folder: String) throws -> (database: String, key: String?) {
        let database = folder + "/state.sqlite"
        try FileManager.default.copyItem(atPath: self.folder(schema) + "/state.sqlite", toPath: database)
        let key = self.folder(schema) + "/key"
        guard FileManager.default.fileExists(atPath: key) else { return (database, nil) }
        try FileManager.default.copyItem(atPath: key, toPath: folder + "/key")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder + "/key")
        return (database, folder + "/key")
    }

    static func bytes(hex: String) -> Data {
        var data = Data()
        var high: UInt8?
        for character in hex.utf8 {
            let digit = UInt8(character <= 57 ? character - 48 : (character | 0x20) - 87)
            if let value = high {
                data.append(value << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        return data
    }

    /// The scenes each writer showed: `main` alone before scenes had identities (schema 4).
    static func scenes(_ schema: Int) -> [String] { schema >= 4 ? ["main", "window2"] : ["main"] }

    /// The path prefix of a scene's controllers, and what its two screens held.
    static func screens(scene: String) -> (prefix: String, list: NoteState, detail: DetailState) {
        scene == "main"
            ? ("", NoteState(text: "groceries", edits: 3), DetailState(title: "Milk and eggs", words: 3))
            : (scene + "/", NoteState(text: "second window", edits: 1), DetailState(title: "Second detail", words: 2))
    }

    static let profile = Profile(
        name: "Ada", address: Address(street: "12 Analytical Row", city: "London"), tags: ["admin", "beta"],
        joined: Date(timeIntervalSince1970: 1_767_225_600.25), rating: 4.5)
    static let sealedProfile = Profile(
        name: "Grace", address: Address(street: "1 Compiler Lane", city: "Arlington"), tags: ["sealed"],
        joined: Date(timeIntervalSince1970: 1_780_000_000.5), rating: nil)
}

@Suite("Upgrade fixtures: every earlier on-disk format opens and keeps everything", .hangGuard(minutes: 10))
struct UpgradeFixtureTests {
    /// The current store opens (and migrates) a copy of the fixture each earlier format wrote;
    /// every state, archive, quarantined row and pressure event is still there, the states
    /// decode, the hierarchy comes back, and `statectl` finds nothing wrong but the quarantine.
    @MainActor
    @Test(arguments: 1...5)
    func aFileAnEarlierFormatWroteOpensAndKeepsEverything(schema: Int) throws {
        typealias F = UpgradeFixture
        let manifest = try F.manifest(schema)
        #expect(manifest.userVersion == schema)
        let folder = TemporaryFolder("upgrade-v\(schema)")
        let (database, key) = try F.copy(schema, into: folder.path)
        let keyring = try key.map { StateKeyring(try StateKey.file($0)) }
        do {
            let store = try StateStore(path: database, options: .init(sealer: keyring))
            #expect(store.schemaVersion == StateStore.latestSchemaVersion)
            #expect(try rawRows(database, "PRAGMA user_version") == [["\(StateStore.latestSchemaVersion)"]])

            // Every state, byte for byte (sealed ones as stored), with its type name and version.
            let states = try store.states()
            #expect(states.map(\.path.rawValue) == manifest.states.map(\.path))
            for expected in manifest.states {
                let row = try #require(states.first { $0.path.rawValue == expected.path }, "\(expected.path)")
                #expect(row.bytes == F.bytes(hex: expected.bytesHex), "\(expected.path)")
                #expect(row.typeName == expected.typeName && row.version == expected.version, "\(expected.path)")
                #expect(row.encoding.rawValue == expected.encoding && row.keyID == expected.keyId, "\(expected.path)")
                #expect(row.checksumIsValid, "\(expected.path)")
            }

            // The states decode as the writer's shapes; the version-1 row migrates to version 2.
            #expect(try store.restore(String.self, for: "settings/title", version: 1) == "Inbox — ünïcode ✓")
            #expect(try store.restore([String].self, for: "settings/tags", version: 1) == ["work", "home", "ünïcode"])
            #expect(
                try store.restore([String: Int].self, for: "settings/counts", version: 2) == ["inbox": 42, "sent": 7])
            #expect(try store.restore(F.Profile.self, for: "profile/user", version: 3) == F.profile)
            let legacy = try #require(try store.state(at: "detail/legacy"))
            #expect(legacy.version == 1)
            #expect(
                try F.DetailScreen.migrateRestorableState(from: legacy.version, data: legacy.bytes)
                    == F.DetailState(title: "three little words", words: 3))
            #expect(try store.state(at: "blob/raw")?.bytes == Data([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]))
            for scene in F.scenes(schema) {
                let screens = F.screens(scene: scene)
                let list = try RestorationPath(validating: screens.prefix + "nav/list")
                let detail = try RestorationPath(validating: screens.prefix + "nav/detail")
                #expect(try store.restore(F.NoteState.self, for: list, version: 1) == screens.list)
                #expect(try store.restore(F.DetailState.self, for: detail, version: 2) == screens.detail)
            }
            if keyring != nil {
                #expect(try store.restore(F.Profile.self, for: "vault/profile", version: 1) == F.sealedProfile)
                #expect(try store.restore(String.self, for: "vault/note", version: 2) == "the sealed note")
            }

            // The archives as written, in the format of their time; the scenes and their prefixes.
            #expect(manifest.archives.map(\.scene) == F.scenes(schema))
            for archive in manifest.archives {
                let data = try #require(
                    try store.hierarchyArchive(scene: archive.scene, setAside: archive.setAside != 0),
                    "\(archive.scene)")
                #expect(data == F.bytes(hex: archive.bytesHex), "\(archive.scene)")
                #expect(archive.format == (schema >= 4 ? 2 : 1))
                #expect(try HierarchyArchive(decoding: data).format == archive.format)
            }
            for scene in F.scenes(schema) {
                #expect(try store.scenePathPrefix(scene: scene) == (scene == "main" ? "" : scene), "\(scene)")
            }
            #expect(manifest.scenes.allSatisfy { (try? store.scenePathPrefix(scene: $0.identifier)) == $0.pathPrefix })

            // The quarantine and the pressure events.
            func sorted(_ rows: [(String, String, String, Int, String?, String)]) -> [String] {
                rows.map { "\($0)" }.sorted()
            }
            #expect(
                sorted(
                    try store.quarantinedStates().map {
                        ($0.path.rawValue, $0.reason, $0.typeName, $0.version, $0.keyID, $0.bytes.base64EncodedString())
                    })
                    == sorted(
                        manifest.quarantine.map {
                            (
                                $0.path, $0.reason, $0.typeName, $0.version, $0.keyId,
                                F.bytes(hex: $0.bytesHex).base64EncodedString()
                            )
                        }))
            #expect(!manifest.quarantine.isEmpty && manifest.pressureEvents >= 1)
            #expect(try store.pressureEvents(limit: 1000).count == manifest.pressureEvents)
            let health = try store.check()
            #expect(health.integrity == ["ok"] && health.checksumMismatches.isEmpty && health.unopenableStates.isEmpty)
            #expect(health.headerSchemaVersion == StateStore.latestSchemaVersion)
            #expect(health.stateCount == manifest.states.count)
            #expect(health.quarantineCount == manifest.quarantine.count)
            #expect(health.pressureEventCount == manifest.pressureEvents)

            // The hierarchy comes back: in each scene the navigation stack the writer left.
            let storyboard = Storyboard()
            storyboard.register("nav") { NavigationController() }
            storyboard.register("list") { F.ListScreen() }
            storyboard.register("detail") { F.DetailScreen() }
            let application = Application(store: store, storyboard: storyboard)
            for scene in F.scenes(schema) {
                let screens = F.screens(scene: scene)
                let window = Window(
                    size: Size(width: 400, height: 800), orientation: .portrait, sceneIdentifier: scene,
                    application: application)
                #expect(try application.restoreHierarchy(in: window), "scene \(scene)")
                let navigation = try #require(window.rootViewController as? NavigationController, "scene \(scene)")
                #expect(
                    navigation.viewControllers.map(\.restorationIdentifier) == ["list", "detail"], "scene \(scene)")
                #expect((navigation.topViewController as? F.DetailScreen)?.restorableState == screens.detail)
                _ = navigation.popViewController(animated: false)
                #expect((navigation.topViewController as? F.ListScreen)?.restorableState == screens.list)
            }
            #expect(application.restorationCoordinator?.recentErrors == [])
            application.terminate()
            #expect(try store.quarantinedStates().count == manifest.quarantine.count)
        }

        // statectl: healthy but for the quarantine the fixture holds on purpose (a problem by
        // `check`'s definition, exit 1), and healthy (exit 0) once that is pruned.
        let keyArguments = key.map { ["--key-file", $0] } ?? []
        let check = try CLI.run(["check", "--db", database, "--json"] + keyArguments)
        #expect(check.status == 1, "\(check)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any], "\(check)")
        let problems = report["problems"] as? [String] ?? []
        #expect(problems.count == 1 && problems[0].hasPrefix("\(manifest.quarantine.count) quarantined"), "\(check)")
        #expect(report["integrity"] as? [String] == ["ok"], "\(check)")
        #expect(report["schema_version"] as? Int == StateStore.latestSchemaVersion, "\(check)")
        #expect(report["header_schema_version"] as? Int == StateStore.latestSchemaVersion, "\(check)")
        let prune = try CLI.run(["prune", "--db", database, "--quarantine", "--older-than", "0s"])
        #expect(prune.status == 0, "\(prune)")
        let healthy = try CLI.run(["check", "--db", database] + keyArguments)
        #expect(healthy.status == 0, "\(healthy)")
    }

    /// The migration of each earlier format's file, cut by a simulated power loss at each of its
    /// writes, truncates and syncs in turn (and once after it), several times over with
    /// different seeds: the file left holds the old schema or the new one, never something
    /// between, passes the integrity check and keeps every state; the next open migrates it and
    /// keeps them all.
    ///
    /// The crash VFS keeps one session for the whole process, and the store opens through the
    /// default VFS, so the cuts run in a process of their own: this test binary, started again
    /// with this test alone (`STATESTORE_UPGRADE_CUT_GUEST` says which fixture and where to
    /// report), so no other test's files or sessions ever meet the VFS.
    @Test(arguments: 1...4)
    func aMigrationCutMidwayLeavesTheOldOrTheNewVersion(schema: Int) throws {
        if let guest = ProcessInfo.processInfo.environment[MigrationCut.guestVariable] {
            let fields = guest.split(separator: "\t", maxSplits: 1).map(String.init)
            // In the guest, only the case it was started for runs.
            guard fields.count == 2, Int(fields[0]) == schema else { return }
            MigrationCut.run(schema: schema, results: fields[1])
            return
        }
        let folder = TemporaryFolder("upgrade-cut-v\(schema)")
        let results = folder.file("results"), output = folder.file("output")
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let process = Process()
        let runner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        process.executableURL = URL(fileURLWithPath: runner)
        process.arguments = [
            "--testing-library", "swift-testing", "--filter", "UpgradeFixtureTests/aMigrationCutMidway",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment[MigrationCut.guestVariable] = "\(schema)\t\(results)"
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = process.standardOutput
        try process.run()
        process.waitUntilExit()
        let log = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let text = (try? String(contentsOfFile: results, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "the guest failed:\n\(text)\n\(log.suffix(4000))")
        let lines = text.split(separator: "\n").map(String.init)
        let violations = lines.filter { $0.hasPrefix("violation") }
        #expect(violations.isEmpty, "seed \(MigrationCut.seed):\n\(violations.prefix(20).joined(separator: "\n"))")
        let summary = try #require(lines.first { $0.hasPrefix("summary") }, "no summary:\n\(text)\n\(log.suffix(4000))")
        print("upgrade cut v\(schema): \(summary)")
        var figures: [String: Int] = [:]
        for field in summary.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2 { figures[String(parts[0])] = Int(parts[1]) }
        }
        let operations = figures["operations"] ?? 0
        // Every write, truncate and sync of the open was a cut point, and so was the end.
        let points = (operations + 1) * MigrationCut.rounds
        #expect(operations > 0 && figures["points"] == points, "\(summary)")
        #expect(figures["cuts"] == points, "\(summary)")
        // Never a schema between the old one and the new one.
        #expect(figures["between"] == 0, "\(summary)")
        // The cuts fell on both sides of the migration's commit.
        #expect((figures["old"] ?? 0) > 0 && (figures["new"] ?? 0) > 0, "\(summary)")
    }
}

/// The guest of ``UpgradeFixtureTests/aMigrationCutMidwayLeavesTheOldOrTheNewVersion(schema:)``:
/// as `statestore-worker power-cut` does, a run without a cut counts the operations of opening
/// the fixture with the current store (migrating it) and closing it; then each operation 1…N
/// in turn is the one the power is cut at, and a last cut comes once the store is closed, all
/// of it ``rounds`` times (point p, counted from 1, uses the seed `seed + p` for what its cut
/// keeps, drops and tears). After each cut the files are read without the VFS.
enum MigrationCut {
    static let guestVariable = "STATESTORE_UPGRADE_CUT_GUEST"
    /// Point p (counted from 1) cuts with the seed `seed + p`.
    static let seed: UInt64 = 20_261_121
    /// How many times each operation is the one cut at, with a different seed each time.
    static let rounds = 4

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// The schema, tables, indexes and recorded migrations of a file, as one text to compare.
    static func shape(_ database: String) throws -> String {
        try rows(
            database,
            """
            SELECT 'user_version', user_version FROM pragma_user_version
            UNION ALL SELECT 'application_id', application_id FROM pragma_application_id
            UNION ALL SELECT 'migrations', group_concat(version) FROM (SELECT version FROM schema_migrations ORDER BY version)
            UNION ALL SELECT type || ' ' || name, sql FROM (SELECT * FROM sqlite_schema ORDER BY type, name)
            """
        ).map { $0.joined(separator: "=") }.joined(separator: "\n")
    }

    /// The rows of `sql`, as text, through a read-write connection of SQLite's own (no VFS of
    /// ours), which recovers the WAL as the first open after a reboot does.
    static func rows(_ database: String, _ sql: String) throws -> [[String]] {
        beforeRawSQLite()
        var handle: OpaquePointer?
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, "unix") == SQLITE_OK,
            sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK
        else { throw Failure(description: "\(database): \(String(cString: sqlite3_errmsg(handle)))") }
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map {
                    sqlite3_column_text(statement, $0).map { String(cString: $0) } ?? "NULL"
                })
        }
        return rows
    }

    /// The manifest's states, one line each: path, type name, version, encoding, bytes in hex.
    static func states(_ manifest: UpgradeFixture.Manifest) -> [String] {
        manifest.states.map { "\($0.path) \($0.typeName) \($0.version) \($0.encoding) \($0.bytesHex)" }
    }

    /// Runs every point for `schema`, writing "violation …" lines and one "summary …" line to `results`.
    static func run(schema: Int, results: String) {
        var lines: [String] = []
        defer { try? (lines.joined(separator: "\n") + "\n").write(toFile: results, atomically: true, encoding: .utf8) }
        beforeRawSQLite()
        guard statestore_crashvfs_register(1) == SQLITE_OK else {
            lines.append("violation: the crash VFS could not be registered")
            return
        }
        let base = TemporaryFolder("upgrade-cut-guest-v\(schema)")
        do {
            let manifest = try UpgradeFixture.manifest(schema)
            try FileManager.default.createDirectory(atPath: base.path + "/original", withIntermediateDirectories: true)
            let old = try shape(try UpgradeFixture.copy(schema, into: base.path + "/original").database)
            // A run without a cut: how many operations, and the shape of the migrated file.
            let dry = try point(schema: schema, manifest: manifest, folder: base.path + "/dry", crashAt: 0, seed: seed)
            let new = dry.shape
            guard dry.version == StateStore.latestSchemaVersion, dry.operations > 0 else {
                lines.append(
                    "violation: the run without a cut left version \(dry.version), \(dry.operations) operations")
                return
            }
            var cuts = 0, oldCount = 0, newCount = 0, between = 0
            // Each operation, and the end, cut in `rounds` rounds, each with seeds of its own.
            let points = Array(repeating: Array(1...dry.operations) + [-1], count: rounds).flatMap { $0 }
            for (index, crashAt) in points.enumerated() {
                let pointSeed = seed &+ UInt64(index + 1)
                let folder = base.path + "/point-\(index + 1)"
                do {
                    let cut = try point(
                        schema: schema, manifest: manifest, folder: folder, crashAt: crashAt, seed: pointSeed)
                    if cut.crashed { cuts += 1 }
                    if cut.shape == old && cut.version == schema {
                        oldCount += 1
                    } else if cut.shape == new && cut.version == StateStore.latestSchemaVersion {
                        newCount += 1
                    } else {
                        between += 1
                        let records = cut.shape.split(separator: "\n").prefix(3).joined(separator: ", ")
                        throw Failure(
                            description:
                                "left at user_version \(cut.version) (\(records)), neither schema \(schema) as written nor the migrated file; integrity, states and the next open passed"
                        )
                    }
                    try? FileManager.default.removeItem(atPath: folder)
                } catch {
                    let message = "\(error)".replacingOccurrences(of: "\n", with: " | ")
                    lines.append(
                        "violation v\(schema) point=\(index + 1) crash-at=\(crashAt) seed=\(pointSeed): \(message)")
                }
            }
            lines.append(
                "summary schema=\(schema) operations=\(dry.operations) points=\(points.count) cuts=\(cuts) old=\(oldCount) new=\(newCount) between=\(between)"
            )
        } catch {
            lines.append("violation v\(schema): \(error)")
        }
    }

    /// One point: the fixture copied into `folder`, opened and closed by the current store under
    /// the crash VFS with the power cut at operation `crashAt` (0: never; -1: once closed), then
    /// read without it: integrity, shape, the states; then opened again by the store (the next
    /// launch), which must migrate it and keep every state.
    static func point(
        schema: Int, manifest: UpgradeFixture.Manifest, folder: String, crashAt: Int, seed: UInt64
    ) throws -> (operations: Int, crashed: Bool, version: Int, shape: String) {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database = try UpgradeFixture.copy(schema, into: folder).database
        statestore_crashvfs_begin(folder, seed, Int64(max(crashAt, 0)), STATESTORE_CRASH_RANDOM)
        var unexpected: String?
        do {
            let store = try StateStore(path: database, options: .init(backgroundCheck: .off))
            if store.schemaVersion != StateStore.latestSchemaVersion, statestore_crashvfs_stats().crashed == 0 {
                unexpected = "opened at version \(store.schemaVersion)"
            }
        } catch {
            if statestore_crashvfs_stats().crashed == 0 { unexpected = "\(error)" }
        }
        if crashAt != 0 { statestore_crashvfs_crash_now() }
        let stats = statestore_crashvfs_stats()
        let stillOpen = statestore_crashvfs_open_files()
        statestore_crashvfs_end()
        guard stillOpen == 0 else { throw Failure(description: "the store left \(stillOpen) file(s) open") }
        if let unexpected { throw Failure(description: "failed without a cut: \(unexpected)") }

        // What survived, read by SQLite alone in a copy (the -shm stays behind, as a reboot
        // makes it stale).
        let look = folder + "/look"
        try FileManager.default.createDirectory(atPath: look, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-journal"] where FileManager.default.fileExists(atPath: database + suffix) {
            try FileManager.default.copyItem(atPath: database + suffix, toPath: look + "/state.sqlite" + suffix)
        }
        let survivor = look + "/state.sqlite"
        let integrity = try rows(survivor, "PRAGMA integrity_check").map { $0[0] }
        guard integrity == ["ok"] else { throw Failure(description: "integrity_check: \(integrity)") }
        let shape = try shape(survivor)
        let version = Int(try rows(survivor, "PRAGMA user_version")[0][0]) ?? -1
        let found = try rows(
            survivor, "SELECT path, type_name, version, encoding, hex(bytes) FROM states ORDER BY path"
        ).map { $0.joined(separator: " ") }
        guard found == states(manifest) else {
            throw Failure(description: "at version \(version) the states are\n\(found)\nnot\n\(states(manifest))")
        }
        let kept = try rows(
            survivor,
            "SELECT (SELECT count(*) FROM quarantine), (SELECT count(*) FROM pressure_events), (SELECT count(*) FROM hierarchy)"
        )
        guard kept == [["\(manifest.quarantine.count)", "\(manifest.pressureEvents)", "\(manifest.archives.count)"]]
        else {
            throw Failure(description: "quarantine, pressure events and archives: \(kept)")
        }

        // The next launch, on the files the cut left.
        let store = try StateStore(path: database, options: .init(backgroundCheck: .off))
        guard store.schemaVersion == StateStore.latestSchemaVersion else {
            throw Failure(description: "the next open left version \(store.schemaVersion)")
        }
        let reopened = try store.states().map {
            "\($0.path) \($0.typeName) \($0.version) \($0.encoding.rawValue) \($0.bytes.map { String(format: "%02X", $0) }.joined())"
        }
        guard reopened == states(manifest) else {
            throw Failure(description: "after the next open the states are\n\(reopened)")
        }
        return (Int(stats.operations), stats.crashed != 0, version, shape)
    }
}
