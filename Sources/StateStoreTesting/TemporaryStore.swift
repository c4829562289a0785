import Foundation
import StateStore
import Synchronization

/// A database of its own for one test: a file in a temporary folder made for it, removed
/// when the value is released (or by ``remove()``).
///
/// Each instance makes its folder with `mkdtemp(3)`, so tests that run at the same time (Swift
/// Testing runs them in parallel by default) never share a file, whatever their names. It uses
/// no test framework: it works the same from Swift Testing and from XCTest, and reports what
/// it cannot do by throwing.
///
/// ``launch(_:)`` starts the app on it, and ``Launch/relaunch(after:)`` ends that launch as the
/// world ends a process and starts the app again from what the file holds: see
/// <doc:TestingYourAppsRestoration>.
///
/// The stores it opens hold their write-behind work for the flush points: the writer
/// commits a batch when the app reaches a flush point (`saveVisibleState()`, a critical memory
/// warning, `terminate()`), or anything else waits for it (a read or a write through the
/// store, `StateStore.waitForWriteBehind()`), never on its own thread in between. A real
/// writer may run at any moment in that window, or, on a busy core, not at all: holding it
/// makes the outcome of a ``ProcessEnding/kill`` the same on every run, the worst the window
/// allows. What a flush point commits is unchanged.
public final class TemporaryStore: Sendable {
    /// The folder made for this store, mode 0700; removed with everything in it.
    public let folder: String
    /// The database file, `state.sqlite` in ``folder`` (made by the first open).
    public let path: String
    /// The options every store opened on the file gets.
    public let options: StateStore.Options

    /// The store of the launch running now, if any: one process of the app at a time.
    private let running = Mutex(RunningStore())
    private struct RunningStore: Sendable { weak var store: StateStore? }

    /// Makes a folder of its own under `$TMPDIR` (else `/tmp`), named after `name` (by default,
    /// the calling function: the test) and a unique suffix. Nothing is opened yet.
    ///
    /// - Parameters:
    ///   - name: Part of the folder's name, to tell whose it is; letters and digits are kept.
    ///   - options: The options of every store opened on the file (for instance
    ///     `synchronous: .full`, or a `sealer`), as the app's own launch would open it.
    /// - Throws: ``StateStoreTestingError/temporaryFolderNotMade(folder:errno:)``.
    public init(_ name: String = #function, options: StateStore.Options = .init()) throws(StateStoreTestingError) {
        let safe = String(name.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(40))
        let environment = ProcessInfo.processInfo.environment["TMPDIR"] ?? ""
        let base = environment.hasPrefix("/") ? String(environment.reversed().drop { $0 == "/" }.reversed()) : "/tmp"
        var template = Array("\(base)/statestore-testing-\(safe)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .temporaryFolderNotMade(folder: base, errno: errno)
        }
        folder = String(cString: made)
        path = folder + "/state.sqlite"
        self.options = options
    }

    /// A store whose file starts as a copy of the database at `database`, with its `-wal`
    /// when there is one: the file an earlier release of the app left, say, committed beside
    /// the tests. The copy is the test's; the original is never opened. The first launch opens
    /// it as the app would: migrating its schema, and each state as its type's
    /// `migrateRestorableState(from:data:)` says when it is read.
    ///
    /// - Throws: ``StateStoreTestingError/temporaryFolderNotMade(folder:errno:)``, or
    ///   ``StateStoreTestingError/fixtureNotCopied(path:reason:)`` when `database` cannot be
    ///   read.
    public convenience init(
        copying database: String, _ name: String = #function, options: StateStore.Options = .init()
    ) throws(StateStoreTestingError) {
        try self.init(name, options: options)
        for suffix in ["", "-wal"] {
            let source = database + suffix
            guard suffix.isEmpty || FileManager.default.fileExists(atPath: source) else { continue }
            do {
                try FileManager.default.copyItem(atPath: source, toPath: path + suffix)
            } catch {
                remove()
                throw .fixtureNotCopied(path: source, reason: "\(error)")
            }
        }
    }

    /// A store whose file starts with the states of the export document at `export` (what
    /// `statectl export` or `StateExport.encoded()` wrote), imported as `statectl import` does.
    /// A document carries states, not the window hierarchy: the first launch builds its first
    /// screens, and each controller restores its state from its path.
    ///
    /// - Throws: ``StateStoreTestingError/temporaryFolderNotMade(folder:errno:)`` or
    ///   ``StateStoreTestingError/fixtureNotCopied(path:reason:)``; the document's own error
    ///   (`StateExport.DocumentError`) when it is not one an import takes; a `StateStoreError`
    ///   when the store refuses a state.
    public convenience init(
        importing export: String, _ name: String = #function, options: StateStore.Options = .init()
    ) throws {
        try self.init(name, options: options)
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: export))
        } catch {
            remove()
            throw StateStoreTestingError.fixtureNotCopied(path: export, reason: "\(error)")
        }
        do {
            let document = try StateExport(decoding: bytes, maximumStateSize: options.maximumStateSize)
            try StateStore(path: path, options: options).importStates(document)
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// The database's write-ahead log, `<path>-wal`: present after a launch that did not close
    /// the store cleanly (a kill, or an exit), holding the commits not yet copied into the file.
    public var walPath: String { path + "-wal" }

    /// Opens a store on the file with ``options``, as the app's launch would, holding its
    /// write-behind work for the flush points (see the type's discussion).
    ///
    /// - Throws: `StateStoreError`, as `StateStore(path:options:)` does.
    public func open() throws(StateStoreError) -> StateStore {
        let store = try StateStore(path: path, options: options)
        store.holdsWriteBehind = true
        return store
    }

    /// Starts the app on a store opened on the file, with the app's own launch code, and returns
    /// the launch, whose ``Launch/relaunch(after:)`` ends it and starts the app again.
    ///
    /// - Parameter launch: What the app does as its process starts: given the store, make the
    ///   application and its window, restore the hierarchy or build the first screens. Kept,
    ///   and run again by each relaunch.
    /// - Throws: ``StateStoreTestingError/launchStillRunning(path:)`` when a launch on the file
    ///   has not ended; a `StateStoreError` when the store cannot be opened; what `launch`
    ///   throws, after which the launch's process is taken to have died (its store is closed as
    ///   a killed process's would be).
    @MainActor
    public func launch<App: LaunchedApp>(
        _ launch: @escaping @MainActor (StateStore) throws -> App
    ) throws -> Launch<App> {
        let alive = running.withLock { running in
            guard let store = running.store else { return false }
            return !store.simulatedProcessHasDied
        }
        if alive { throw StateStoreTestingError.launchStillRunning(path: path) }
        // Every write of the launch is recorded from its first, for a power cut to choose from.
        let recording = try PowerCutRecording(folder: folder)
        let store: StateStore
        do {
            store = try open()
        } catch {
            recording.end()
            throw error
        }
        running.withLock { $0.store = store }
        let app: App
        // Every callback the launch sends, the restoration's included, for ``Launch/diagnosis``.
        let trace = LifecycleTrace()
        Application.traceForNewApplications = trace
        defer { Application.traceForNewApplications = nil }
        do {
            app = try launch(store)
        } catch {
            // The launch crashed its process: nothing of it writes any more.
            store.simulateProcessDeath()
            recording.end()
            throw error
        }
        return Launch(
            app: app, store: store, temporaryStore: self, trace: trace, recording: recording, launch: launch)
    }

    /// Removes the folder and everything in it now (the value's release does it otherwise).
    /// A store still open on the file keeps working on the removed file, and writes nothing
    /// anyone can read: remove it at the end of the test.
    public func remove() {
        try? FileManager.default.removeItem(atPath: folder)
    }
}
