import ArgumentParser
import Foundation
import MailExample
import StateStore

extension Statectl {
    /// `statectl demo`: a mail app that saves, relaunches and restores, with its lifecycle trace.
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a small mail app twice on a database and show what it saved and restored.",
            discussion: """
                The app (Examples/Mail/ in the StateStore package) is a tab bar with a "mail" \
                tab (a navigation controller: inbox → message, with compose presented modally) and \
                a "settings" tab. Every step prints the lifecycle callbacks the controllers received.

                Launch 1 opens the database (creating and migrating it when needed), opens a \
                message, replies, types a draft, rotates to landscape (and is refused upside-down \
                by the compose screen), handles a warning and a critical memory warning (with the \
                memory and cache cost they released), and terminates. Launch 2 is a new \
                Application and Window on the same database: restoreHierarchy(in:) rebuilds the \
                tabs, the navigation stack and the modal draft, and the draft comes back. The \
                demo ends with `statectl inspect` and `statectl inspect --hierarchy` of the database.

                Running the demo again on the same database continues the previous session: \
                launch 1 restores what the previous run left (and says so), goes back to the \
                inbox, and replays the same steps, so every run ends in the same state. To start \
                from nothing, delete the database file (or pass another --db).

                The output is the same on every run apart from times and memory numbers. With \
                --key-file or --credential, the app seals its states with that key (see `statectl \
                rekey --help`); a database sealed before needs the same key.

                Example:
                  statectl demo --db /tmp/demo.sqlite
                  statectl inspect --db /tmp/demo.sqlite compose
                  sqlite3 /tmp/demo.sqlite 'SELECT path, json(bytes) FROM states'

                JSON (--json): {"schema": 1, "kind": "demo", "database", "continued", "steps": \
                [{"launch", "title", "trace": [lines], "notes": [lines]}], "restored_draft" ({"to", \
                "subject", "body"} or null), "entries" (as inspect --json), "hierarchy" (as \
                inspect --hierarchy --json)}
                """
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var key: KeyOptions

        func run() async throws {
            let path = database.path
            let sealer = try key.keyring()
            let report = try await MainActor.run { try DemoRun(databasePath: path, sealer: sealer).perform() }
            let store = try database.openReadOnly(sealer: sealer)
            let entries = try store.entries()
            let archive = try store.hierarchyArchive(scene: "main")
            if output.json {
                Output.json(
                    kind: "demo",
                    [
                        ("database", .string(database.path)),
                        ("continued", .bool(report.continued)),
                        ("steps", .array(report.steps.map(\.json))),
                        (
                            "restored_draft",
                            report.restoredDraft.map { draft in
                                .object([
                                    ("to", .string(draft.to)), ("subject", .string(draft.subject)),
                                    ("body", .string(draft.body)),
                                ])
                            } ?? .null
                        ),
                        ("entries", .array(entries.map(EntryOutput.json))),
                        ("hierarchy", .object(HierarchyPrinter.json(archive: archive, scene: "main", setAside: false))),
                    ])
                return
            }
            for step in report.steps { print(step.text) }
            print("")
            print("== statectl inspect --db \(database.path)")
            print(Inspect.entriesText(entries, databasePath: database.path))
            print("")
            print("== statectl inspect --hierarchy --db \(database.path)")
            print(HierarchyPrinter.text(archive: archive, scene: "main", setAside: false))
        }
    }
}

/// One step of the demo: a heading, the callbacks it caused, and what it wants to say.
struct DemoStep {
    var launch: Int
    var title: String
    var trace: [String] = []
    var notes: [String] = []

    var text: String {
        (["== Launch \(launch): \(title)"] + trace.map { "  " + $0 } + notes.map { "  " + $0 }).joined(separator: "\n")
    }

    var json: JSON {
        .object([
            ("launch", .int(launch)), ("title", .string(title)),
            ("trace", .strings(trace)), ("notes", .strings(notes)),
        ])
    }
}

/// What a demo run did.
struct DemoReport {
    var continued = false
    var steps: [DemoStep] = []
    var restoredDraft: ComposeController.Draft?
}

/// The demo's script: two launches of ``MailApp`` on one database.
@MainActor
final class DemoRun {
    let databasePath: String
    /// Seals the app's states when set (`--key-file`, `--credential`).
    let sealer: (any StateSealer)?
    private var report = DemoReport()
    private var launch = 1
    /// The classic callbacks of the launch under way: the printed trace leaves out
    /// `viewIsAppearing` and the size and trait transitions, which the lifecycle tests cover.
    private var trace = DemoRun.makeTrace()

    static let reply = (
        to: "ada@example.com", subject: "Re: Status report #3",
        body: "Thanks, Ada. The numbers look right; let's ship on Friday."
    )

    init(databasePath: String, sealer: (any StateSealer)? = nil) {
        self.databasePath = databasePath
        self.sealer = sealer
    }

    private static func makeTrace() -> LifecycleTrace {
        LifecycleTrace(
            recording: Set(LifecycleCallback.allCases).subtracting([
                .viewIsAppearing, .viewWillTransition, .willTransitionToTraitCollection, .traitCollectionDidChange,
            ]),
            echo: false
        )
    }

    /// The mail app on `store`, tracing into a new trace, its restoration errors reported.
    private func makeApp(store: StateStore) -> MailApp {
        let app = MailApp(store: store)
        trace = Self.makeTrace()
        app.application.trace = trace
        Self.reportErrors(of: app)
        return app
    }

    /// Records the trace lines `action` causes as one step.
    private func step(_ title: String, _ action: () throws -> [String]) rethrows {
        trace.removeAll()
        let notes = try action()
        report.steps.append(DemoStep(launch: launch, title: title, trace: trace.lines, notes: notes))
    }

    func perform() throws -> DemoReport {
        try firstLaunch()
        launch = 2
        try secondLaunch()
        return report
    }

    private func firstLaunch() throws {
        let app = makeApp(store: try StateStore(path: databasePath, options: .init(sealer: sealer)).reportingWarnings())
        try step("open the inbox") {
            try app.launch()
            report.continued = app.restored
            guard app.restored else {
                return ["a fresh database: nothing to restore, built tabs → mail (inbox) + settings"]
            }
            return ["restoreHierarchy(in:) → true: continuing the session a previous run left"]
                + describeRestoredState(of: app)
        }
        if app.restored {
            step("back to the inbox to replay the script") {
                app.backToInbox()
                return ["each controller restored its state on its first viewWillAppear"]
                    + describeRestoredState(of: app)
            }
        }
        let item = MailMessage.mailbox[2]
        try step("open message \(item.id)") {
            app.scrollInbox(to: 480)
            try app.open(item)
            app.message?.read(to: 0.35)
            return ["inbox: selected \(item.id), scrolled to 480; message: read to 35 %"]
        }
        step("rotate to landscape") {
            let rotated = app.window.rotate(to: .landscapeLeft)
            return [
                "rotate(to: landscapeLeft) → \(rotated), window is now \(Int(app.window.size.width))×\(Int(app.window.size.height))"
            ]
        }
        try step("reply: present compose modally") {
            try app.reply()
            return []
        }
        step("type a draft") {
            app.compose?.type(to: Self.reply.to, subject: Self.reply.subject, body: Self.reply.body)
            let refused = app.window.rotate(to: .portraitUpsideDown)
            return [
                "draft: to \"\(Self.reply.to)\", subject \"\(Self.reply.subject)\"",
                "rotate(to: portraitUpsideDown) → \(refused): compose supports portrait and landscape only",
            ]
        }
        for level in [MemoryPressureLevel.warning, .critical] {
            step("memory warning (\(EntryOutput.levelName(level)))") {
                app.application.didReceiveMemoryWarning(level: level)
                return app.application.lastMemoryWarning.map { [Self.describe($0)] } ?? []
            }
        }
        step("terminate") {
            app.application.terminate()
            return ["states and the hierarchy are in \(databasePath)"]
        }
    }

    private func secondLaunch() throws {
        let app = makeApp(store: try StateStore(path: databasePath, options: .init(sealer: sealer)))
        try step("relaunch: a new Application and Window on the same database") {
            try app.launch()
            guard app.restored else { return ["restoreHierarchy(in:) → false: nothing was restored"] }
            report.restoredDraft = app.compose?.restorableState
            return ["restoreHierarchy(in:) → true"] + describeRestoredState(of: app)
        }
        step("terminate") {
            app.application.terminate()
            return []
        }
    }

    /// What restoration reports (a set-aside archive, a quarantined state) as `statectl:` lines:
    /// one line each, escaped, at most 400 characters.
    private static func reportErrors(of app: MailApp) {
        app.application.restorationCoordinator?.errorHandler = { error in
            var line = Table.visible(oneLine(error.description))
            if line.count > 400 { line = String(line.prefix(400)) + "…" }
            Output.error("statectl: " + sentence(line))
        }
    }

    /// The state each controller holds now; one not shown yet restores on its first appearance.
    private func describeRestoredState(of app: MailApp) -> [String] {
        var lines: [String] = []
        func line(_ controller: ViewController?, _ describe: () -> String) {
            guard let controller, let path = app.application.restorationCoordinator?.restorationPath(for: controller)
            else { return }
            // A controller that has appeared has loaded its view and restored its state.
            lines.append(
                "\(path): "
                    + (controller.isViewLoaded ? describe() : "not shown yet; restores on its first viewWillAppear"))
        }
        line(app.inbox) {
            let state = app.inbox!.restorableState
            return "selected \(state.selectedMessageID ?? "nothing"), scrolled to \(Int(state.scrollOffset))"
        }
        line(app.message) {
            let state = app.message!.restorableState
            return "message \(state.messageID ?? "none"), read to \(Int((state.readPosition * 100).rounded())) %"
        }
        line(app.compose) {
            let draft = app.compose!.restorableState
            return "draft to \"\(draft.to)\", subject \"\(draft.subject)\", body \"\(draft.body)\""
        }
        return lines
    }

    private static func describe(_ warning: MemoryWarningReport) -> String {
        return "RSS \(Format.bytes(warning.rssBefore)) → \(Format.bytes(warning.rssAfter)), "
            + "cache cost released \(Format.bytes(warning.cacheCostReleased)), \(warning.controllerCount) controllers"
    }
}
