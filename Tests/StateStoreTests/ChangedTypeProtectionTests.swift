import Foundation
import StateStoreSQLite
import Testing

@testable import StateStore

/// The screen of an older build at `nav/detail`, whose state has a member the newer types drop.
@MainActor private final class OldDetail: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable {
        var text = ""
        var secret = ""
    }
    var restorableState = State()
}

/// A newer screen at the same path with an unrelated state type: the old state does not decode.
@MainActor private final class CounterDetail: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var count = 0 }
    var restorableState = State()
}

/// A newer screen at the same path whose state reads only part of the old one.
@MainActor private final class LossyDetail: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var text = "" }
    var restorableState = State()
}

/// A state of another type at a path: whatever happens around it (the quarantine refused by a
/// lock or a full disk, the old state still with the writer), the next save never replaces it
/// unless it was set aside first.
@MainActor
@Suite("Changed state types keep the stored state", .hangGuard(minutes: 10))
struct ChangedTypeProtectionTests {
    let folder = TemporaryFolder()
    var database: String { folder.file("state.sqlite") }

    struct Launched {
        let application: Application
        let window: Window
        let navigation: NavigationController
        let coordinator: RestorationCoordinator
        let errors: ErrorBox
    }

    final class ErrorBox { var errors: [RestorationError] = [] }

    func launch(_ store: StateStore, detail: @escaping @MainActor () -> ViewController) throws -> (Launched, Storyboard)
    {
        let storyboard = Storyboard()
        storyboard.register("root") { ViewController() }
        storyboard.register("other") { ViewController() }
        storyboard.register("detail", detail)
        let application = Application(store: store, storyboard: storyboard)
        let coordinator = try #require(application.restorationCoordinator)
        let box = ErrorBox()
        coordinator.errorHandler = { box.errors.append($0) }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let navigation = NavigationController(
            rootViewController: try storyboard.instantiateViewController(withIdentifier: "root"))
        navigation.restorationIdentifier = "nav"
        window.rootViewController = navigation
        window.makeKeyAndVisible()
        coordinator.flush()
        return (
            Launched(
                application: application, window: window, navigation: navigation, coordinator: coordinator, errors: box),
            storyboard
        )
    }

    func seed(_ json: String) throws {
        let store = try StateStore(path: database)
        try store.save(encoded: Data(json.utf8), encoding: .json, typeName: "Old.State", version: 1, for: "nav/detail")
    }

    /// Every stored byte at the path, in its row and in quarantine, read by another connection.
    func storedText() throws -> String {
        let store = try StateStore(path: database, options: .init(readOnly: true))
        var text = String(decoding: try store.state(at: "nav/detail")?.bytes ?? Data(), as: UTF8.self)
        for kept in try store.quarantinedStates() { text += String(decoding: kept.bytes, as: UTF8.self) }
        return text
    }

    @Test(arguments: [false, true])
    func aSetAsideRefusedByALockKeepsTheStateFromTheNextSave(lossy: Bool) throws {
        try seed(#"{"secret":"s3cret","text":"precious"}"#)
        let store = try StateStore(path: database, options: .init(busyTimeout: .milliseconds(200)))
        let (app, storyboard) = try launch(store) { lossy ? LossyDetail() : CounterDetail() }
        defer { withExtendedLifetime(app) {} }
        // Another process holds the write lock while the screen appears: the quarantine (or
        // the superseded copy) cannot be written.
        beforeRawSQLite()
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        app.navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "detail"), animated: false)
        try #require(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        // The lock is gone by the save.
        app.navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "other"), animated: false)
        app.coordinator.flush()
        #expect(try storedText().contains("s3cret"))
        let refusal = app.errors.errors.first { $0.description.contains("could not be set aside") }
        #expect(refusal != nil, "\(app.errors.errors)")
        // The next appearance at the path sets it aside, and saves go on.
        _ = app.navigation.popViewController(animated: false)
        _ = app.navigation.popViewController(animated: false)
        let again = try storyboard.instantiateViewController(withIdentifier: "detail")
        app.navigation.pushViewController(again, animated: false)
        if let counter = again as? CounterDetail {
            counter.restorableState.count = 7
        } else {
            (try #require(again as? LossyDetail)).restorableState.text = "edited"
        }
        _ = app.navigation.popViewController(animated: false)
        app.coordinator.flush()
        let quarantined = try StateStore(path: database, options: .init(readOnly: true)).quarantinedStates()
        #expect(quarantined.contains { String(decoding: $0.bytes, as: UTF8.self).contains("s3cret") })
        let row = String(decoding: try store.state(at: "nav/detail")?.bytes ?? Data(), as: UTF8.self)
        #expect(row == (lossy ? #"{"text":"edited"}"# : #"{"count":7}"#))
    }

    /// The quarantine failed under a lock; the same instance appears again once the lock is
    /// gone (a screen pushed over it and popped): the row is set aside then, and its edit saved.
    @Test func theSameScreenAppearingAgainSetsTheRowAside() throws {
        try seed(#"{"secret":"s3cret","text":"precious"}"#)
        let store = try StateStore(path: database, options: .init(busyTimeout: .milliseconds(200)))
        let (app, storyboard) = try launch(store) { CounterDetail() }
        defer { withExtendedLifetime(app) {} }
        let detail = try pushUnderLock(app, storyboard)
        app.navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "other"), animated: false)
        _ = app.navigation.popViewController(animated: false)
        detail.restorableState.count = 7
        _ = app.navigation.popViewController(animated: false)
        app.coordinator.flush()
        let quarantined = try StateStore(path: database, options: .init(readOnly: true)).quarantinedStates()
        #expect(
            quarantined.contains { String(decoding: $0.bytes, as: UTF8.self).contains("s3cret") },
            "\(app.errors.errors)")
        #expect(String(decoding: try store.state(at: "nav/detail")?.bytes ?? Data(), as: UTF8.self) == #"{"count":7}"#)
    }

    /// The row the refusal protects is removed by another process: the next appearance finds
    /// nothing to set aside, and saves go on.
    @Test func savesGoOnOnceTheProtectedRowIsGone() throws {
        try seed(#"{"secret":"s3cret","text":"precious"}"#)
        let store = try StateStore(path: database, options: .init(busyTimeout: .milliseconds(200)))
        let (app, storyboard) = try launch(store) { CounterDetail() }
        defer { withExtendedLifetime(app) {} }
        _ = try pushUnderLock(app, storyboard)
        _ = app.navigation.popViewController(animated: false)
        app.coordinator.flush()
        try rawSQL(database, "DELETE FROM states WHERE path = 'nav/detail'")
        let fresh = try #require(try storyboard.instantiateViewController(withIdentifier: "detail") as? CounterDetail)
        app.navigation.pushViewController(fresh, animated: false)
        fresh.restorableState.count = 7
        _ = app.navigation.popViewController(animated: false)
        app.coordinator.flush()
        #expect(
            String(decoding: try store.state(at: "nav/detail")?.bytes ?? Data(), as: UTF8.self) == #"{"count":7}"#,
            "\(app.errors.errors)")
    }

    /// A window's root replaced by a screen of another type at the same path while the old
    /// one's state is still queued on the main actor (no structural change handed it over).
    @Test(arguments: [false, true])
    func aStateOfAnotherTypeStillQueuedIsSetAsideFirst(lossy: Bool) throws {
        let store = try StateStore(path: database)
        let application = Application(store: store)
        let coordinator = try #require(application.restorationCoordinator)
        coordinator.errorHandler = { _ in }
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: application)
        let old = OldDetail()
        old.restorationIdentifier = "detail"
        window.rootViewController = old
        window.makeKeyAndVisible()
        coordinator.flush()
        old.restorableState = .init(text: "precious", secret: "s3cret")
        let next: ViewController = lossy ? LossyDetail() : CounterDetail()
        next.restorationIdentifier = "detail"
        window.rootViewController = next
        if let lossyNext = next as? LossyDetail { #expect(lossyNext.restorableState.text == "precious") }
        let other = ViewController()
        other.restorationIdentifier = "other"
        window.rootViewController = other
        coordinator.flush()
        let reader = try StateStore(path: database, options: .init(readOnly: true))
        var text = String(decoding: try reader.state(at: "detail")?.bytes ?? Data(), as: UTF8.self)
        for kept in try reader.quarantinedStates() { text += String(decoding: kept.bytes, as: UTF8.self) }
        #expect(text.contains("s3cret"))
        withExtendedLifetime((application, window)) {}
    }

    /// Pushes the detail while another connection holds the write lock: its set-aside fails.
    func pushUnderLock<C: ViewController>(
        _ app: Launched, _ storyboard: Storyboard, as _: C.Type = CounterDetail.self
    ) throws -> C {
        beforeRawSQLite()
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        let detail = try #require(try storyboard.instantiateViewController(withIdentifier: "detail") as? C)
        app.navigation.pushViewController(detail, animated: false)
        try #require(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        return detail
    }

    @Test func aQuarantineRefusedByAFullDiskKeepsTheStateFromTheNextSave() throws {
        try seed("{\"secret\":\"" + String(repeating: "x", count: 200_000) + "\",\"text\":\"precious\"}")
        try rawSQL(database, "PRAGMA wal_checkpoint(TRUNCATE)")
        let pages = fileBytes(database).count / 4096
        // Room for a small save, none for a copy of the 200 KB row.
        let store = try StateStore(path: database, options: .init(maximumPageCount: pages + 8))
        let (app, storyboard) = try launch(store) { CounterDetail() }
        defer { withExtendedLifetime(app) {} }
        app.navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "detail"), animated: false)
        app.navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "other"), animated: false)
        app.coordinator.flush()
        #expect(try storedText().contains("precious"))
        #expect(
            app.errors.errors.contains { $0.description.contains("could not be set aside") }, "\(app.errors.errors)")
    }

    /// The old screen popped, the new one pushed at its path while the old state is still with
    /// the writer: read as a relaunch reads it, quarantined or kept before any save.
    @Test(arguments: [(true, false), (true, true), (false, false), (false, true)])
    func aStateOfAnotherTypeStillWithTheWriterIsSetAsideFirst(writesBehind: Bool, lossy: Bool) throws {
        let store = try StateStore(path: database)
        let (app, storyboard) = try launch(store) { OldDetail() }
        defer { withExtendedLifetime(app) {} }
        app.coordinator.writesBehind = writesBehind
        let old = try #require(try storyboard.instantiateViewController(withIdentifier: "detail") as? OldDetail)
        app.navigation.pushViewController(old, animated: false)
        old.restorableState = .init(text: "precious", secret: "s3cret")
        _ = app.navigation.popViewController(animated: false)
        let next: ViewController = lossy ? LossyDetail() : CounterDetail()
        next.restorationIdentifier = "detail"
        app.navigation.pushViewController(next, animated: false)
        if let lossyDetail = next as? LossyDetail { #expect(lossyDetail.restorableState.text == "precious") }
        app.navigation.pushViewController(
            try storyboard.instantiateViewController(withIdentifier: "other"), animated: false)
        app.coordinator.flush()
        #expect(try storedText().contains("s3cret"))
        // Set aside: as a copy of what the lossy type drops, or whole as a state that does not decode.
        let reasons = try store.quarantinedStates().map(\.reason)
        if lossy {
            #expect(reasons.contains { $0.contains("kept before a save replaces them") }, "\(reasons)")
        } else {
            #expect(reasons.count == 1, "\(reasons)")
        }
    }
}
