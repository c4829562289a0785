import Foundation
import StateStoreCrypto
import Testing

@testable import StateStore

/// Key material for tests: 32 fixed bytes per seed.
func testKey(_ seed: UInt8) throws -> StateKey {
    try StateKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: Int($0) &* 31 &+ Int(seed)) })
}

@Suite("Sealed states: encryption at rest, and nothing lost to a wrong key")
struct SealedStateTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    func store(_ key: StateKey?, previous: [StateKey] = []) throws -> StateStore {
        try StateStore(path: database, options: .init(sealer: key.map { StateKeyring($0, previous: previous) }))
    }

    /// The `states` table as `sqlite3` prints it, bytes in hex: what must not change.
    func rows() throws -> String {
        try CLI.tool(
            "sqlite3",
            [
                database,
                "SELECT path, type_name, version, generation, checksum, key_id, hex(bytes) FROM states ORDER BY path",
            ])
    }

    let draft = Draft(to: ["ada@example.com"], subject: "the secret plan", body: "meet at noon")

    @Test func aSealedStateRoundTripsAndIsNotInTheFile() throws {
        let key = try testKey(1)
        do {
            let sealed = try store(key)
            let result = try sealed.save(draft, for: "mail/draft")
            #expect(result.wrote)
            #expect(try sealed.restore(Draft.self, for: "mail/draft") == draft)
            let row = try #require(try sealed.state(at: "mail/draft"))
            #expect(row.keyID == key.id)
            #expect(row.checksumIsValid)
            #expect(row.bytes.count == (try StateCoding.encode(draft, for: "mail/draft")).count + 28)
            #expect(try sealed.entries().first?.keyID == key.id)
            // Saved again unchanged: the synthetic nonce makes the same bytes, so nothing is written.
            #expect(try sealed.save(draft, for: "mail/draft") == StateStore.SaveResult(generation: 1, wrote: false))
        }
        // Closed: the WAL is checkpointed into the file, which is read whole.
        let file = try Data(contentsOf: URL(fileURLWithPath: database))
        #expect(file.range(of: Data("the secret plan".utf8)) == nil)
        #expect(file.range(of: Data("mail/draft".utf8)) != nil, "paths stay clear")
        #expect(try CLI.tool("sqlite3", [database, "SELECT key_id FROM states"]) == key.id + "\n")
        #expect(key.id.count == 16 && key.id.allSatisfy(\.isHexDigit))
    }

    @Test func aWrongKeyOrNoKeyLosesNothing() throws {
        let right = try testKey(1), wrong = try testKey(2)
        #expect(right.id != wrong.id)
        try store(right).save(draft, for: "mail/draft")
        let before = try rows()
        for key in [wrong, nil] {
            let other = try store(key)
            #expect(throws: StateStoreError.keyMismatch(path: "mail/draft", found: right.id, configured: key?.id)) {
                try other.restore(Draft.self, for: "mail/draft")
            }
            // A save over it is refused, and an import of a clear state over it: the database's
            // record that it is sealed with a key this store was not given refuses every write first.
            let refusal = StateStoreError.keyRequired(file: database, keyID: right.id)
            #expect(throws: refusal) {
                try other.save(Draft(to: [], subject: "default", body: ""), for: "mail/draft")
            }
            let clear = StoredState(
                path: "mail/draft", typeName: "Draft", version: 1, generation: 1, encoding: .json,
                updatedAt: Date(), bytes: Data("{}".utf8))
            #expect(throws: refusal) {
                try other.importStates(StateExport(states: [clear]))
            }
            // An import with `replace` never removes what it cannot read.
            let elsewhere = StoredState(
                path: "other", typeName: "Draft", version: 1, generation: 1, encoding: .json,
                updatedAt: Date(), bytes: Data("{}".utf8))
            if key != nil {
                #expect(throws: StateStoreError.keyMismatch(path: "mail/draft", found: right.id, configured: key?.id)) {
                    try other.importStates(StateExport(states: [elsewhere]), replace: true)
                }
            }
            // Nor does a controller renamed by a newer build move it.
            #expect(throws: StateStoreError.keyMismatch(path: "mail/draft", found: right.id, configured: key?.id)) {
                try other.write { (transaction) throws(StateStoreError) in
                    try transaction.moveState(from: "mail/draft", to: "mail/renamed")
                }
            }
            #expect(try other.quarantinedStates().isEmpty)
        }
        // Retention at open keeps rows it cannot open.
        _ = try StateStore(path: database, options: .init(retention: .zero, sealer: StateKeyring(wrong)))
        #expect(try rows() == before)
        #expect(try store(right).restore(Draft.self, for: "mail/draft") == draft)
    }

    @Test func aStoreGivenAnotherKeySealsNothingTheRightKeyCannotOpen() throws {
        let right = try testKey(1), wrong = try testKey(2), next = try testKey(3)
        try store(right).save(draft, for: "mail/draft")
        let before = try rows()
        // One launch with the wrong key: a path it never read is not sealed with its key either.
        let other = try store(wrong)
        #expect(other.sealedWith == right.id)
        #expect(throws: StateStoreError.keyRequired(file: database, keyID: right.id)) {
            try other.save(draft, for: "mail/settings")
        }
        #expect(throws: StateStoreError.keyRequired(file: database, keyID: right.id)) {
            try other.importStates(
                StateExport(states: [
                    StoredState(
                        path: "mail/settings", typeName: "Draft", version: 1, generation: 1, encoding: .json,
                        updatedAt: Date(), bytes: Data("{}".utf8))
                ]))
        }
        #expect(try rows() == before)
        // Started again with the right key, every path saves.
        try store(right).save(draft, for: "mail/settings")
        #expect(try store(right).restore(Draft.self, for: "mail/settings") == draft)
        // A keyring that holds the recorded key as a previous one writes, and records its new key.
        let rotating = try store(next, previous: [right])
        #expect(rotating.sealedWith == next.id)
        try rotating.save(draft, for: "mail/outbox")
        #expect(try rotating.state(at: "mail/outbox")?.keyID == next.id)
    }

    @Test func aKeyRecordedByAnotherConnectionCountsFromTheNextWrite() throws {
        let key = try testKey(1)
        let open = try store(nil)
        try open.save(draft, for: "mail/draft")
        // Sealed by another connection (statectl rekey, in another process) while this one is open.
        try StateStore.rekey(at: database, from: nil, to: StateKeyring(key))
        #expect(throws: StateStoreError.keyRequired(file: database, keyID: key.id)) {
            try open.save(Draft(to: [], subject: "the secret plan B", body: ""), for: "mail/new")
        }
        #expect(open.sealedWith == key.id)
        #expect(try open.statesByKey() == [key.id: 1])
    }

    @Test func aRefusedRekeyLeavesTheDatabaseClear() throws {
        let key = try testKey(1)
        try store(nil).save(draft, for: "mail/draft")
        let before = try rows()
        let size = try #require(try store(nil).state(at: "mail/draft")).bytes.count
        // Sealed, the state would be 28 bytes over the applications' limit: the rekey refuses.
        #expect(throws: StateStoreError.stateTooLarge(path: "mail/draft", byteCount: size + 28, limit: size)) {
            try StateStore.rekey(at: database, from: nil, to: StateKeyring(key), options: .init(maximumStateSize: size))
        }
        #expect(try rows() == before)
        #expect(
            try CLI.tool("sqlite3", [database, "SELECT count(*) FROM metadata WHERE key = 'statestore.sealed_with'"])
                == "0\n")
        let clear = try store(nil)
        #expect(clear.sealedWith == nil)
        try clear.save(draft, for: "mail/other")
    }

    @Test func aSealedBackupRestoredIntoANewDatabaseKeepsItSealed() throws {
        let key = try testKey(1)
        let sealed = try store(key)
        try sealed.save(draft, for: "mail/draft")
        try sealed.save(draft, for: "mail/outbox")
        var states = try StateExport(store: sealed).states
        let clear = StoredState(
            path: "mail/clear", typeName: "Draft", version: 1, generation: 1, encoding: .json,
            updatedAt: Date(), bytes: Data(#"{"subject":"half-way through a sealing"}"#.utf8))
        // An export taken half-way through a sealing, clear rows first or last: restored whole.
        for order in [[clear] + states, states + [clear]] {
            let copy = TemporaryFolder()
            let target = try StateStore(path: copy.file("copy.sqlite"))
            #expect(try target.importStates(StateExport(states: order)).created == 3)
            #expect(target.sealedWith == key.id)
            #expect(try target.statesByKey() == [nil: 1, key.id: 2])
            // From then on, a store without the key writes nothing clear beside the sealed states.
            #expect(throws: StateStoreError.keyRequired(file: copy.file("copy.sqlite"), keyID: key.id)) {
                try target.save(draft, for: "mail/secret")
            }
            let reopened = try StateStore(path: copy.file("copy.sqlite"))
            #expect(reopened.sealedWith == key.id)
        }
        // An import that fails leaves no record behind.
        var damaged = clear
        damaged.checksum ^= 1
        states.append(damaged)
        let copy = TemporaryFolder()
        let target = try StateStore(path: copy.file("copy.sqlite"))
        #expect(throws: StateStoreError.self) { try target.importStates(StateExport(states: states)) }
        #expect(target.sealedWith == nil)
        try target.save(draft, for: "mail/clear")
    }

    @Test func theErrorNamesTheKeysAndNeverTheKey() throws {
        let right = try testKey(1), wrong = try testKey(2)
        let error = StateStoreError.keyMismatch(path: "mail/draft", found: right.id, configured: wrong.id)
        #expect(error.description.contains(right.id) && error.description.contains(wrong.id))
        #expect(!"\(right)".contains("sealing") && "\(right)".contains(right.id))
        #expect(
            StateStoreError.keyMismatch(path: "a", found: right.id, configured: nil).description.contains(
                "was given no key"))
    }

    @Test func aSealedValueMovedToAnotherRowOrTypeDoesNotOpen() throws {
        let key = try testKey(1)
        let sealed = try store(key)
        try sealed.save(draft, for: "mail/draft")
        try sealed.save(Draft(to: [], subject: "other", body: ""), for: "mail/other")
        // Another tool copies one row's sealed bytes over the other's, checksum and all.
        _ = try CLI.tool(
            "sqlite3",
            [
                database,
                "UPDATE states SET bytes = (SELECT bytes FROM states WHERE path = 'mail/draft'), checksum = (SELECT checksum FROM states WHERE path = 'mail/draft') WHERE path = 'mail/other'",
            ])
        #expect(throws: StateStoreError.sealedStateUnopenable(path: "mail/other", keyID: key.id)) {
            try sealed.restore(Draft.self, for: "mail/other")
        }
        // The same bytes read as another version do not open either.
        _ = try CLI.tool("sqlite3", [database, "UPDATE states SET version = 2 WHERE path = 'mail/draft'"])
        #expect(throws: StateStoreError.sealedStateUnopenable(path: "mail/draft", keyID: key.id)) {
            try sealed.restore(Draft.self, for: "mail/draft")
        }
    }

    @Test func aClearDatabaseKeepsWorkingAndIsSealedOnTheNextSave() throws {
        try store(nil).save(draft, for: "mail/draft")
        let key = try testKey(1)
        let sealed = try store(key)
        #expect(try sealed.restore(Draft.self, for: "mail/draft") == draft)
        #expect(try sealed.state(at: "mail/draft")?.keyID == nil)
        try sealed.save(draft, for: "mail/other")
        let clear = try store(nil)
        #expect(sealed.isSealed && !clear.isSealed)
        #expect(try sealed.statesByKey() == [nil: 1, key.id: 1])
        let result = try sealed.save(draft, for: "mail/draft")
        #expect(result.wrote, "the same value, now sealed, is a change")
        #expect(try sealed.state(at: "mail/draft")?.keyID == key.id)
        #expect(try sealed.statesByKey() == [key.id: 2])
    }

    @Test func anExportIsSealedUnlessAskedAndImportsAsItWas() throws {
        let key = try testKey(1)
        let sealed = try store(key)
        try sealed.save(draft, for: "mail/draft")
        let document = try StateExport(store: sealed).encoded()
        let text = String(decoding: document, as: UTF8.self)
        #expect(text.contains("\"key_id\": \"\(key.id)\""))
        #expect(!text.contains("secret plan"))
        let clear = String(decoding: try StateExport(store: sealed, unsealed: true).encoded(), as: UTF8.self)
        #expect(clear.contains("the secret plan") && !clear.contains("key_id"))

        // The sealed document imports into an empty store without a key, as it was, and opens with the key.
        let copy = TemporaryFolder()
        let target = try StateStore(path: copy.file("copy.sqlite"))
        try target.importStates(try StateExport(decoding: document))
        #expect(try target.state(at: "mail/draft")?.keyID == key.id)
        let reopened = try StateStore(path: copy.file("copy.sqlite"), options: .init(sealer: StateKeyring(key)))
        #expect(try reopened.restore(Draft.self, for: "mail/draft") == draft)
        // The clear document imports sealed into a store that seals.
        let other = try StateStore(path: copy.file("other.sqlite"), options: .init(sealer: StateKeyring(key)))
        try other.importStates(try StateExport(decoding: Data(clear.utf8)))
        #expect(try other.state(at: "mail/draft")?.keyID == key.id)
        #expect(try other.restore(Draft.self, for: "mail/draft") == draft)
    }

    @Test func aStoreWithoutTheKeyWritesNothingClearIntoASealedDatabase() throws {
        let key = try testKey(1)
        try store(key).save(draft, for: "mail/draft")
        let keyless = try store(nil)
        #expect(keyless.sealedWith == key.id)
        #expect(throws: StateStoreError.keyRequired(file: database, keyID: key.id)) {
            try keyless.save(Draft(to: [], subject: "the secret plan B", body: ""), for: "mail/new")
        }
        let clear = StoredState(
            path: "mail/new", typeName: "Draft", version: 1, generation: 1, encoding: .json,
            updatedAt: Date(), bytes: Data(#"{"subject":"the secret plan B"}"#.utf8))
        #expect(throws: StateStoreError.keyRequired(file: database, keyID: key.id)) {
            try keyless.write { (transaction) throws(StateStoreError) in try transaction.insert(verbatim: clear) }
        }
        // A store that seals seals what is inserted verbatim too.
        let sealed = try store(key)
        try sealed.write { (transaction) throws(StateStoreError) in try transaction.insert(verbatim: clear) }
        #expect(try sealed.state(at: "mail/new")?.keyID == key.id)
        // Unsealed, the database is clear again and takes clear writes.
        try StateStore.rekey(at: database, from: StateKeyring(key), to: nil)
        let reopened = try store(nil)
        #expect(reopened.sealedWith == nil)
        try reopened.save(draft, for: "mail/clear")
        #expect(try reopened.statesByKey() == [nil: 3])
    }

    @Test func aRenamedControllerKeepsItsSealedState() throws {
        let key = try testKey(1)
        let sealed = try store(key)
        try sealed.save(draft, for: "mail/draft")
        #expect(
            try sealed.write { (transaction) throws(StateStoreError) in
                try transaction.moveState(from: "mail/draft", to: "mail/compose")
            })
        #expect(try sealed.restore(Draft.self, for: "mail/compose") == draft)
        #expect(try sealed.state(at: "mail/compose")?.keyID == key.id)
        #expect(try sealed.quarantinedStates().isEmpty)
    }

    @Test func aRekeyThatWouldPassTheSizeLimitChangesNothing() throws {
        let options = StateStore.Options(maximumStateSize: 200)
        let text = String(repeating: "x", count: 180)
        try StateStore(path: database, options: options).save(text, for: "big")
        let before = try rows()
        #expect(throws: StateStoreError.stateTooLarge(path: "big", byteCount: 182 + 28, limit: 200)) {
            try StateStore.rekey(at: database, from: nil, to: StateKeyring(try testKey(1)), options: options)
        }
        #expect(try rows() == before)
    }

    @Test func aSealerWithAnInvalidKeyIDOrAVersionOutOfRangeIsRefused() throws {
        struct Commas: StateSealer {
            var keyID: String { "a,b" }
            var openableKeyIDs: [String] { ["a,b"] }
            func seal(_ plaintext: Data, identity: SealedRowIdentity) throws -> Data { plaintext }
            func open(_ sealed: Data, keyID: String, identity: SealedRowIdentity) throws -> Data { sealed }
        }
        #expect(throws: StateStoreError.invalidKeyID("a,b")) {
            try StateStore(path: database, options: .init(sealer: Commas()))
        }
        let sealed = try store(try testKey(1))
        #expect(throws: StateStoreError.self) {
            try sealed.save(encoded: Data("{}".utf8), encoding: .json, typeName: "T", version: (1 << 32) + 1, for: "v")
        }
    }

    @Test func aRotationReadsThePreviousKeyAndWritesTheNewOne() throws {
        let old = try testKey(1), new = try testKey(2)
        try store(old).save(draft, for: "mail/draft")
        let rotating = try store(new, previous: [old])
        #expect(try rotating.restore(Draft.self, for: "mail/draft") == draft)
        try rotating.save(draft, for: "mail/draft")
        #expect(try rotating.state(at: "mail/draft")?.keyID == new.id)
    }
}

@Suite("Keys from files and systemd credentials")
struct StateKeySourceTests {
    let folder = TemporaryFolder()

    func write(_ bytes: [UInt8], mode: mode_t, to name: String) -> String {
        let path = folder.file(name)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        chmod(path, mode)
        return path
    }

    let material = Array("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n".utf8)

    @Test func aKeyFileOfTheUsersOwnIsRead() throws {
        let path = write(material, mode: 0o600, to: "key")
        let key = try StateKey.file(path)
        // One trailing newline is not part of the key.
        #expect(key.id == (try StateKey(bytes: material.dropLast())).id)
        #expect(key.source == "key file \(path)")
        #expect(try StateKey.file(write(material, mode: 0o400, to: "key2")).id == key.id)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o602] as [mode_t])
    func aKeyFileOthersCanReadIsRefused(mode: mode_t) throws {
        let path = write(material, mode: mode, to: "key")
        #expect(throws: StateKeyError.readableByOthers(path: path, mode: UInt32(mode))) { try StateKey.file(path) }
        #expect(StateKeyError.readableByOthers(path: path, mode: UInt32(mode)).description.contains("chmod 600"))
    }

    @Test func aBinaryKeyIsTakenWholeAndATextKeyLosesItsLineEnding() throws {
        var binary = [UInt8](repeating: 0x9F, count: 32)
        for last in [0x0A, 0x0D] as [UInt8] {
            binary[31] = last
            let path = write(binary, mode: 0o600, to: "binary\(last)")
            #expect(try StateKey.file(path).id == (try StateKey(bytes: binary)).id)
        }
        let text = Array("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff".utf8)
        for ending in [[0x0A], [0x0D, 0x0A], []] as [[UInt8]] {
            let path = write(text + ending, mode: 0o600, to: "text\(ending.count)")
            #expect(try StateKey.file(path).id == (try StateKey(bytes: text)).id)
        }
        // A pseudo-file reports a size it does not have.
        #expect(throws: StateKeyError.self) { try StateKey.file("/proc/self/environ") }
    }

    @Test func aShortOrMissingKeyIsRefused() throws {
        let short = write(Array("too short\n".utf8), mode: 0o600, to: "short")
        #expect(throws: StateKeyError.tooShort(source: "key file \(short)", byteCount: 9)) { try StateKey.file(short) }
        for (name, bytes) in [("empty", [UInt8]()), ("newline", [0x0A]), ("crlf", [0x0D, 0x0A])] {
            let path = write(bytes, mode: 0o600, to: name)
            #expect(throws: StateKeyError.tooShort(source: "key file \(path)", byteCount: 0)) {
                try StateKey.file(path)
            }
        }
        let big = write([UInt8](repeating: 0x41, count: StateKey.maximumByteCount + 1), mode: 0o600, to: "big")
        #expect(throws: StateKeyError.self) { try StateKey.file(big) }
        let fifo = folder.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: StateKeyError.unreadable(path: fifo, reason: "it is not a regular file")) {
            try StateKey.file(fifo)
        }
        #expect(throws: StateKeyError.unreadable(path: "/dev/zero", reason: "it is not a regular file")) {
            try StateKey.file("/dev/zero")
        }
        #expect(throws: StateKeyError.notFound(path: folder.file("nothing"))) {
            try StateKey.file(folder.file("nothing"))
        }
        #expect(throws: StateKeyError.unreadable(path: folder.path, reason: "it is not a regular file")) {
            try StateKey.file(folder.path)
        }
        #expect(throws: StateKeyError.tooShort(source: "a key passed by the app", byteCount: 16)) {
            try StateKey(bytes: [UInt8](repeating: 1, count: 16))
        }
    }

    @Test func aCredentialIsReadFromTheCredentialsDirectory() throws {
        let path = write(material, mode: 0o400, to: "app-state-key")
        let key = try StateKey.credential("app-state-key", environment: ["CREDENTIALS_DIRECTORY": folder.path])
        #expect(key.id == (try StateKey.file(path)).id)
        #expect(key.source == "credential app-state-key")
        #expect(throws: StateKeyError.noCredentialsDirectory(name: "app-state-key")) {
            try StateKey.credential("app-state-key", environment: [:])
        }
        for name in ["", "..", "a/b"] {
            #expect(throws: StateKeyError.invalidCredentialName(name)) {
                try StateKey.credential(name, environment: ["CREDENTIALS_DIRECTORY": folder.path])
            }
        }
    }
}

/// The mail app in real processes (`statestore-worker`), its states sealed with the key in a
/// file: relaunched with the wrong key, with none, then with the right one.
@Suite("Sealed states across real process launches", .hangGuard(minutes: 10))
struct SealedStateProcessTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("mail.sqlite") }

    func keyFile(_ name: String, seed: UInt8) -> String {
        let path = folder.file(name)
        let bytes = (0..<32).map { UInt8(truncatingIfNeeded: Int($0) &* 17 &+ Int(seed)) }
        #expect(
            FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        return path
    }

    /// `statestore-worker MODE DB` with `environment`; its exit status and its lines by key.
    func worker(_ mode: String, environment: [String: String]) throws -> (status: Int32, values: [String: String]) {
        if mode == "app-report" { return try relaunchMailApp(database: database, environment: environment) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        process.arguments = [mode, database]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = folder.file("\(mode).out")
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        var values: [String: String] = [:]
        for line in try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0], default: ""] += (values[parts[0]] == nil ? "" : "\n") + parts[1] }
        }
        return (process.terminationStatus, values)
    }

    func rows() throws -> String {
        try CLI.tool(
            "sqlite3", [database, "SELECT path, generation, checksum, key_id, hex(bytes) FROM states ORDER BY path"])
    }

    @Test func theWrongKeyThenNoKeyThenTheRightOneFindsEverything() throws {
        let right = keyFile("right.key", seed: 1), wrong = keyFile("wrong.key", seed: 2)
        let rightID = try StateKey.file(right).id, wrongID = try StateKey.file(wrong).id

        // A session sealed with the right key, killed.
        let session = Process()
        session.executableURL = URL(fileURLWithPath: try builtProduct("statestore-worker"))
        session.arguments = ["app-session", database, "kill"]
        session.environment = ProcessInfo.processInfo.environment.merging(["STATESTORE_KEY_FILE": right]) { $1 }
        let pipe = Pipe()
        session.standardOutput = pipe
        try session.run()
        #expect(pipe.fileHandleForReading.availableLine() == "ready")
        kill(session.processIdentifier, SIGKILL)
        session.waitUntilExit()

        let sealed = try rows()
        #expect(
            try CLI.tool(
                "sqlite3",
                [database, "SELECT count(*), count(key_id), count(DISTINCT key_id), max(key_id) FROM states"])
                == "4|4|1|\(rightID)\n")
        #expect(!sealed.contains(Data("grace@example.org".utf8).map { String(format: "%02X", $0) }.joined()))

        // Launched with the wrong key, then with none: each state is reported, nothing changes.
        for (environment, configured) in [
            (["STATESTORE_KEY_FILE": wrong], "was given key \(wrongID)"), ([:], "was given no key"),
        ] {
            let launch = try worker("app-peak", environment: environment)
            #expect(launch.status == 0)
            let errors = launch.values["error", default: ""].split(separator: "\n")
            #expect(errors.count >= 1)
            // A restore names the key it was given; a save is refused for the database as a whole.
            #expect(errors.allSatisfy { $0.contains("sealed") && $0.contains(rightID) }, "\(errors)")
            #expect(errors.contains { $0.contains(configured) }, "\(errors)")
            #expect(
                errors.allSatisfy {
                    $0.contains(configured) || $0.contains("which this store was not given, so it writes nothing")
                }, "\(errors)")
            #expect(try rows() == sealed)
            #expect(try CLI.tool("sqlite3", [database, "SELECT count(*) FROM quarantine"]) == "0\n")
        }

        // The right key: everything, exactly as left.
        let report = try worker("app-report", environment: ["STATESTORE_KEY_FILE": right])
        #expect(report.status == 0)
        #expect(report.values == RestorationProcessTests.fullSession)
    }
}
