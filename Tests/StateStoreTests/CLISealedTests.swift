import Foundation
import StateStore
import StateStoreCrypto
import StateStoreLinux
import Testing

/// `statectl` on sealed databases: `rekey` seals, rotates and unseals; `inspect`, `check`,
/// `export` and `import` with and without the key.
@Suite("statectl and sealed states", .hangGuard(minutes: 10))
struct CLISealedTests {
    let folder = TemporaryFolder()
    var db: String { folder.file("state.sqlite") }

    func keyFile(_ name: String, seed: UInt8, mode: mode_t = 0o600) -> String {
        let path = folder.file(name)
        let bytes = (0..<32).map { UInt8(truncatingIfNeeded: Int($0) &* 13 &+ Int(seed)) }
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data(bytes), attributes: [.posixPermissions: Int(mode)]))
        return path
    }

    func keyID(_ file: String) throws -> String { try StateKey.file(file).id }

    @Test func rekeySealsRotatesAndUnsealsAndTheCommandsFollow() throws {
        try Fixture.populate(db, quarantine: false)
        let clearValue = try CLI.run(["inspect", "--db", db, "root/inbox", "--json"]).stdout
        let one = keyFile("one.key", seed: 1), two = keyFile("two.key", seed: 2)
        let idOne = try keyID(one), idTwo = try keyID(two)

        let sealed = try CLI.run(["rekey", "--db", db, "--new-key-file", one])
        #expect(sealed.status == 0, "\(sealed)")
        #expect(sealed.stdout == "Sealed 4 states with key \(idOne) in \(db); 0 already were.\n")
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states WHERE key_id = '\(idOne)'"]) == "4\n")

        // Without the key: listed with their key id, never shown.
        let list = try CLI.run(["inspect", "--db", db])
        #expect(
            list.stdout.contains("SEALED WITH") && list.stdout.contains(idOne) && list.stdout.contains("4 states, ")
                && list.stdout.contains(", 4 sealed in "), "\(list)")
        let hidden = try CLI.run(["inspect", "--db", db, "root/inbox"])
        #expect(hidden.status == 0)
        #expect(
            hidden.stdout.contains(
                "Sealed:      with key \(idOne) (not shown: pass --key-file or --credential to show it)"), "\(hidden)")
        #expect(!hidden.stdout.contains("unread"))
        // With it: the value, exactly as it was clear.
        let shown = try CLI.run(["inspect", "--db", db, "root/inbox", "--json", "--key-file", one])
        #expect(shown.stdout.contains("\"key_id\": \"\(idOne)\""))
        #expect(shown.stdout.contains(#""unread": 2"#), "\(shown)")
        #expect(clearValue.contains(#""unread": 2"#))
        // The same key as a systemd credential: $CREDENTIALS_DIRECTORY/NAME.
        let credential = try CLI.run(
            ["inspect", "--db", db, "root/inbox", "--json", "--credential", "one.key"],
            environment: ["CREDENTIALS_DIRECTORY": folder.path])
        #expect(credential.stdout == shown.stdout, "\(credential)")
        let noDirectory = try CLI.run(
            ["inspect", "--db", db, "--credential", "one.key"], environment: ["CREDENTIALS_DIRECTORY": ""])
        #expect(
            noDirectory.status == 1 && noDirectory.stderr.contains("CREDENTIALS_DIRECTORY is not set"), "\(noDirectory)"
        )

        let checked = try CLI.run(["check", "--db", db, "--key-file", one])
        #expect(checked.status == 0, "\(checked)")
        #expect(checked.stdout.contains("Sealed states:        4 (key \(idOne): 4, opened)"), "\(checked)")
        let unchecked = try CLI.run(["check", "--db", db, "--json"])
        #expect(unchecked.stdout.contains("\"unopened_key_ids\": [\n    \"\(idOne)\"\n  ]"), "\(unchecked)")
        // Given a key that opens none of them (a backup key being tried), check does not call it healthy.
        let wrongKey = try CLI.run(["check", "--db", db, "--key-file", two])
        #expect(wrongKey.status == 1 && !wrongKey.stdout.contains("Healthy."), "\(wrongKey)")
        #expect(
            wrongKey.stdout.contains(
                "4 sealed state(s) are sealed with a key the key given (\(idTwo)) does not open (\(idOne))"),
            "\(wrongKey)")

        // Rotation needs the current key, and changes nothing without it.
        let before = try CLI.tool("sqlite3", [db, "SELECT hex(bytes), key_id FROM states ORDER BY path"])
        let refused = try CLI.run(["rekey", "--db", db, "--new-key-file", two])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("sealed with key \(idOne)") && refused.stderr.contains("was given no key"),
            "\(refused)")
        #expect(try CLI.tool("sqlite3", [db, "SELECT hex(bytes), key_id FROM states ORDER BY path"]) == before)
        #expect(try CLI.run(["rekey", "--db", db, "--key-file", one, "--new-key-file", two]).status == 0)
        #expect(
            try CLI.run(["inspect", "--db", db, "root/inbox", "--key-file", one]).stdout.contains(
                "(not shown: the key given is \(idOne))"))
        #expect(
            try CLI.run(["inspect", "--db", db, "root/inbox", "--json", "--key-file", two]).stdout.contains(
                #""unread": 2"#))

        // An export is sealed unless --clear; both import back whole.
        let sealedExport = try CLI.run(["export", "--db", db])
        #expect(sealedExport.stdout.contains("\"key_id\": \"\(idTwo)\"") && !sealedExport.stdout.contains("unread"))
        let clearExport = try CLI.run(["export", "--db", db, "--clear", "--key-file", two])
        #expect(
            clearExport.stdout.contains(#""unread": 2"#) && !clearExport.stdout.contains("key_id"), "\(clearExport)")
        #expect(try CLI.run(["export", "--db", db, "--clear"]).status == 2)
        let document = folder.file("sealed.json")
        try sealedExport.stdout.write(toFile: document, atomically: true, encoding: .utf8)
        let copy = folder.file("copy.sqlite")
        #expect(try CLI.run(["import", "--db", copy, document]).status == 0)
        #expect(
            try CLI.run(["inspect", "--db", copy, "root/inbox", "--json", "--key-file", two]).stdout.contains(
                #""unread": 2"#))

        // A clear document is not written clear into the sealed database: refused without the
        // key, sealed with it.
        let clearDocument = folder.file("clear.json")
        try clearExport.stdout.write(toFile: clearDocument, atomically: true, encoding: .utf8)
        let keyless = try CLI.run(["import", "--db", db, clearDocument])
        #expect(
            keyless.status == 1
                && keyless.stderr.contains("is sealed with key \(idTwo), which this store was not given"), "\(keyless)")
        #expect(try CLI.run(["import", "--db", db, clearDocument, "--key-file", two]).status == 0)
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states WHERE key_id IS NULL"]) == "0\n")

        // Unsealed: the database is as clear as it began.
        let unsealed = try CLI.run(["rekey", "--db", db, "--key-file", two, "--clear"])
        #expect(unsealed.stdout == "Made 4 states clear in \(db); 0 already were.\n", "\(unsealed)")
        let final = try CLI.run(["inspect", "--db", db, "root/inbox", "--json"]).stdout
        #expect(final.contains(#""unread": 2"#) && !final.contains("key_id"), "\(final)")
        #expect(try CLI.run(["check", "--db", db]).stdout.contains("Sealed states:        0"))
    }

    @Test func theDemoSealsWithTheKeyItIsGivenAndContinuesWithIt() throws {
        let key = keyFile("demo.key", seed: 3)
        let first = try CLI.run(["demo", "--db", db, "--key-file", key, "--json"])
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(*), count(key_id) FROM states"]) == "3|3\n")
        let file = try Data(contentsOf: URL(fileURLWithPath: db))
        #expect(file.range(of: Data("ship on Friday".utf8)) == nil)
        // Run again with the key, it continues the session and brings the draft back.
        let second = try CLI.run(["demo", "--db", db, "--key-file", key, "--json"])
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second)")
        #expect(second.stdout.contains(#""continued": true"#) && second.stdout.contains("ship on Friday"))
    }

    @Test func aKeyFileOthersCanReadIsRefusedAndNothingIsRead() throws {
        try Fixture.populate(db, quarantine: false)
        let open = keyFile("open.key", seed: 1, mode: 0o644)
        let result = try CLI.run(["rekey", "--db", db, "--new-key-file", open])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "statectl: The key file \(open) has mode 644, so other users can read or change it; it was not read. Run `chmod 600 \(open)`, and make a new key if others may have read this one.\n"
        )
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(key_id) FROM states"]) == "0\n")
        #expect(try CLI.run(["inspect", "--db", db, "--key-file", open, "--credential", "x"]).status == 2)
    }

    /// A systemd credential for a service that runs as another user (`User=`, `DynamicUser=`):
    /// systemd writes it owned by root, mode 0400, and grants the service's user its read with a
    /// POSIX ACL (which `ls` shows as mode 0440), in a directory of the same kind.
    @Test(.enabled(if: CLI.canRunAsNobody, "needs root, /usr/bin/setpriv and a statectl that nobody can run"))
    func aCredentialSystemdGrantsTheServiceUserOpensTheStates() throws {
        try Fixture.populate(db, quarantine: false)
        let key = keyFile("one.key", seed: 1)
        #expect(try CLI.run(["rekey", "--db", db, "--new-key-file", key]).status == 0)
        // The service's own folder and database, as `StateDirectory=` makes them.
        #expect(chmod(folder.path, 0o755) == 0 && chown(folder.path, 65534, 65534) == 0 && chown(db, 65534, 65534) == 0)
        let binary = folder.file("statectl")
        try FileManager.default.copyItem(atPath: CLI.executable, toPath: binary)
        #expect(chmod(binary, 0o755) == 0)
        let credentials = folder.file("credentials"), credential = credentials + "/app-state-key"
        #expect(mkdir(credentials, 0o500) == 0)
        try FileManager.default.copyItem(atPath: key, toPath: credential)
        #expect(chmod(credential, 0o400) == 0)
        #expect(grantRead(to: 65534, credential, execute: false) && grantRead(to: 65534, credentials, execute: true))
        var info = stat()
        #expect(stat(credential, &info) == 0 && info.st_uid == 0 && info.st_mode & 0o777 == 0o440)
        func asService(_ arguments: [String]) throws -> CLIResult {
            try CLI.run(
                ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
                environment: ["CREDENTIALS_DIRECTORY": credentials], executable: "/usr/bin/setpriv", directory: "/")
        }
        let shown = try asService(["inspect", "--db", db, "root/inbox", "--json", "--credential", "app-state-key"])
        #expect(shown.status == 0 && shown.stdout.contains(#""unread": 2"#), "\(shown)")
        // Named as a key file, the same file is not the user's own: refused.
        let asFile = try asService(["inspect", "--db", db, "root/inbox", "--key-file", credential])
        #expect(
            asFile.status == 1 && asFile.stderr.contains("belongs to user 0, not to this process's user 65534"),
            "\(asFile)")
        // A group read bit with no ACL behind it is a group's read, not systemd's grant: refused.
        let plain = credentials + "/plain-key"
        try FileManager.default.copyItem(atPath: key, toPath: plain)
        #expect(chmod(plain, 0o440) == 0 && chown(plain, 0, 65534) == 0)
        let grouped = try asService(["inspect", "--db", db, "root/inbox", "--credential", "plain-key"])
        #expect(
            grouped.status == 1 && grouped.stderr.contains("has mode 440, so other users can read or change it"),
            "\(grouped)")
        // The fix for a credential is in the unit, not a chmod of a file systemd writes.
        #expect(grouped.stderr.contains("`LoadCredential=`") && !grouped.stderr.contains("chmod"), "\(grouped)")
        // A credential others can read is not one systemd wrote: refused, nothing read.
        #expect(chmod(credential, 0o444) == 0)
        let open = try asService(["inspect", "--db", db, "root/inbox", "--credential", "app-state-key"])
        #expect(
            open.status == 1 && open.stderr.contains("has mode 444, so other users can read or change it"), "\(open)")
    }

    /// Adds `user:UID:r` (`r-x` with `execute`) to the file's POSIX ACL, as systemd does, by
    /// writing the `system.posix_acl_access` attribute (the kernel's format: a version, then
    /// tag, permissions and id per entry); the owner keeps its mode bits, group and others none.
    func grantRead(to uid: UInt32, _ path: String, execute: Bool) -> Bool {
        let read: UInt16 = execute ? 5 : 4
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let owner = UInt16((info.st_mode >> 6) & 7)
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        append(UInt32(2))
        let unspecified = UInt32.max
        for (tag, permissions, id) in [
            (UInt16(0x01), owner, unspecified), (0x02, read, uid), (0x04, 0, unspecified),
            (0x10, read, unspecified), (0x20, 0, unspecified),
        ] {
            append(tag)
            append(permissions)
            append(id)
        }
        return setxattr(path, "system.posix_acl_access", bytes, bytes.count, 0) == 0
    }

    /// A rekey killed half-way through its transaction leaves every state as it was; run again,
    /// it does the whole of it.
    @Test func aRekeyKilledHalfWayChangesNothingAndRunsAgain() throws {
        let one = keyFile("one.key", seed: 1), two = keyFile("two.key", seed: 2)
        let idOne = try keyID(one), idTwo = try keyID(two)
        do {
            let store = try StateStore(path: db, options: .init(sealer: StateKeyring(try StateKey.file(one))))
            let payload = String(repeating: "x", count: 900)
            for batch in 0..<20 {
                try store.write { (transaction) throws(StateStoreError) in
                    for index in 0..<1000 {
                        try transaction.save(
                            ["n": "\(batch * 1000 + index)", "p": payload],
                            for: try RestorationPath(validating: "s/\(batch)/\(index)"))
                    }
                }
            }
        }
        let total = "20000\n"
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states WHERE key_id = '\(idOne)'"]) == total)

        // Killed once its uncommitted pages are spilling into the WAL: inside the transaction.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.executable)
        process.arguments = ["rekey", "--db", db, "--key-file", one, "--new-key-file", two]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var walBytes: UInt64 = 0
        while process.isRunning && walBytes < 4 << 20 {
            walBytes = (try? FileManager.default.attributesOfItem(atPath: db + "-wal")[.size] as? UInt64) ?? 0
            Thread.sleep(forTimeInterval: 0.002)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the rekey finished before its WAL reached 4 MiB")
        #expect(walBytes >= 4 << 20)
        // Every state is still sealed with the old key, and opens with it.
        #expect(try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states WHERE key_id = '\(idOne)'"]) == total)
        let check = try CLI.run(["check", "--db", db, "--key-file", one, "--json"])
        #expect(check.status == 0, "\(check)")
        #expect(check.stdout.contains("\"\(idOne)\": 20000"), "\(check)")

        let again = try CLI.run(["rekey", "--db", db, "--key-file", one, "--new-key-file", two])
        #expect(again.stdout == "Sealed 20000 states with key \(idTwo) in \(db); 0 already were.\n", "\(again)")
        let store = try StateStore(
            path: db, options: .init(readOnly: true, sealer: StateKeyring(try StateKey.file(two))))
        #expect(try store.restore([String: String].self, for: "s/19/999")?["n"] == "19999")
    }
}
