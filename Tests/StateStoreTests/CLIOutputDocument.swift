import Foundation

/// `docs/cli-output.md`: the prose, the commands, and how their output is abridged. The
/// document is made by running every command, in order, with `/bin/sh` in one empty folder
/// (`statectl` first on the PATH); ``CLIOutputDocTests`` compares it with the committed file
/// (``normalize(_:)`` masks what differs from run to run) and rewrites that file when asked.
enum CLIOutputDocument {
    /// The document's blocks, a blank line between each two.
    enum Part {
        /// Markdown, as is.
        case prose(String)
        /// One console block: each command and what it printed, abridged as `abridging` says.
        case console([String], abridging: [Abridgement] = [])
    }

    /// Shows only the first `head` and last `tail` lines of the demo step headed `== step`,
    /// with one `  … N more lines: what` line in place of the others.
    struct Abridgement {
        var step: String
        var head: Int
        var tail: Int
        var what: String
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let parts: [Part] = [
        .prose(
            """
            # statectl: real output

            Captured from the built binary on Linux, in an empty folder, by `scripts/cli-output`; the
            test suite checks this file against the binary (`CLIOutputDocTests`). Times and memory
            numbers differ from run to run, and the live `monitor` readings from machine to machine;
            everything else is the same on every run. Long lifecycle traces are abridged where marked
            `…`; nothing else is edited.

            ## `statectl demo`

            A small mail app (`Examples/Mail/`) launched twice on one database: the first launch opens
            a message, rotates, presents a draft, handles two memory warnings and terminates; the
            second is a new `Application` and `Window` that restores it.
            """),
        .console(
            ["statectl demo --db demo.sqlite"],
            abridging: [
                Abridgement(
                    step: "Launch 1: open the inbox", head: 7, tail: 5,
                    what: "containment, loadView/viewDidLoad, appearance and layout of tabs, mail, inbox"),
                Abridgement(
                    step: "Launch 1: memory warning (warning)", head: 1, tail: 1,
                    what: "mail, inbox, settings, message and compose get it too, in creation order"),
                Abridgement(
                    step: "Launch 1: memory warning (critical)", head: 1, tail: 1, what: "the same controllers"),
                Abridgement(
                    step: "Launch 2: relaunch: a new Application and Window on the same database", head: 4, tail: 17,
                    what: "tabs, mail and message rebuilt, message appears (and restores)"),
            ]),
        .prose(
            """
            Running it again on the same database continues the previous session: launch 1 restores it,
            goes back to the inbox (each controller restores its state on its first `viewWillAppear`)
            and replays the script. The step headings of a second run, and the line that says so:
            """),
        .console(["statectl demo --db demo.sqlite | grep -E '^==|previous run'"]),
        .prose("## `statectl inspect`"),
        .console(["statectl inspect --db demo.sqlite"]),
        .console(["statectl inspect --db demo.sqlite tabs/compose"]),
        .console(["statectl inspect --db demo.sqlite --events"]),
        .prose(
            """
            (After the two runs above: two warnings each. Simulated warnings have no "available" reading, hence `0 B`.)

            ## `statectl inspect --hierarchy`
            """),
        .console(["statectl inspect --db demo.sqlite --hierarchy"]),
        .prose(
            """
            ## `statectl inspect --scenes`

            Each window scene, what its states save under, its archive, and the live process that
            holds it now (none here: the demo has ended):
            """),
        .console(["statectl inspect --db demo.sqlite --scenes"]),
        .prose(
            """
            ## `statectl monitor --once`

            On the machine the output was captured on (its memory cgroup, version and limit, are in the JSON):
            """),
        .console(["statectl monitor --once", "statectl monitor --once --json"]),
        .prose(
            """
            On a fixture tree (`--root`): the prometheus/procfs `meminfo` and `pressure/memory` with a
            cgroup v2 service limited to 1 GiB, as in `Tests/StateStoreTests/CLIMonitorTests.swift`:
            """),
        .console(["statectl monitor --once --root fixture"]),
        .prose(
            """
            ## Sealed states: `statectl rekey`, and the commands with and without the key

            A key file of the user's own (mode 600; a real key is `head -c 32 /dev/urandom`, this one
            is fixed so that its key id is the same on every run). `rekey` seals the demo's states with
            it; without the key they are listed and never shown; `rekey --clear` makes them clear again.
            """),
        .console([
            "printf '%s' 'a fixed key: thirty-two bytes, at least' > state.key && chmod 600 state.key",
            "statectl rekey --db demo.sqlite --new-key-file state.key",
            "statectl inspect --db demo.sqlite",
            "statectl inspect --db demo.sqlite tabs/compose",
            "statectl inspect --db demo.sqlite tabs/compose --key-file state.key",
            "statectl check --db demo.sqlite --key-file state.key",
            "statectl rekey --db demo.sqlite --key-file state.key --clear",
        ]),
        .prose(
            """
            ## `statectl recover`

            A copy of the demo's database, grown to 3,003 states with `sqlite3` (each state copied a
            thousand times under `…/copyN`, checksums and all), then one of its pages overwritten, as
            a failing disk or a bad copy would. `recover` moves the file aside unchanged and starts a
            fresh one holding every state that still reads and matches its checksum: the 24 states on
            the overwritten page stay in the moved file.
            """),
        .console([
            "sqlite3 demo.sqlite \"VACUUM INTO 'copy.sqlite'\"",
            "sqlite3 copy.sqlite \"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes, key_id) SELECT s.path || '/copy' || n.i, s.type_name, s.version, s.generation, s.encoding, s.checksum, s.updated_at, s.bytes, s.key_id FROM states AS s, n\"",
            "printf '\\377%.0s' $(seq 4096) | dd of=copy.sqlite bs=4096 seek=64 conv=notrunc status=none",
            "statectl recover --db copy.sqlite",
            "statectl inspect --db copy.sqlite | tail -1",
        ]),
    ]

    /// Runs every command in a new empty folder and returns the whole document.
    static func generate() throws -> String {
        let folder = TemporaryFolder("cli-output-doc")
        let fixture = try CLIMonitorTests.cgroupTree()
        try FileManager.default.createSymbolicLink(atPath: folder.file("fixture"), withDestinationPath: fixture.path)
        let bin = URL(fileURLWithPath: CLI.executable).deletingLastPathComponent().path
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        var blocks: [String] = []
        for part in parts {
            switch part {
            case let .prose(text):
                blocks.append(text)
            case let .console(commands, abridging):
                var block = "```console\n"
                for command in commands {
                    let result = try CLI.run(
                        ["-c", command], home: folder.file("state"), environment: ["PATH": path],
                        executable: "/bin/sh", directory: folder.path)
                    guard result.status == 0, result.stderr.isEmpty else {
                        throw Failure(description: "`\(command)` did not run cleanly: \(result)")
                    }
                    block += "$ \(command)\n" + (try abridge(result.stdout, abridging))
                }
                blocks.append(block + "```")
            }
        }
        return blocks.joined(separator: "\n\n") + "\n"
    }

    /// `output` with each abridged step cut to its head and tail.
    static func abridge(_ output: String, _ abridgements: [Abridgement]) throws -> String {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for abridgement in abridgements {
            guard let heading = lines.firstIndex(of: "== " + abridgement.step) else {
                throw Failure(description: "no step \"\(abridgement.step)\" to abridge in:\n\(output)")
            }
            let start = heading + 1
            let end = lines[start...].firstIndex { $0.hasPrefix("== ") || $0.isEmpty } ?? lines.endIndex
            let cut = (end - start) - abridgement.head - abridgement.tail
            guard cut > 1 else {
                throw Failure(description: "step \"\(abridgement.step)\" has \(end - start) lines: too few to abridge")
            }
            lines.replaceSubrange(
                start + abridgement.head..<end - abridgement.tail,
                with: ["  … \(cut) more lines: \(abridgement.what)"])
        }
        return lines.joined(separator: "\n")
    }

    /// The document with what differs from run to run masked: times; memory numbers in the
    /// demo's RSS lines and in rows that begin with a time (pressure events, monitor samples),
    /// and there also the `-` of a reading the machine lacks;
    /// of the monitor's JSON sample, only its keys. Runs of spaces count as one, since column
    /// widths follow the numbers.
    static func normalize(_ document: String) -> String {
        document.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = String(line).replacing(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?/, with: "<time>")
                .replacing(/broken-\d{8}T\d{6}Z(-\d+)?/, with: "broken-<time>")
            if line.hasPrefix(#"{"schema":1,"kind":"sample""#),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            {
                return "sample with keys " + object.keys.sorted().joined(separator: ", ")
            }
            let quantity = /\d+(\.\d+)?( (B|KiB|MiB|GiB|TiB|ns|µs|ms|s))?\b/
            if line.hasPrefix("<time>") {
                line = line.replacing(quantity, with: "<n>")
                    .replacing(/\b(max|none)\b/, with: "<n>")
                    // A reading the machine does not have (no PSI, no memory cgroup) prints `-`.
                    .replacing(/\ -(?=\ |$)/, with: " <n>")
                    .replacing(/\b(normal|warning|critical)$/, with: "<level>")
            } else if line.contains("RSS ") {
                line = line.replacing(quantity, with: "<n>")
            }
            return line.replacing(/\ +/, with: " ")
        }.joined(separator: "\n")
    }
}
