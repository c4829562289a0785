import Foundation
import MailExample
import StateStoreSQLite
import Testing

@testable import StateStore

/// Two instances of an app on one database, each in a real process: a scene belongs to the
/// live process that shows it, a second instance gets a scene of its own, and the drafts of
/// both come back after both are killed.
@Suite("Scenes claimed by the live process that shows them", .hangGuard(minutes: 10))
struct SceneClaimTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("mail.sqlite") }

    /// The draft body saved at `path`, read as a new process reads it.
    func draft(at path: RestorationPath) throws -> String? {
        let store = try StateStore(path: database, options: .init(readOnly: true))
        return try store.restore(ComposeController.Draft.self, for: path)?.body
    }

    @Test func twoInstancesKeepTheirOwnDraftsThroughKill9AndTwoRelaunches() throws {
        let first = try AppInstance(["scene-session", database, "DRAFT-FROM-A"])
        #expect(first.firstLine.hasPrefix("ready "))
        #expect(first.fields["scene"] == "main")
        #expect(first.fields["outcome"] == "claimed")
        #expect(first.fields["passed"] == "-")
        let second = try AppInstance(["scene-session", database, "DRAFT-FROM-B"])
        #expect(second.fields["scene"] == "window1")
        #expect(second.fields["outcome"] == "claimed")
        // It passed over the first instance's scene, and says whose it is.
        #expect(second.fields["passed"] == "main@\(first.pid)")
        #expect(second.fields["restored"] == "false")
        // Each draft under its own scene's paths: neither overwrote the other.
        #expect(try draft(at: "tabs/compose") == "DRAFT-FROM-A")
        #expect(try draft(at: "window1/tabs/compose") == "DRAFT-FROM-B")

        #expect(first.end(with: SIGKILL) == SIGKILL)
        #expect(second.end(with: SIGKILL) == SIGKILL)
        // The kernel dropped both claims with the processes: nothing stale blocks a relaunch.
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.sceneHolders() == [])

        // Relaunched twice (two terminals again): the first gets the scene it showed, the second
        // the other saved scene before any new one.
        let again = try AppInstance(["scene-report", database, "another", "hold"])
        #expect(again.fields["scene"] == "main")
        #expect(again.fields["restored"] == "true")
        #expect(again.fields["draft"] == "DRAFT-FROM-A")
        #expect(again.nextLine() == "holding")
        let secondAgain = try AppInstance(["scene-report", database])
        #expect(secondAgain.fields["scene"] == "window1")
        #expect(secondAgain.fields["restored"] == "true")
        #expect(secondAgain.fields["draft"] == "DRAFT-FROM-B")
        #expect(secondAgain.fields["passed"] == "main@\(again.pid)")
        #expect(
            secondAgain.nextLine()?.hasPrefix("error=The scene \"main\" is held by process \(again.pid) since ") == true
        )
        #expect(secondAgain.exitStatus() == 0)
        // SIGTERM: the holder saves what is visible and exits through the handlers.
        #expect(again.end(with: SIGTERM) == 128 + SIGTERM)
        #expect(try draft(at: "tabs/compose") == "DRAFT-FROM-A")
        #expect(try draft(at: "window1/tabs/compose") == "DRAFT-FROM-B")
    }

    @Test func interleavedSavesKillsAndRelaunchesKeepEachInstancesLastDraft() throws {
        var left = try AppInstance(["scene-session", database, "L0"])
        var right = try AppInstance(["scene-session", database, "R0"])
        #expect(right.fields["scene"] == "window1")
        for round in 1...3 {
            try left.save("L\(round)a")
            try right.save("R\(round)a")
            try left.save("L\(round)b")
            // One killed and relaunched while the other goes on saving: it takes its own scene
            // back, never the other's.
            if round % 2 == 1 {
                left.end()
                try right.save("R\(round)b")
                left = try AppInstance(["scene-session", database, "unused"])
                #expect(left.fields["scene"] == "main")
                #expect(left.fields["restored"] == "true")
            } else {
                right.end()
                try left.save("L\(round)c")
                right = try AppInstance(["scene-session", database, "unused"])
                #expect(right.fields["scene"] == "window1")
                #expect(right.fields["passed"] == "main@\(left.pid)")
            }
            #expect(try draft(at: "tabs/compose") == (round % 2 == 1 ? "L\(round)b" : "L\(round)c"))
            #expect(try draft(at: "window1/tabs/compose") == (round % 2 == 1 ? "R\(round)b" : "R\(round)a"))
        }
        left.end()
        right.end()
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(
            try store.entries().map(\.path.rawValue).filter { $0.hasSuffix("compose") } == [
                "tabs/compose", "window1/tabs/compose",
            ])
        #expect(try store.savedSceneIdentifiers() == ["main", "window1"])
    }

    @Test func statectlShowsEachScenesClaimAndTheScenesNoWindowTook() throws {
        let first = try AppInstance(["scene-session", database, "one"])
        let second = try AppInstance(["scene-session", database, "two"])
        second.end()
        let json = try CLI.run(["inspect", "--db", database, "--scenes", "--json"])
        #expect(json.status == 0, "\(json)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(document["kind"] as? String == "scenes")
        let scenes = try #require(document["scenes"] as? [[String: Any]])
        #expect(scenes.map { $0["scene"] as? String } == ["main", "window1"])
        let claim = try #require(scenes[0]["claim"] as? [String: Any])
        #expect(claim["pid"] as? Int == Int(first.pid))
        let since = try #require(claim["since"] as? String)
        #expect(since.hasSuffix("Z"))
        #expect(scenes[1]["claim"] is NSNull)
        #expect(scenes[0]["path_prefix"] as? String == "")
        #expect(scenes[1]["path_prefix"] as? String == "window1")

        let text = try CLI.run(["inspect", "--db", database, "--scenes"])
        #expect(text.status == 0, "\(text)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(text)")
        #expect(lines[0].hasPrefix("SCENE"))
        #expect(lines[1].hasPrefix("main ") && lines[1].contains("process \(first.pid) since "))
        #expect(lines[2].hasPrefix("window1 ") && lines[2].hasSuffix("unclaimed"))
        #expect(lines[3] == "2 scenes, 1 claimed by a live process, in \(database)")
        first.end()
        let after = try CLI.run(["inspect", "--db", database, "--scenes"])
        #expect(after.stdout.contains("2 scenes, 0 claimed by a live process"), "\(after)")
    }

    @Test func aReadOnlyWindowShowsTheHeldSceneAndWritesNothing() throws {
        let holder = try AppInstance(["scene-session", database, "HELD-DRAFT"])
        #expect(holder.fields["scene"] == "main")
        let before = try CLI.dump(database)
        let reader = try AppInstance(["scene-report", database, "read-only"])
        #expect(reader.fields["scene"] == "main")
        #expect(reader.fields["outcome"] == "read-only")
        #expect(reader.fields["restored"] == "true")
        #expect(reader.fields["draft"] == "HELD-DRAFT")
        // It terminated: a flush point, which wrote nothing of the held scene.
        #expect(reader.exitStatus() == 0)
        #expect(try CLI.dump(database) == before)
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.sceneHolder(of: "main")?.processIdentifier == holder.pid)
    }

    @Test func aWindowThatWaitsGetsTheSceneOnceItsHolderTerminates() throws {
        let holder = try AppInstance(["scene-session", database, "FINAL-DRAFT"])
        // Started before the holder goes; it logs once it has found the scene held, then waits
        // (up to 60 s) for the claim.
        let waiter = try AppInstance(["scene-report", database, "wait:60000"])
        #expect(waiter.firstLine.contains("waiting for a held scene"), "\(waiter.firstLine)")
        #expect(waiter.firstLine.contains("statestore.scene=main"))
        #expect(holder.end(with: SIGTERM) == 128 + SIGTERM)
        var line = ""
        while let next = waiter.nextLine() {
            line = next
            if next.hasPrefix("scene=") { break }
        }
        #expect(waiter.exitStatus() == 0)
        let fields = AppInstance.fields(line)
        #expect(fields["scene"] == "main", "\(line)")
        #expect(fields["outcome"] == "claimed")
        #expect(fields["passed"] == "-")
        #expect(Int(fields["waited_ms"] ?? "") ?? 0 > 0)
        // What the holder's last flush left, as it left it.
        #expect(fields["draft"] == "FINAL-DRAFT")
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.sceneHolders() == [])
    }

    @Test func aWindowThatWaitsInVainGetsAnotherScene() throws {
        let holder = try AppInstance(["scene-session", database, "KEPT"])
        let waiter = try AppInstance(["scene-report", database, "wait:300"])
        #expect(waiter.firstLine.contains("waiting for a held scene"))
        var line = ""
        while let next = waiter.nextLine() {
            line = next
            if next.hasPrefix("scene=") { break }
        }
        let fields = AppInstance.fields(line)
        #expect(fields["scene"] == "window1")
        #expect(fields["passed"] == "main@\(holder.pid)")
        #expect(Int(fields["waited_ms"] ?? "") ?? 0 >= 300)
        #expect(fields["draft"] == "none")
        #expect(waiter.exitStatus() == 0)
        #expect(try draft(at: "tabs/compose") == "KEPT")
    }

    @Test func sigtermInOneInstanceFlushesItsOwnSceneAndLeavesTheOther() throws {
        let first = try AppInstance(["scene-session", database, "FIRST"])
        let second = try AppInstance(["scene-session", database, "SECOND"])
        let rowsOfSecond =
            "SELECT path, hex(bytes), generation, updated_at FROM states WHERE path LIKE 'window1/%' ORDER BY path"
        let before = try CLI.tool("sqlite3", [database, rowsOfSecond])
        #expect(!before.isEmpty)
        #expect(first.end(with: SIGTERM) == 128 + SIGTERM)
        #expect(try CLI.tool("sqlite3", [database, rowsOfSecond]) == before)
        // The second still holds its scene, and saves on.
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.sceneHolder(of: "window1")?.processIdentifier == second.pid)
        #expect(try store.sceneHolder(of: "main") == nil)
        #expect(second.end(with: SIGTERM) == 128 + SIGTERM)
        #expect(try draft(at: "window1/tabs/compose") == "SECOND")
        #expect(try draft(at: "tabs/compose") == "FIRST")
    }

    // MARK: Right after a kill -9

    /// The kernel drops a killed process's claim only once it has torn the process down: a
    /// relaunch in that moment waits for it, and gets the killed instance's scene back. The
    /// killed holder keeps its claim 400 ms past its death (`linger:400`), and is not reaped
    /// meanwhile (a zombie, as a process whose parent has not waited for it yet), so the
    /// moment is long enough to be seen every time.
    @Test func aRelaunchRightAfterKill9WaitsForTheKilledInstancesClaim() throws {
        let first = try AppInstance(["scene-session", database, "DRAFT-OF-THE-KILLED"])
        #expect(first.fields["scene"] == "main")
        #expect(first.end(with: SIGKILL) == SIGKILL)
        let holder = try SpawnedInstance(["scene-report", database, "hold", "linger:400"])
        #expect(holder.firstLine.hasPrefix("scene=main "), "\(holder.firstLine)")
        #expect(holder.nextLine() == "holding")
        // Alive, it is no dying holder: a second instance beside it is not kept waiting.
        #expect(HolderExit.state(of: holder.pid) == .running)
        let killed = ContinuousClock.now
        #expect(kill(holder.pid, SIGKILL) == 0)
        // SIGKILL pending, exiting, or a zombie: dying, until its parent reaps it.
        #expect(HolderExit.state(of: holder.pid) == .exiting)
        let again = try AppInstance(["scene-report", database])
        let waited = ContinuousClock.now - killed
        #expect(again.fields["scene"] == "main", "\(again.firstLine)")
        #expect(again.fields["passed"] == "-")
        #expect(again.fields["restored"] == "true")
        #expect(again.fields["draft"] == "DRAFT-OF-THE-KILLED")
        #expect(again.exitStatus() == 0)
        #expect(waited >= .milliseconds(400), "\(waited)")
        #expect(HolderExit.state(of: holder.pid) == .exiting)
        #expect(holder.reap() == SIGKILL)
        #expect(HolderExit.state(of: holder.pid) == .gone)
    }

    /// The same, as the kernel leaves it: a holder with a gigabyte of memory written to takes
    /// the kernel tens to hundreds of milliseconds to tear down after the kill, and the
    /// relaunch starts at once.
    @Test func aRelaunchRacingTheKilledInstancesTeardownGetsItsScene() throws {
        let first = try AppInstance(["scene-session", database, "RACED"])
        #expect(first.end(with: SIGKILL) == SIGKILL)
        for round in 1...3 {
            let holder = try AppInstance(["scene-report", database, "hold", "ballast:1024"])
            #expect(holder.fields["scene"] == "main", "round \(round): \(holder.firstLine)")
            #expect(holder.nextLine() == "holding")
            kill(holder.pid, SIGKILL)
            let again = try AppInstance(["scene-report", database])
            #expect(again.fields["scene"] == "main", "round \(round): \(again.firstLine)")
            #expect(again.fields["draft"] == "RACED", "round \(round)")
            #expect(again.exitStatus() == 0)
            #expect(holder.end() == SIGKILL)
        }
    }

    @Test func aDyingHolderIsToldFromALiveOneByProc() {
        let stat = "4242 (statestore-work) R 1 4242 4242 0 -1 4194368 19 0 0 0 0 0 0 0 20 0 3 0 1 0 0"
        let running = "Name:\tstatestore-work\nSigQ:\t0/95368\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
        #expect(!HolderExit.isExiting(stat: stat, status: running))
        #expect(!HolderExit.isExiting(stat: stat, status: nil))
        // SIGKILL (9) pending, for the thread or its group: bit 8.
        #expect(
            HolderExit.isExiting(
                stat: stat,
                status: running.replacingOccurrences(of: "SigPnd:\t0000000000000000", with: "SigPnd:\t0000000000000100")
            ))
        #expect(
            HolderExit.isExiting(
                stat: stat,
                status: running.replacingOccurrences(of: "ShdPnd:\t0000000000000000", with: "ShdPnd:\t0000000000004100")
            ))
        // SIGTERM (15) pending is no death yet: its handler may save and go on.
        #expect(
            !HolderExit.isExiting(
                stat: stat,
                status: running.replacingOccurrences(of: "ShdPnd:\t0000000000000000", with: "ShdPnd:\t0000000000004000")
            ))
        // PF_EXITING (0x4) in the flags, field 9.
        #expect(HolderExit.isExiting(stat: stat.replacingOccurrences(of: "4194368", with: "4194372"), status: running))
        // A zombie, or dead; a command name with a parenthesis and spaces is read past.
        #expect(HolderExit.isExiting(stat: "4242 (a) b) Z 1 4242 4242 0 -1 4194368", status: nil))
        #expect(HolderExit.isExiting(stat: "4242 (x) X 1 4242 4242 0 -1 0", status: nil))
        #expect(!HolderExit.isExiting(stat: "4242 (a) Z b) S 1 4242 4242 0 -1 4194368", status: nil))
        // This process, and one that is gone.
        #expect(HolderExit.state(of: getpid()) == .running)
        #expect(HolderExit.state(of: Int32.max) == .gone)
    }

    // MARK: In this process, beside another

    /// The mail storyboard's app in this process, with its errors collected.
    @MainActor
    final class LocalApp {
        let application: Application
        var errors: [RestorationError] = []
        init(store: StateStore) {
            application = Application(store: store, storyboard: MailStoryboard.make())
            application.violationHandler = { Issue.record("lifecycle violation: \($0)") }
            application.restorationCoordinator?.errorHandler = { [weak self] in self?.errors.append($0) }
        }
    }

    @MainActor
    @Test func theCrashLoopGuardCountsPerScene() throws {
        let first = try AppInstance(["scene-session", database, "A"])
        let second = try AppInstance(["scene-session", database, "B"])
        second.end()
        // Two launches died while restoring window1; main's count is its own.
        let store = try StateStore(path: database)
        try store.setMetadata(CrashLoopGuard.attemptsKey + ".window1", to: "2")
        let app = LocalApp(store: store)
        let window = Window(size: Size(width: 390, height: 844), application: app.application)
        #expect(window.sceneIdentifier == "window1")
        let report = try app.application.restoreHierarchyWithReport(in: window)
        #expect(report.outcome == .crashLoopSkipped(interruptedAttempts: 2))
        #expect(try store.hierarchyArchive(scene: "window1", setAside: true) != nil)
        // main's archive, which the other instance shows, is untouched.
        #expect(try store.hierarchyArchive(scene: "main") != nil)
        #expect(try store.metadata(CrashLoopGuard.attemptsKey + ".main") == nil)
        app.application.terminate()
        first.end()
    }

    @MainActor
    @Test func aWindowGivenAHeldIdentifierGetsANewSceneAndIsToldWhy() throws {
        let holder = try AppInstance(["scene-session", database, "HELD"])
        let store = try StateStore(path: database)
        let app = LocalApp(store: store)
        let window = Window(size: Size(width: 390, height: 844), sceneIdentifier: "main", application: app.application)
        #expect(window.sceneIdentifier == "window1")
        let assignment = try #require(window.sceneAssignment)
        #expect(assignment.requested == "main")
        #expect(assignment.outcome == .claimed)
        #expect(assignment.passedOver?.scene == "main")
        #expect(assignment.passedOver?.processIdentifier == holder.pid)
        #expect(assignment.passedOver?.isThisProcess == false)
        #expect(app.errors == [.sceneHeld(assignment)])
        #expect(try app.application.restoreHierarchy(in: window) == false)
        // The held scene is not offered to this process's windows.
        #expect(try app.application.savedSceneIdentifiers() == [])
        #expect(try store.savedSceneIdentifiers() == ["main"])
        // Closing the window lets its scene go once the close is written.
        window.close()
        app.application.saveVisibleState()
        #expect(try store.sceneHolder(of: "window1") == nil)
        app.application.terminate()
        holder.end()
    }

    @MainActor
    @Test func windowsOfOneProcessShareItsClaim() throws {
        let store = try StateStore(path: database)
        let app = LocalApp(store: store)
        let first = Window(size: Size(width: 390, height: 844), application: app.application)
        let again = Window(size: Size(width: 390, height: 844), sceneIdentifier: "main", application: app.application)
        #expect(first.sceneIdentifier == "main")
        #expect(again.sceneIdentifier == "main")
        #expect(again.sceneAssignment?.outcome == .claimed)
        #expect(app.errors.isEmpty)
        let holder = try #require(try store.sceneHolder(of: "main"))
        #expect(holder.isThisProcess)
        #expect(holder.processIdentifier == getpid())
        // A process that looks sees this one hold it.
        let inspect = try CLI.run(["inspect", "--db", database, "--scenes", "--json"])
        #expect(
            inspect.stdout.contains("\"pid\" : \(getpid())") || inspect.stdout.contains("\"pid\": \(getpid())"),
            "\(inspect)")
        // One window closing keeps the claim the other shares.
        again.close()
        app.application.saveVisibleState()
        #expect(try store.sceneHolder(of: "main") != nil)
        app.application.terminate()
        #expect(try store.sceneHolder(of: "main") == nil)
    }

    @MainActor
    @Test func aClosedWindowKeepsItsClaimWhileItsWritesWaitForARetry() throws {
        let store = try StateStore(path: database, options: .init(busyTimeout: .milliseconds(100)))
        let app = LocalApp(store: store)
        let window = Window(size: Size(width: 390, height: 844), application: app.application)
        let mail = try #require(
            try app.application.storyboard.instantiateViewController(withIdentifier: MailStoryboard.mail)
                as? NavigationController)
        let inbox = try #require(
            try app.application.storyboard.instantiateViewController(withIdentifier: MailStoryboard.inbox)
                as? InboxController)
        mail.setViewControllers([inbox], animated: false)
        window.rootViewController = mail
        window.makeKeyAndVisible()
        app.application.saveVisibleState()
        // Another connection holds the write lock: the close's writes fail for a reason that may
        // pass, and wait for a retry.
        beforeRawSQLite()
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        inbox.select(MailMessage.mailbox[3])
        window.close()
        app.application.saveVisibleState()
        #expect(app.application.restorationCoordinator?.hasUnsavedWrites == true)
        // Until they are written, no other process may take the scene and read what they replace.
        #expect(try store.sceneHolder(of: "main")?.isThisProcess == true)
        try #require(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        app.application.saveVisibleState()
        #expect(app.application.restorationCoordinator?.hasUnsavedWrites == false)
        // Let go by the writer's thread once they are written: waited for (it was seen still
        // held right after the flush point, once in eight runs of the suite).
        let deadline = ContinuousClock.now + .seconds(30)
        while try store.sceneHolder(of: "main") != nil, ContinuousClock.now < deadline { usleep(1_000) }
        #expect(try store.sceneHolder(of: "main") == nil)
        #expect(
            try store.restore(InboxController.State.self, for: "mail/inbox")?.selectedMessageID
                == MailMessage.mailbox[3].id)
        app.application.terminate()
    }

    @Test func aSecondInstanceNeverShowsAHeldSceneWhenAnotherClaimFileIsBroken() throws {
        let holder = try AppInstance(["scene-session", database, "HELD"])
        let store = try StateStore(path: database, options: .init(readOnly: true))
        let folder = try #require(store.sceneClaimFolder)
        // A folder where window1's claim file goes: it cannot be claimed, and is passed over.
        try FileManager.default.createDirectory(atPath: folder + "/window1.lock", withIntermediateDirectories: false)
        let second = try AppInstance(["scene-session", database, "SECOND"])
        #expect(second.fields["scene"] == "window2", "\(second.firstLine)")
        #expect(second.fields["outcome"] == "claimed")
        #expect(second.fields["passed"] == "main@\(holder.pid)")
        #expect(try draft(at: "tabs/compose") == "HELD")
        #expect(try draft(at: "window2/tabs/compose") == "SECOND")
        // A FIFO and a link among the claim files hold nothing, and statectl lists the rest.
        #expect(mkfifo(folder + "/fifo.lock", 0o600) == 0)
        #expect(symlink("/etc/passwd", folder + "/link.lock") == 0)
        let inspect = try CLI.run(["inspect", "--db", database, "--scenes"])
        #expect(inspect.status == 0, "\(inspect)")
        #expect(inspect.stdout.contains("2 scenes, 2 claimed by a live process"), "\(inspect)")
        #expect(try store.sceneHolder(of: "fifo") == nil)
        second.end()
        holder.end()
    }

    @Test func aSceneIdentifierWithANewlineCannotForgeItsRecord() throws {
        let store = try StateStore(path: database)
        let scene = "evil\npid=1\nsince=0"
        guard case .claimed(let claim)? = try store.claimScene(scene) else {
            Issue.record("not claimed")
            return
        }
        let text = try String(
            contentsOfFile: try #require(store.sceneClaimFolder) + "/" + SceneClaims.fileName(for: scene),
            encoding: .utf8)
        #expect(text.split(separator: "\n").count == 3, "\(text)")
        #expect(text.contains("pid=\(getpid())\n"))
        let holders = try store.sceneHolders()
        #expect(holders.map(\.scene) == [scene])
        #expect(holders.first?.processIdentifier == getpid())
        withExtendedLifetime(claim) {}
    }

    @MainActor
    @Test func aReadOnlyWindowLeavesAClaimedWindowOfTheSameSceneSaving() throws {
        let holder = try AppInstance(["scene-session", database, "HELD"])
        let store = try StateStore(path: database)
        let app = LocalApp(store: store)
        let reader = Window(size: Size(width: 390, height: 844), whenHeld: .openReadOnly, application: app.application)
        let held = try #require(try store.sceneHolder(of: "main"))
        #expect(reader.sceneAssignment?.outcome == .readOnly(heldBy: held))
        #expect(try app.application.restoreHierarchy(in: reader))
        #expect(
            (reader.rootViewController?.presentedViewController as? ComposeController)?.restorableState.body == "HELD")
        // The holder goes; the app opens the scene again, and this time claims it.
        #expect(holder.end(with: SIGTERM) == 128 + SIGTERM)
        let owner = Window(size: Size(width: 390, height: 844), sceneIdentifier: "main", application: app.application)
        #expect(owner.sceneAssignment?.outcome == .claimed)
        #expect(try app.application.restoreHierarchy(in: owner))
        let compose = try #require(owner.rootViewController?.presentedViewController as? ComposeController)
        compose.type(to: compose.restorableState.to, subject: compose.restorableState.subject, body: "FROM-OWNER")
        app.application.saveVisibleState()
        #expect(try draft(at: "tabs/compose") == "FROM-OWNER")
        app.application.terminate()
    }

    @MainActor
    @Test func aWindowLetGoWithoutTerminatingReleasesItsClaim() async throws {
        let store = try StateStore(path: database)
        do {
            let app = LocalApp(store: store)
            _ = Window(size: Size(width: 390, height: 844), application: app.application)
            #expect(try store.sceneHolder(of: "main") != nil)
        }
        // Let go at the main actor's next turn, after what the coordinator held is handed over.
        let deadline = ContinuousClock.now + .seconds(30)
        while try store.sceneHolder(of: "main") != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try store.sceneHolder(of: "main") == nil)
    }

    @MainActor
    @Test func aClaimThatCannotBeMadeLeavesTheSceneUnclaimedReportedAndTheFileAlone() throws {
        let store = try StateStore(path: database)
        // Something that is not a folder where the claim folder goes.
        let blocker = try #require(store.sceneClaimFolder)
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("not a folder".utf8)))
        let app = LocalApp(store: store)
        let window = Window(size: Size(width: 390, height: 844), application: app.application)
        #expect(window.sceneIdentifier == "main")
        guard case .notClaimed(let reason)? = window.sceneAssignment?.outcome else {
            Issue.record("the window's scene was claimed: \(String(describing: window.sceneAssignment))")
            return
        }
        #expect(reason.contains(blocker), "\(reason)")
        #expect(app.errors.count == 1)
        guard case .store(.fileSystem(let failure))? = app.errors.first else {
            Issue.record("not a file-system failure: \(app.errors)")
            return
        }
        #expect(failure.errno == ENOTDIR)
        // The app goes on, saving as before, and the file in the way is untouched.
        #expect(try app.application.restoreHierarchy(in: window) == false)
        app.application.terminate()
        #expect(FileManager.default.contents(atPath: blocker) == Data("not a folder".utf8))
    }

    @MainActor
    @Test func aSceneWhoseClaimFileIsAFolderIsPassedOverAndSaid() throws {
        let store = try StateStore(path: database)
        let folder = try #require(store.sceneClaimFolder)
        try FileManager.default.createDirectory(atPath: folder + "/main.lock", withIntermediateDirectories: true)
        let app = LocalApp(store: store)
        let window = Window(size: Size(width: 390, height: 844), application: app.application)
        // Not main: no process can be shown not to hold it, so it is not shown writable.
        #expect(window.sceneIdentifier == "window1")
        #expect(window.sceneAssignment?.outcome == .claimed)
        #expect(window.sceneAssignment?.passedOver == nil)
        guard case .store(.fileSystem(let failure))? = app.errors.first else {
            Issue.record("not reported: \(app.errors)")
            return
        }
        #expect(failure.path == folder + "/main.lock")
        app.application.terminate()
    }

    @Test func aClaimFileWithAnUnreadableRecordStillHoldsTheScene() throws {
        let holder = try AppInstance(["scene-session", database, "HELD"])
        let store = try StateStore(path: database, options: .init(readOnly: true))
        let file = try #require(store.sceneClaimFolder) + "/main.lock"
        // Its record overwritten with bytes no claim writes: the lock, not the record, is the claim.
        // Written in place (not replaced: the lock is on the file the holder opened).
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data([0xFF, 0x00, 0x0A]) + Data("pid=-7\nsince=x\n".utf8))
        try handle.close()
        let found = try #require(try store.sceneHolder(of: "main"))
        #expect(found.processIdentifier == nil)
        #expect(found.since == nil)
        #expect(found.description == "a process")
        let second = try AppInstance(["scene-report", database])
        #expect(second.fields["scene"] == "window1")
        #expect(second.fields["passed"] == "main@?")
        #expect(second.exitStatus() == 0)
        let inspect = try CLI.run(["inspect", "--db", database, "--scenes"])
        #expect(
            inspect.stdout.split(separator: "\n").first { $0.hasPrefix("main ") }?.hasSuffix("a process") == true,
            "\(inspect)")
        holder.end()
        #expect(try store.sceneHolder(of: "main") == nil)
    }

    @Test func claimFileNamesAreSafeAndDistinctForAnyIdentifier() {
        let identifiers = [
            "main", "window1", "", ".", "..", "../x", "a/b", "com.example.main", "é", "e\u{301}", "%41", "A",
            String(repeating: "x", count: 300), String(repeating: "x", count: 299) + "y",
        ]
        let names = identifiers.map(SceneClaims.fileName(for:))
        #expect(Set(names).count == identifiers.count, "\(names)")
        for name in names {
            #expect(!name.contains("/"))
            #expect(!name.hasPrefix(".") || name == ".lock")
            #expect(name.utf8.count <= 255)
            #expect(name.hasSuffix(".lock"))
        }
        #expect(SceneClaims.fileName(for: "com.example.main") == "com.example.main.lock")
    }

    @Test func anOldDatabasesPositionalScenesShareTheDefaultScenesClaim() throws {
        // Schema 2, as an older build left it: two positional scenes saving under the same
        // unprefixed paths, the second window with a reply open.
        try makeSchema2Database(
            database,
            rows: """
                INSERT INTO hierarchy(scene, set_aside, archive, updated_at) VALUES
                  ('main', 0, CAST('{"format":1,"root":{"kind":"tabBar","storyboardIdentifier":"tabs","selectedIndex":0,"children":[{"kind":"navigation","storyboardIdentifier":"mail","children":[{"kind":"plain","storyboardIdentifier":"inbox","children":[]}]},{"kind":"plain","storyboardIdentifier":"settings","children":[]}]}}' AS BLOB), 1),
                  ('window1', 0, CAST('{"format":1,"root":{"kind":"tabBar","storyboardIdentifier":"tabs","selectedIndex":0,"children":[{"kind":"navigation","storyboardIdentifier":"mail","children":[{"kind":"plain","storyboardIdentifier":"inbox","children":[]}]},{"kind":"plain","storyboardIdentifier":"settings","children":[]}],"presented":{"kind":"plain","storyboardIdentifier":"compose","children":[]}}}' AS BLOB), 2);
                """)
        do {
            let store = try StateStore(path: database)
            let draft = try JSONDecoder().decode(
                ComposeController.Draft.self,
                from: Data(#"{"to":"ada@example.org","subject":"","body":"OLD-DRAFT"}"#.utf8))
            try store.save(draft, for: "tabs/compose")
        }
        let first = try AppInstance(["scene-report", database, "another", "hold"])
        #expect(first.fields["scene"] == "main")
        #expect(first.fields["draft"] == "none")
        // The positional window1 saves under the same paths as main: while main is held, so is
        // it, and a second instance gets a new scene of its own.
        let store = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try store.sceneHolder(of: "window1")?.processIdentifier == first.pid)
        let inspect = try CLI.run(["inspect", "--db", database, "--scenes"])
        let window1 = inspect.stdout.split(separator: "\n").first { $0.hasPrefix("window1 ") }
        #expect(
            window1?.contains("(no prefix)") == true && window1?.contains("process \(first.pid) since") == true,
            "\(inspect)")
        let second = try AppInstance(["scene-report", database])
        #expect(second.fields["scene"] == "window2")
        #expect(second.fields["passed"] == "main@\(first.pid)")
        #expect(second.fields["restored"] == "false")
        #expect(second.fields["draft"] == "none")
        #expect(second.exitStatus() == 0)
        first.end(with: SIGTERM)
        #expect(try store.scenePathPrefix(scene: "window1") == "")
        #expect(try draft(at: "tabs/compose") == "OLD-DRAFT")
        // Once main's holder is gone, a process that asks for window1 gets it, as before.
        let again = try AppInstance(["scene-report", database])
        #expect(again.fields["scene"] == "main")
        #expect(again.exitStatus() == 0)
    }
}

/// An instance started with `posix_spawn` and reaped only by ``reap()``: killed, it stays a
/// zombie until then (Foundation's `Process` reaps its child as soon as it ends).
final class SpawnedInstance {
    let pid: pid_t
    private let output: FileHandle
    /// The first line it printed.
    let firstLine: String
    private var reaped = false

    init(_ arguments: [String]) throws {
        let executable = try builtProduct("statestore-worker")
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else: a pipe another test opened for its own child would stay open in it.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
        }
        // No signal blocked or ignored, whatever the spawning thread blocks.
        let attributes = SpawnAttributes()
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes.value, argv, environ)
        close(ends[1])
        output = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        try #require(spawned == 0, "posix_spawn: \(spawned)")
        self.pid = pid
        firstLine = output.availableLine() ?? ""
    }

    /// The next line it prints, or `nil` at its end.
    func nextLine() -> String? { output.availableLine() }

    /// Waits for it to end; the signal that ended it, or its exit status plus 256.
    @discardableResult
    func reap() -> Int32 {
        guard !reaped else { return -1 }
        reaped = true
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7f != 0 ? status & 0x7f : 256 + (status >> 8) & 0xff
    }

    deinit {
        if !reaped {
            kill(pid, SIGKILL)
            reap()
        }
    }
}
