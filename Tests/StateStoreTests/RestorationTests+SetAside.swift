import Dispatch
import Foundation
import StateStoreSQLite
import Synchronization
import Testing

@testable import StateStore

/// Holds the writer at each step of a set-aside (``StateStore/setAsideObserver``) until the
/// test lets it go on: what the test does meanwhile happens between two of its transactions.
final class SetAsideGate: Sendable {
    private let reached = DispatchSemaphore(value: 0)
    private let proceed = DispatchSemaphore(value: 0)
    private let last = Lock<StateStore.SetAsideProgress?>(nil)
    private let opened = Atomic<Bool>(false)

    /// Installs the gate on `store`.
    func install(on store: StateStore) {
        store.setAsideObserver.withLock {
            $0 = StateStore.SetAsideObserver { [self] progress in
                guard !opened.load(ordering: .acquiring) else { return }
                last.withLock { $0 = progress }
                reached.signal()
                // Bounded: a test that fails never hangs the writer.
                _ = proceed.wait(timeout: .now() + 20)
            }
        }
    }

    /// Waits (at most 20 s) for the writer to reach its next step, where it stays until
    /// ``step()`` or ``open()``; `nil` when it never does.
    func next() -> StateStore.SetAsideProgress? {
        guard reached.wait(timeout: .now() + 20) == .success else { return nil }
        return last.withLock { $0 }
    }

    /// Lets the writer go on to its next step.
    func step() { proceed.signal() }

    /// Lets the writer go on, and through every later step.
    func open() {
        opened.store(true, ordering: .releasing)
        proceed.signal()
    }
}

/// A row over the size budget met at launch is set aside by the writer, in short transactions,
/// while the launch goes on.
extension RestorationTests {
    /// The huge row's length: three chunks and a bit, so the copy takes four chunk transactions.
    var hugeRowSize: Int { 3 * StateStore.setAsideChunk + 12_345 }

    /// Writes a small state at `nav/b`, then a `hugeRowSize`-byte row at `nav/a` as another tool
    /// would (its checksum right), and opens the store with a 1 MiB budget. Returns the store
    /// and the row's bytes.
    func storeWithHugeRow(busyTimeout: Duration = .seconds(5)) throws -> (StateStore, Data) {
        try StateStore(path: database).save(NoteController.State(text: "small", edits: 0), for: "nav/b")
        let bytes = hugeBytes()
        try insertRawState(at: "nav/a", bytes: bytes)
        let store = try StateStore(
            path: database, options: .init(busyTimeout: busyTimeout, maximumStateSize: 1 << 20))
        return (store, bytes)
    }

    /// `hugeRowSize` random bytes.
    func hugeBytes() -> Data {
        var generator = SystemRandomNumberGenerator()
        var bytes = Data(count: hugeRowSize)
        bytes.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: raw.count - 7, by: 8) {
                raw.storeBytes(of: generator.next(), toByteOffset: offset, as: UInt64.self)
            }
        }
        return bytes
    }

    /// Inserts a state row with `bytes` at `path` with a raw connection.
    func insertRawState(at path: String, bytes: Data) throws {
        beforeRawSQLite()
        var handle: OpaquePointer?
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_prepare_v2(
                handle,
                """
                INSERT INTO states(path, type_name, version, generation, encoding, checksum, updated_at, bytes)
                VALUES (?1, 'Other.Tool', 1, 1, 'binary', ?2, 0, ?3)
                """, -1, &statement, nil) == SQLITE_OK
        else { throw RawSQLFailure(message: String(cString: sqlite3_errmsg(handle))) }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, path, -1, csqlite_transient())
        sqlite3_bind_int64(statement, 2, Checksum.stored(bytes))
        bytes.withUnsafeBytes {
            _ = sqlite3_bind_blob64(statement, 3, $0.baseAddress, UInt64($0.count), csqlite_transient())
        }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            throw RawSQLFailure(message: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// The bytes of the quarantined row at `path`, read through `store`.
    func quarantinedBytes(at path: String, in store: StateStore) throws -> Data? {
        guard
            let id = try rawRows(database, "SELECT id FROM quarantine WHERE path = '\(path)'").first.flatMap({
                Int64($0[0])
            })
        else { return nil }
        var bytes = Data()
        try store.readQuarantinedBytes(id: id) { bytes.append(contentsOf: $0) }
        return bytes
    }

    func count(_ sql: String) throws -> Int { Int(try rawRows(database, sql)[0][0]) ?? -1 }

    var markers: String {
        "SELECT count(*) FROM metadata WHERE key LIKE '\(StateStore.settingAsidePrefix)%'"
    }

    var reason: String { "it is \(hugeRowSize) bytes, over the \(1 << 20)-byte maximumStateSize" }

    @Test func theLaunchDoesNotWaitForTheSetAside() throws {
        let (store, bytes) = try storeWithHugeRow()
        let gate = SetAsideGate()
        gate.install(on: store)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        let note = try #require(navigation.topViewController as? NoteController)
        #expect(note.restorableState == .init())
        // The launch returned before the copy was made: the row is still at its path.
        #expect(try count("SELECT count(*) FROM states WHERE path = 'nav/a'") == 1)

        // The writer has made its first step: the quarantine row and its marker.
        let first = try #require(gate.next())
        #expect(first.copied == 0 && first.total == hugeRowSize)
        #expect(try count(markers) == 1)
        #expect(try count("SELECT count(*) FROM quarantine WHERE id = \(first.quarantineID)") == 1)
        // Not a quarantined state yet, for any reader.
        #expect(try StateStore(path: database, options: .init(readOnly: true)).quarantinedStates().isEmpty)
        #expect(try StateStore(path: database, options: .init(readOnly: true)).check().quarantineCount == 0)

        gate.open()
        store.waitForWriteBehind()
        #expect(try quarantinedBytes(at: "nav/a", in: store) == bytes)
        #expect(try count("SELECT count(*) FROM states WHERE path = 'nav/a'") == 0)
        #expect(try count(markers) == 0)
        #expect(try store.quarantinedStates().map(\.reason) == [reason])
        #expect(coordinator.statistics.quarantined == 1)
        #expect(coordinator.recentErrors.contains { $0 == .quarantined(path: "nav/a", reason: reason) })
    }

    @Test func aLaunchThatRestoresItsHierarchyDoesNotWaitForTheSetAside() throws {
        do {
            let (application, _, _) = try launch(try StateStore(path: database))
            application.terminate()
        }
        let bytes = hugeBytes()
        try rawSQL(database, "DELETE FROM states WHERE path = 'nav/a'")
        try insertRawState(at: "nav/a", bytes: bytes)
        let store = try StateStore(path: database, options: .init(maximumStateSize: 1 << 20))
        let gate = SetAsideGate()
        gate.install(on: store)
        let relaunched = Application(store: store, storyboard: storyboard())
        let window = Window(size: Size(width: 400, height: 800), orientation: .portrait, application: relaunched)
        // The restoration (its crash-loop guard's bookkeeping included) returns before the copy.
        #expect(try relaunched.restoreHierarchy(in: window))
        #expect(try count("SELECT count(*) FROM states WHERE path = 'nav/a'") == 1)
        let note = try #require(
            (window.rootViewController as? NavigationController)?.topViewController as? NoteController)
        #expect(note.restorableState == .init())
        _ = try #require(gate.next())
        gate.open()
        store.waitForWriteBehind()
        #expect(try quarantinedBytes(at: "nav/a", in: store) == bytes)
        #expect(try count("SELECT count(*) FROM states WHERE path = 'nav/a'") == 0)
    }

    @Test func theMainThreadWaitsForOneChunkAtMost() throws {
        let (store, bytes) = try storeWithHugeRow()
        let gate = SetAsideGate()
        gate.install(on: store)
        _ = try launch(store)
        // At each step the writer has let the connection go: this thread takes it (as an
        // appearance's query would) while the copy is still partial.
        var steps: [Int] = []
        while let progress = gate.next() {
            steps.append(progress.copied)
            #expect(try store.generation(at: "nav/b", waitingForWrites: false) == 1)
            #expect(try count("SELECT count(*) FROM states WHERE path = 'nav/a'") == 1)
            #expect(try count(markers) == 1)
            gate.step()
            if progress.copied == progress.total { break }
        }
        let chunk = StateStore.setAsideChunk
        #expect(steps == [0, chunk, 2 * chunk, 3 * chunk, hugeRowSize])
        #expect(steps.count - 1 >= hugeRowSize / chunk)
        store.waitForWriteBehind()
        #expect(try quarantinedBytes(at: "nav/a", in: store) == bytes)
        #expect(try count(markers) == 0)
    }

    @Test func aSaveOfThePathDuringTheSetAsideLandsAfterIt() throws {
        let (store, bytes) = try storeWithHugeRow()
        let gate = SetAsideGate()
        gate.install(on: store)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        let note = try #require(navigation.topViewController as? NoteController)
        // Halfway through the copy, the user types and moves on: the save is handed over.
        _ = try #require(gate.next())
        gate.step()
        #expect(try #require(gate.next()).copied == StateStore.setAsideChunk)
        note.restorableState.text = "typed during the copy"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        #expect(try count("SELECT count(*) FROM states WHERE path = 'nav/a'") == 1)
        gate.open()
        coordinator.flush()
        #expect(try quarantinedBytes(at: "nav/a", in: store) == bytes)
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "typed during the copy")
        #expect(coordinator.statistics.quarantined == 1)
        #expect(!coordinator.recentErrors.contains { if case .store = $0 { true } else { false } })
    }

    @Test func aRowChangedByAnotherConnectionDuringTheCopyIsLeftWhereItIs() throws {
        let (store, _) = try storeWithHugeRow()
        let gate = SetAsideGate()
        gate.install(on: store)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        _ = try #require(gate.next())
        gate.step()
        #expect(try #require(gate.next()).copied == StateStore.setAsideChunk)
        // Another store on the file (another process, say) replaces the row between two chunks;
        // opening it leaves this process's copy under way alone.
        try StateStore(path: database).save(NoteController.State(text: "from elsewhere"), for: "nav/a")
        #expect(try count(markers) == 1)
        gate.open()
        store.waitForWriteBehind()
        // Nothing moved, nothing left half copied.
        #expect(try count("SELECT count(*) FROM quarantine") == 0)
        #expect(try count(markers) == 0)
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "from elsewhere")
        #expect(coordinator.statistics.quarantined == 0)

        // The row was not set aside: this screen's save does not replace it, and the next
        // appearance at the path reads it.
        let note = try #require(navigation.topViewController as? NoteController)
        note.restorableState.text = "typed here"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        coordinator.flush()
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "from elsewhere")
        _ = navigation.popViewController(animated: false)
        #expect(note.restorableState.text == "from elsewhere")
    }

    @Test func aCopyLeftHalfDoneIsRemovedAtTheNextOpen() throws {
        let (_, bytes) = try storeWithHugeRow()
        // What a kill between two steps leaves: the quarantine row with its first chunk, and its
        // marker naming a process that has ended. Beside it, one finished, and one another live
        // process (here, this one) is still making.
        try rawSQL(
            database,
            """
            INSERT INTO quarantine(id, path, type_name, version, generation, encoding, checksum, updated_at, reason, quarantined_at, bytes)
            VALUES (7, 'nav/old', 'Old', 1, 1, 'json', 0, 0, 'finished earlier', 0, x'7b7d');
            INSERT INTO quarantine(id, path, type_name, version, generation, encoding, checksum, updated_at, reason, quarantined_at, bytes)
            SELECT 8, path, type_name, version, generation, encoding, checksum, updated_at, 'killed', 0, CAST(substr(bytes, 1, \(StateStore.setAsideChunk)) || zeroblob(\(hugeRowSize - StateStore.setAsideChunk)) AS BLOB)
            FROM states WHERE path = 'nav/a';
            INSERT INTO quarantine(id, path, type_name, version, generation, encoding, checksum, updated_at, reason, quarantined_at, bytes)
            VALUES (9, 'nav/c', 'Live', 1, 1, 'json', 0, 0, 'under way', 0, zeroblob(10));
            INSERT INTO metadata(key, value) VALUES
                ('\(StateStore.settingAsideKey(quarantineID: 8))', 'pid=999999999 started=1 path=nav/a'),
                ('\(StateStore.settingAsideKey(quarantineID: 9))', '\(SetAsideMarker.thisProcess(path: "nav/c"))');
            """)
        // Readers leave both partial copies out.
        let reader = try StateStore(path: database, options: .init(readOnly: true))
        #expect(try reader.quarantinedStates().map(\.id) == [7])

        let reopened = try StateStore(path: database, options: .init(maximumStateSize: 1 << 20))
        #expect(try rawRows(database, "SELECT id FROM quarantine ORDER BY id") == [["7"], ["9"]])
        #expect(
            try rawRows(database, "SELECT key FROM metadata WHERE key LIKE '\(StateStore.settingAsidePrefix)%'") == [
                [StateStore.settingAsideKey(quarantineID: 9)]
            ])
        // The original row is where it was, whole; the next launch sets it aside.
        let (application, _, _) = try launch(reopened)
        reopened.waitForWriteBehind()
        #expect(try quarantinedBytes(at: "nav/a", in: reopened) == bytes)
        #expect(application.restorationCoordinator?.statistics.quarantined == 1)
        #expect(try reopened.quarantinedStates().map(\.id).sorted() == [7, 10])
    }

    /// A raw connection holding the database's write lock (`BEGIN IMMEDIATE`) until `release`.
    func holdWriteLock() throws -> () -> Void {
        beforeRawSQLite()
        var handle: OpaquePointer?
        guard sqlite3_open_v2(database, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK
        else { throw RawSQLFailure(message: String(cString: sqlite3_errmsg(handle))) }
        let locked = handle
        return {
            sqlite3_exec(locked, "ROLLBACK", nil, nil, nil)
            sqlite3_close_v2(locked)
        }
    }

    @Test func aRowTheWriterCannotSetAsideIsNotSavedOver() throws {
        let (store, bytes) = try storeWithHugeRow(busyTimeout: .milliseconds(50))
        let gate = SetAsideGate()
        gate.install(on: store)
        let (application, _, navigation) = try launch(store)
        let coordinator = try #require(application.restorationCoordinator)
        let note = try #require(navigation.topViewController as? NoteController)
        _ = try #require(gate.next())
        gate.step()
        #expect(try #require(gate.next()).copied == StateStore.setAsideChunk)
        // Another connection takes the write lock between two chunks: the next one fails (busy),
        // and so does removing the partial copy. A save handed over meanwhile is refused.
        let release = try holdWriteLock()
        note.restorableState.text = "typed during the copy"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        gate.open()
        coordinator.flush()
        release()
        #expect(try count("SELECT length(bytes) FROM states WHERE path = 'nav/a'") == hugeRowSize)
        // The partial copy, which could not be removed under the lock, is not listed.
        #expect(try count(markers) == 1)
        #expect(try store.quarantinedStates().isEmpty)
        #expect(coordinator.statistics.quarantined == 0)
        #expect(coordinator.recentErrors.contains { if case .store(.busy) = $0 { true } else { false } })
        #expect(
            coordinator.recentErrors.contains {
                if case .store(.invalidState(path: "nav/a", _)) = $0 { true } else { false }
            })

        // The next appearance reads the path again and sets the row aside (the partial copy left
        // goes first); saves go on.
        _ = navigation.popViewController(animated: false)
        coordinator.flush()
        #expect(try quarantinedBytes(at: "nav/a", in: store) == bytes)
        #expect(try count("SELECT count(*) FROM quarantine") == 1)
        #expect(try count(markers) == 0)
        note.restorableState.text = "saved at last"
        navigation.pushViewController(
            try application.storyboard.instantiateViewController(withIdentifier: "b"), animated: false)
        coordinator.flush()
        #expect(try store.restore(NoteController.State.self, for: "nav/a")?.text == "saved at last")
    }
}
