import Foundation
import Testing

@testable import StateStore

/// `statectl`'s `--json` output is a promise: the fields each command prints, and their types,
/// are committed in `Snapshots/statectl-json-fields.txt`. A field may be added (regenerate the
/// file with `STATESTORE_UPDATE_SNAPSHOTS=1`); a field removed or retyped is a breaking change,
/// which the file is not rewritten for until `CHANGELOG.md`'s Unreleased section names it.
@Suite("statectl's JSON fields", .hangGuard(minutes: 10))
struct StatectlJSONFieldsTests {
    static let snapshot = Snapshot.file("statectl-json-fields.txt")

    /// One line per field: `command: path type`, arrays' elements as `path[]`, objects' members
    /// as `path.member`; a field seen with several types lists them all (`string|null`).
    static func fields(of json: JSON, at path: String, into types: inout [String: Set<String>]) {
        switch json {
        case .object(let members):
            if !path.isEmpty { types[path, default: []].insert("object") }
            for (key, value) in members { fields(of: value, at: path.isEmpty ? key : path + "." + key, into: &types) }
        case .array(let elements):
            types[path, default: []].insert("array")
            for element in elements { fields(of: element, at: path + "[]", into: &types) }
        case .null: types[path, default: []].insert("null")
        case .bool: types[path, default: []].insert("boolean")
        case .number: types[path, default: []].insert("number")
        case .string: types[path, default: []].insert("string")
        }
    }

    /// The commands, run in order in one folder: each prints one JSON object (`monitor`: one per
    /// line). `soak --json` is left out: it runs for seconds under memory pressure, and
    /// `SoakTests` checks its summary's fields.
    static let commands: [(setup: String?, command: String)] = [
        ("statectl demo --db demo.sqlite > /dev/null", "statectl demo --db demo2.sqlite --json"),
        (nil, "statectl inspect --db demo.sqlite --json"),
        (nil, "statectl inspect --db demo.sqlite tabs/compose --json"),
        (nil, "statectl inspect --db demo.sqlite --events --json"),
        (nil, "statectl inspect --db demo.sqlite --quarantine --json"),
        (nil, "statectl inspect --db demo.sqlite --hierarchy --json"),
        (nil, "statectl inspect --db demo.sqlite --scenes --json"),
        (nil, "statectl check --db demo.sqlite --json"),
        (nil, "statectl migrate --db demo.sqlite --dry-run --json"),
        (nil, "statectl migrate --db new.sqlite --json"),
        (nil, "statectl export --db demo.sqlite"),
        ("statectl export --db demo.sqlite --output export.json", "statectl import export.json --db new.sqlite --json"),
        (nil, "statectl prune --db demo.sqlite --older-than 30d --dry-run --json"),
        (nil, "statectl recover --db demo.sqlite --json"),
        (
            "printf '%s' 'a fixed key: thirty-two bytes, at least' > state.key && chmod 600 state.key",
            "statectl rekey --db new.sqlite --new-key-file state.key --json"
        ),
        (nil, "statectl monitor --once --root fixture --json"),
        // A file an earlier release wrote, with quarantined rows, then a row whose checksum and one
        // whose path were changed by hand: the arrays of findings have elements.
        (
            "cp \"$FORMATS/v1/state.sqlite\" old.sqlite && chmod 600 old.sqlite && statectl migrate --db old.sqlite > /dev/null",
            "statectl inspect --db old.sqlite --quarantine --json"
        ),
        (
            "sqlite3 old.sqlite \"UPDATE states SET checksum = checksum + 1 WHERE rowid = (SELECT min(rowid) FROM states); UPDATE states SET path = 'a//b' WHERE rowid = (SELECT max(rowid) FROM states)\"",
            "statectl check --db old.sqlite --json || test $? = 1"
        ),
        (nil, "statectl prune --db old.sqlite --quarantine --older-than 0s --json"),
        (nil, "statectl prune --db old.sqlite --invalid-paths --json"),
        // A damaged copy of the demo's file (a page overwritten), which recover moves aside.
        (
            "sqlite3 demo.sqlite \"VACUUM INTO 'copy.sqlite'\" && sqlite3 copy.sqlite \"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes, key_id) SELECT s.path || '/copy' || n.i, s.type_name, s.version, s.generation, s.encoding, s.checksum, s.updated_at, s.bytes, s.key_id FROM states AS s, n\" && printf '\\377%.0s' $(seq 4096) | dd of=copy.sqlite bs=4096 seek=64 conv=notrunc status=none",
            "statectl recover --db copy.sqlite --json"
        ),
    ]

    static func actualFields() throws -> [String] {
        let folder = TemporaryFolder("json-fields")
        // The monitor reads a fixture tree (a cgroup v2 service limited to 1 GiB), so its fields
        // are the same on every machine.
        let fixture = try CLIMonitorTests.cgroupTree()
        try FileManager.default.createSymbolicLink(atPath: folder.file("fixture"), withDestinationPath: fixture.path)
        let bin = URL(fileURLWithPath: CLI.executable).deletingLastPathComponent().path
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let formats = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/formats")
            .path
        func shell(_ command: String) throws -> CLIResult {
            try CLI.run(
                ["-c", command], home: folder.file("state"), environment: ["PATH": path, "FORMATS": formats],
                executable: "/bin/sh", directory: folder.path)
        }
        var lines: [String] = []
        for (setup, command) in commands {
            if let setup {
                let prepared = try shell(setup)
                #expect(prepared.status == 0, "\(setup): \(prepared)")
            }
            let result = try shell(command)
            #expect(result.status == 0, "\(command): \(result)")
            var types: [String: Set<String>] = [:]
            // One object, or (monitor) one a line.
            var objects: [JSON] = []
            if let whole = try? JSONParser.parse(Array(result.stdout.utf8), maximumDepth: 512) {
                objects = [whole]
            } else {
                for line in result.stdout.split(separator: "\n") {
                    objects.append(try JSONParser.parse(Array(line.utf8), maximumDepth: 512))
                }
            }
            for object in objects { fields(of: object, at: "", into: &types) }
            lines += types.keys.sorted().map { "\(command): \($0) \(types[$0]!.sorted().joined(separator: "|"))" }
        }
        return lines
    }

    @Test func theFieldsOfEveryJSONOutputAreTheCommittedOnes() throws {
        let actual = try Self.actualFields()
        let committed =
            (try? String(contentsOf: Self.snapshot, encoding: .utf8))?.split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("#") && !$0.isEmpty } ?? []
        let added = Set(actual).subtracting(committed)
        let dropped = Set(committed).subtracting(actual)
        // What the Unreleased section of the CHANGELOG says, where a dropped field must be named.
        let changelog = try String(contentsOf: Snapshot.packageRoot.appending(path: "CHANGELOG.md"), encoding: .utf8)
        let unreleased =
            changelog.components(separatedBy: "\n## Unreleased\n").dropFirst().first?
            .components(separatedBy: "\n## ").first ?? ""
        let breaking =
            unreleased.components(separatedBy: "\n### Breaking changes\n").dropFirst().first?
            .components(separatedBy: "\n### ").first ?? ""
        let unrecorded = dropped.sorted().filter { line in
            let field = line.split(separator: " ").dropLast().last.map(String.init) ?? line
            return !breaking.contains("`\(field)`")
        }
        #expect(
            unrecorded.isEmpty,
            """
            statectl's JSON lost or retyped these fields, a breaking change; name each field (in backticks) \
            under "### Breaking changes" in CHANGELOG.md's Unreleased section, then regenerate the snapshot:
            \(unrecorded.joined(separator: "\n"))
            """)
        if Snapshot.updating, !(added.isEmpty && dropped.isEmpty), unrecorded.isEmpty {
            let header = """
                # The fields of statectl's --json outputs: `command: field type`, one a line (arrays' elements as
                # `field[]`). Made by StatectlJSONFieldsTests; regenerate with STATESTORE_UPDATE_SNAPSHOTS=1.

                """
            try (header + actual.joined(separator: "\n") + "\n").write(
                to: Self.snapshot, atomically: true, encoding: .utf8)
            Issue.record(
                "Rewrote \(Self.snapshot.lastPathComponent); run the test again without STATESTORE_UPDATE_SNAPSHOTS")
            return
        }
        #expect(
            added.isEmpty && dropped.isEmpty,
            """
            statectl's JSON fields differ from Snapshots/statectl-json-fields.txt; new fields are fine: \
            regenerate with STATESTORE_UPDATE_SNAPSHOTS=1 swift test --filter StatectlJSONFieldsTests
            added: \(added.sorted().joined(separator: "\n  "))
            gone: \(dropped.sorted().joined(separator: "\n  "))
            """)
    }
}
