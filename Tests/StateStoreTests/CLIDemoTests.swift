import Foundation
import StateStore
import Testing

/// `statectl demo`, run as the built binary on temporary databases.
@Suite(.hangGuard(minutes: 10)) struct CLIDemoTests {
    static let push = """
        == Launch 1: open message m-1042
          message: awakeFromNib
          message: willMove(toParent: mail)
          message: loadView
          message: viewDidLoad
          inbox: viewWillDisappear(animated: true)
          message: viewWillAppear(animated: true)
          message: viewWillLayoutSubviews
          message: viewDidLayoutSubviews
          inbox: viewDidDisappear(animated: true)
          message: viewDidAppear(animated: true)
          message: didMove(toParent: mail)
          inbox: selected m-1042, scrolled to 480; message: read to 35 %

        """

    static let relaunch = """
        == Launch 2: relaunch: a new Application and Window on the same database
          tabs: awakeFromNib
          mail: awakeFromNib
          inbox: awakeFromNib
          message: awakeFromNib
          inbox: willMove(toParent: mail)
          message: willMove(toParent: mail)
          inbox: didMove(toParent: mail)
          message: didMove(toParent: mail)
          settings: awakeFromNib
          mail: willMove(toParent: tabs)
          settings: willMove(toParent: tabs)
          mail: didMove(toParent: tabs)
          settings: didMove(toParent: tabs)
          tabs: loadView
          tabs: viewDidLoad
          tabs: viewWillAppear(animated: false)
          mail: loadView
          mail: viewDidLoad
          mail: viewWillAppear(animated: false)
          message: loadView
          message: viewDidLoad
          message: viewWillAppear(animated: false)
          tabs: viewWillLayoutSubviews
          tabs: viewDidLayoutSubviews
          mail: viewWillLayoutSubviews
          mail: viewDidLayoutSubviews
          message: viewWillLayoutSubviews
          message: viewDidLayoutSubviews
          tabs: viewDidAppear(animated: false)
          mail: viewDidAppear(animated: false)
          message: viewDidAppear(animated: false)
          compose: awakeFromNib
          compose: loadView
          compose: viewDidLoad
          tabs: viewWillDisappear(animated: false)
          mail: viewWillDisappear(animated: false)
          message: viewWillDisappear(animated: false)
          compose: viewWillAppear(animated: false)
          compose: viewWillLayoutSubviews
          compose: viewDidLayoutSubviews
          tabs: viewDidDisappear(animated: false)
          mail: viewDidDisappear(animated: false)
          message: viewDidDisappear(animated: false)
          compose: viewDidAppear(animated: false)
          restoreHierarchy(in:) → true
          tabs/mail/inbox: not shown yet; restores on its first viewWillAppear
          tabs/mail/message: message m-1042, read to 35 %
          tabs/compose: draft to "ada@example.com", subject "Re: Status report #3", body "Thanks, Ada. The numbers look right; let's ship on Friday."
        == Launch 2: terminate
          compose: viewWillDisappear(animated: false)
          compose: viewDidDisappear(animated: false)

        """

    static let tree = """
        main (landscapeLeft)
        └─ tabs [TabBarController] selected: mail
           ├─ mail [NavigationController]
           │  ├─ inbox
           │  └─ message
           └─ settings
           ⤷ presents compose

        """

    /// `SELECT count(*) FROM states` through the sqlite3 CLI.
    static func sqliteCount(_ db: String) throws -> Int? {
        Int(
            try CLI.tool("sqlite3", [db, "SELECT count(*) FROM states"]).trimmingCharacters(in: .whitespacesAndNewlines)
        )
    }

    /// `"count"` of `inspect --json`.
    static func inspectCount(_ db: String) throws -> Int? {
        let result = try CLI.run(["inspect", "--db", db, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return object?["count"] as? Int
    }

    @Test func demoSavesRelaunchesAndRestores() throws {
        let folder = TemporaryFolder()
        let db = folder.file("demo.sqlite")
        let clock = ContinuousClock()
        let start = clock.now
        let result = try CLI.run(["demo", "--db", db])
        let elapsed = clock.now - start
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        // A guard against a demo that waits on a timer or hangs, not a speed target: a debug
        // build with the whole suite running beside it.
        #expect(elapsed < .seconds(30), "demo took \(elapsed)")

        let out = result.stdout
        #expect(out.hasPrefix("== Launch 1: open the inbox\n  tabs: awakeFromNib\n"), "\(result)")
        #expect(out.contains("  a fresh database: nothing to restore, built tabs → mail (inbox) + settings\n"))
        #expect(out.contains(Self.push), "\(result)")
        #expect(out.contains("  rotate(to: landscapeLeft) → true, window is now 844×390\n"))
        #expect(
            out.contains("  rotate(to: portraitUpsideDown) → false: compose supports portrait and landscape only\n"))
        #expect(out.contains("  compose: didReceiveMemoryWarning(level: critical)\n"))
        #expect(out.contains("== Launch 1: memory warning (critical)\n"))
        #expect(out.contains(Self.relaunch), "\(result)")
        #expect(out.contains("\n== statectl inspect --db \(db)\nPATH "))
        #expect(out.contains("\n3 states, "))
        #expect(out.hasSuffix("== statectl inspect --hierarchy --db \(db)\n" + Self.tree), "\(result)")

        // The sqlite3 CLI reads what the demo left, and agrees with inspect.
        #expect(try Self.sqliteCount(db) == 3)
        #expect(try Self.inspectCount(db) == 3)
        let draft = try CLI.tool(
            "sqlite3", [db, "SELECT json_extract(bytes, '$.subject') FROM states WHERE path = 'tabs/compose'"])
        #expect(draft == "Re: Status report #3\n")
        let events = try CLI.run(["inspect", "--db", db, "--events", "--json"])
        #expect(
            events.stdout.contains(#""level": "warning""#) && events.stdout.contains(#""level": "critical""#),
            "\(events)")
    }

    @Test func demoTwiceContinuesThePreviousSession() throws {
        let folder = TemporaryFolder()
        let db = folder.file("demo.sqlite")
        #expect(try CLI.run(["demo", "--db", db]).status == 0)
        let second = try CLI.run(["demo", "--db", db])
        #expect(second.status == 0, "\(second)")
        #expect(second.stderr.isEmpty, "\(second)")
        #expect(
            second.stdout.contains("  restoreHierarchy(in:) → true: continuing the session a previous run left\n"),
            "\(second)")
        #expect(
            second.stdout.contains(
                """
                == Launch 1: back to the inbox to replay the script
                """))
        #expect(second.stdout.contains("  tabs/mail/inbox: selected m-1042, scrolled to 480\n"), "\(second)")
        #expect(second.stdout.contains(Self.relaunch), "\(second)")
        #expect(second.stdout.hasSuffix(Self.tree))
        #expect(try Self.sqliteCount(db) == 3)
        #expect(try Self.inspectCount(db) == 3)
    }

    @Test func demoJSON() throws {
        let folder = TemporaryFolder()
        let db = folder.file("demo.sqlite")
        let result = try CLI.run(["demo", "--db", db, "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["schema"] as? Int == 1)
        #expect(object["kind"] as? String == "demo")
        #expect(object["continued"] as? Bool == false)
        let draft = try #require(object["restored_draft"] as? [String: String])
        #expect(
            draft == [
                "to": "ada@example.com", "subject": "Re: Status report #3",
                "body": "Thanks, Ada. The numbers look right; let's ship on Friday.",
            ])
        #expect((object["entries"] as? [Any])?.count == 3)
        let steps = try #require(object["steps"] as? [[String: Any]])
        #expect(steps.first?["title"] as? String == "open the inbox")
        #expect(
            steps.contains { ($0["trace"] as? [String])?.contains("message: viewWillAppear(animated: true)") == true })
    }

    @Test func demoUsesTheDefaultDatabaseWithoutDB() throws {
        let folder = TemporaryFolder()
        let result = try CLI.run(["demo"], home: folder.path)
        #expect(result.status == 0, "\(result)")
        let db = folder.file("statestore-demo/state.sqlite")
        #expect(FileManager.default.fileExists(atPath: db))
        #expect(result.stdout.contains("== statectl inspect --db \(db)\n"))
    }

    @Test func inspectHierarchyOfTheDemoDatabase() throws {
        let folder = TemporaryFolder()
        let db = folder.file("demo.sqlite")
        #expect(try CLI.run(["demo", "--db", db]).status == 0)

        let tree = try CLI.run(["inspect", "--db", db, "--hierarchy"])
        #expect(tree.status == 0, "\(tree)")
        #expect(tree.stdout == Self.tree, "\(tree)")

        let json = try CLI.run(["inspect", "--db", db, "--hierarchy", "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(
            json.stdout.hasPrefix(
                """
                {
                  "schema": 1,
                  "kind": "hierarchy",
                  "scene": "main",
                  "set_aside": false,
                  "found": true,
                """), "\(json)")
        #expect(
            json.stdout.contains(
                """
                  "readable": true,
                  "archive": {
                    "format": 2,
                    "orientation": "landscapeLeft",
                    "root": {
                      "storyboardIdentifier": "tabs",
                """), "\(json)")
        #expect(json.stdout.contains(#""selectedIndex": 0,"#))

        // The crash-loop guard's set-aside archive stays viewable.
        let store = try StateStore(path: db)
        #expect(try store.setHierarchyArchiveAside(scene: "main"))
        _ = consume store
        let live = try CLI.run(["inspect", "--db", db, "--hierarchy"])
        #expect(live.stdout == "No hierarchy archive for scene \"main\".\n", "\(live)")
        let setAside = try CLI.run(["inspect", "--db", db, "--hierarchy", "--set-aside"])
        #expect(setAside.status == 0, "\(setAside)")
        #expect(
            setAside.stdout
                == Self.tree.replacingOccurrences(
                    of: "main (landscapeLeft)", with: "main (landscapeLeft), set aside: not restored at the last launch"
                ), "\(setAside)")
    }
}
