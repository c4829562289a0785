import CoreMetrics
import Foundation
import Logging
import Synchronization

/// A Sendable store of restorable controller state in one SQLite database.
///
/// ```swift
/// let store = try StateStore(path: StateStore.defaultPath(appName: "mail"))
/// try store.save(draft, for: "root/inbox/compose")
/// let restored = try store.restore(Draft.self, for: "root/inbox/compose")
/// ```
///
/// The file is created with mode 0600 in a folder created 0700, opened in WAL mode
/// with `synchronous=NORMAL` (see ``Options/Synchronous``), checked (its header and schema at
/// open; every page after open, in the background: ``Options/backgroundCheck``), and migrated
/// with the SQL in `migrations/`. A file that is not a database, is damaged, or
/// comes from a newer build is refused with a typed error and left untouched.
///
/// One connection serves every thread, behind a lock; encoding and decoding
/// happen outside the lock. Writes run in `BEGIN IMMEDIATE` transactions with
/// statements prepared once.
///
/// Reads and writes through the store see every write-behind save handed to it before the
/// call (the restoration layer's, see ``RestorationCoordinator``): they first wait for the
/// write-behind writer to commit them. The store never answers with data older than what it
/// was given.
public final class StateStore: Sendable {
    /// How the store opens and writes its database.
    public struct Options: Sendable {
        /// `PRAGMA synchronous` in WAL mode. See <https://www.sqlite.org/pragma.html#pragma_synchronous>.
        public enum Synchronous: String, Sendable, CaseIterable {
            /// Committed saves survive an application crash; on a power cut, the commits since the
            /// WAL was last synced (at a checkpoint, by ``StateStore/synchronize()``, or by a flush
            /// point that saves: ``RestorationCoordinator/flush(archiving:)``, `terminate()`,
            /// `saveVisibleState()`, a critical warning) may roll back, never a later one without
            /// an earlier one. The default.
            case normal = "NORMAL"
            /// Every commit is synced to disk: saves also survive power loss, at the cost of an fsync each.
            case full = "FULL"
        }

        /// What to verify when a database is opened, before the initializer returns.
        public enum OpenCheck: Sendable {
            /// Only that the file is an SQLite database whose schema can be read: the first page
            /// and the schema's, so opening costs the same at any size. The default; the rest of
            /// the file is checked after open by ``StateStore/Options/backgroundCheck``.
            case header
            /// `PRAGMA quick_check`: every page is read once, so damage is reported at open as
            /// ``StateStoreError/corrupt(file:_:)``. Costs time in proportion to the file (17 s
            /// for a 1.4 GB file whose pages are not in the page cache): for tools, not launches.
            case quick
            /// `PRAGMA integrity_check`: ``quick`` and every index compared with its table, so
            /// damage only the full check finds (an index entry that names the wrong row) is
            /// reported at open too. Slower than ``quick``; for moving aside what a
            /// ``BackgroundCheck/full(after:)`` check found.
            case full
        }

        /// Whether each commit waits for the disk (`PRAGMA synchronous`): see ``Synchronous``.
        public var synchronous: Synchronous = .normal
        /// How long a write waits for another connection's lock before ``StateStoreError/busy(_:)``.
        public var busyTimeout: Duration = .seconds(5)
        /// Open without writing anything: no migration, no pragmas that write. Saves throw
        /// ``StateStoreError/readOnly(file:_:)``.
        public var readOnly = false
        /// With ``readOnly``: open a database whose tables match this build's schema exactly even
        /// when its version records (`PRAGMA user_version`, `schema_migrations`) were erased or
        /// damaged outside StateStore, so its states can be read and exported.
        /// ``StateStore/schemaRecords()`` says what is wrong; ``StateStore/repairSchemaVersion(at:)`` repairs it.
        public var salvage = false
        /// What is verified before the initializer returns. Default ``OpenCheck/header``.
        public var openCheck: OpenCheck = .header
        /// The integrity check run after open, off the caller's thread: see <doc:StorageAndGuarantees>.
        /// Default ``BackgroundCheck/quick(after:)``, one second after open. Nothing is checked in
        /// the background for a store in memory.
        public var backgroundCheck: BackgroundCheck = .quick()
        /// The largest encoded state accepted by ``StateStore/save(_:for:version:)``, in bytes. Default 1 MiB.
        public var maximumStateSize = 1 << 20
        /// A cap on the database's size in pages (`PRAGMA max_page_count`); a write past it fails
        /// with ``StateStoreError/diskFull(_:)`` exactly as a full disk would. `nil`: no cap.
        public var maximumPageCount: Int?
        /// When set, states not written for this long are removed each time the store is
        /// opened read-write (at launch), so abandoned screens do not accumulate. `nil`: kept forever.
        ///
        /// The first open with a retention indexes the states by update time (one pass over the
        /// table: 0.22 s for 300,000 states of 1 KB in the page cache), so that each launch's
        /// prune reads only what it removes; the index stays, and every save keeps it up (about
        /// 8 % more per save).
        public var retention: Duration?
        /// Where the store says what it did on its own: a row quarantined, a broken database moved
        /// aside, a read-only file read as immutable, a file tightened, SQLite's own log (see
        /// ``StateStore/routeSQLiteLog(to:)``). It logs at `info` and below, with structured
        /// metadata, as swift-log asks of libraries. Default: a logger that discards everything;
        /// pass the application's own.
        public var logger: Logger
        /// Where the store, its write-behind writer and an application on it emit their metrics
        /// (see <doc:ServicesAndMetrics>). `nil`, the default, uses `MetricsSystem.factory` as it is when
        /// the store opens: a library never bootstraps the metrics system, the app does.
        public var metricsFactory: (any MetricsFactory)?
        /// Seals every state written and opens every sealed state read: encryption at rest (see
        /// ``StateSealer`` and <doc:StorageAndGuarantees>). `nil`, the default, writes clear states
        /// and refuses to read or replace sealed ones (``StateStoreError/keyMismatch(path:found:configured:)``).
        public var sealer: (any StateSealer)?

        /// Options with the defaults every parameter names; the durations are checked when a store
        /// opens with them (``StateStoreError/invalidOption(name:reason:)``).
        public init(
            synchronous: Synchronous = .normal,
            busyTimeout: Duration = .seconds(5),
            readOnly: Bool = false,
            openCheck: OpenCheck = .header,
            maximumStateSize: Int = 1 << 20,
            maximumPageCount: Int? = nil,
            retention: Duration? = nil,
            logger: Logger = StateStore.silentLogger,
            metricsFactory: (any MetricsFactory)? = nil,
            backgroundCheck: BackgroundCheck = .quick(),
            sealer: (any StateSealer)? = nil
        ) {
            self.sealer = sealer
            self.backgroundCheck = backgroundCheck
            self.logger = logger
            self.metricsFactory = metricsFactory
            self.synchronous = synchronous
            self.busyTimeout = busyTimeout
            self.readOnly = readOnly
            self.openCheck = openCheck
            self.maximumStateSize = maximumStateSize
            self.maximumPageCount = maximumPageCount
            self.retention = retention
        }
    }

    /// The database file, or `":memory:"`.
    public let path: String
    /// The folder beside the database where the live processes' claims on its scenes are kept
    /// (`<file>.scenes`, by the absolute name SQLite opened the file by); `nil` in memory.
    /// See ``sceneHolder(of:)``.
    public let sceneClaimFolder: String?
    /// The options the store was opened with.
    public let options: Options
    /// The schema version of the open database (equal to ``latestSchemaVersion`` unless read-only).
    public let schemaVersion: Int
    /// The schema version this build writes.
    public static var latestSchemaVersion: Int { Migrator().latestVersion }

    let connection: Lock<Connection>
    /// ``StateSealer/openableKeyIDs`` of ``Options/sealer``, as the save statement binds them.
    let openableKeyList: String
    /// The handles the store and its writer record into.
    let metrics: StoreMetrics
    /// The factory the store emits through: ``Options/metricsFactory``, or `MetricsSystem.factory`
    /// as it was at open (a task-local one included). An application on the store uses it too.
    let resolvedMetricsFactory: any MetricsFactory
    /// Writes handed off to run after the caller returns (see ``WriteBehindQueue``).
    let writeBehind = WriteBehindQueue()
    /// The connection's ``Connection/changeCount`` as last seen, readable without the lock.
    let publishedChangeCount = Atomic<UInt64>(0)
    /// Set while the write-behind writer holds the connection for a transaction: a look at the
    /// change count then takes ``publishedChangeCount`` rather than trying the lock, whose
    /// failed try is a system call on Linux (the lock is a priority-inheriting futex, and only
    /// the kernel knows its owner). A hint: a look that misses it only pays that call.
    let writerInTransaction = Atomic<Bool>(false)

    /// Called on the writer's thread between the steps of a set-aside
    /// (``setAsideInSteps(_:reason:ifLargerThan:transactions:)``), with the connection free: tests set it to
    /// look at the database, or change it, while the copy is under way. `nil` in use.
    let setAsideObserver = Lock<SetAsideObserver?>(nil)
    /// Partial copies of failed set-asides this store could not remove then: see ``LeftSetAside``.
    let leftSetAsides = Lock<[LeftSetAside]>([])

    /// The integrity check running after open; `nil` when it is off.
    let backgroundChecker: BackgroundChecker?

    /// The connection's change count at open when the database then held no state; `nil` when
    /// it held some. While ``changeCount(refreshing:)`` still returns it, no state has been
    /// written but by write-behind writers: a restoration coordinator that is the store's only
    /// one answers the first appearance of a path it never wrote without a query (on a first
    /// launch, every appearance).
    let noStatesAtChangeCount: UInt64?
    /// How many restoration coordinators were ever made on this store: each has a writer whose
    /// commits do not count as changes, so a coordinator knows every state written since
    /// ``noStatesAtChangeCount`` only while it is the only one.
    let restorationCoordinators = Atomic<Int>(0)

    /// The index on `states(updated_at)` the first open with an ``Options/retention`` makes.
    static let retentionIndex = "statestore_states_by_updated_at"

    /// States removed at open because they were older than ``Options/retention``.
    public let prunedAtOpen: Int
    /// The key id the database records that its states are sealed with (`metadata`
    /// `statestore.sealed_with`), or `nil` for a clear database. A store that cannot open that
    /// key (it was given no sealer, or one without the key) writes nothing into the database:
    /// ``StateStoreError/keyRequired(file:keyID:)``. Read at open, and again by every write
    /// that depends on it (a save, an import), under the write lock: a key another process
    /// recorded since (a rekey, an import) counts from its next write.
    public var sealedWith: String? { recordedSeal.withLock { $0 } }
    let recordedSeal: Lock<String?>

    /// Things found at open that the store could not put right itself, in words: a file
    /// owned by another user that others may read, a folder that others may write to, a
    /// write-behind thread the process could not start (its writes are then made before the
    /// call that hands them over returns). Empty for a store it created or could tighten.
    /// `statectl` prints them as warnings; the ``Options/logger`` logs them at info.
    public let warnings: [String]

    /// Opens (creating and migrating when needed) the database at `path`.
    ///
    /// `path` is a plain file path: an empty path, `":memory:"` and SQLite URIs (`file:...`)
    /// are refused with ``StateStoreError/invalidDatabasePath(_:reason:)`` (use ``inMemory(options:)``
    /// for a store in memory), and anything that exists but is not a regular file with
    /// ``StateStoreError/notARegularFile(file:kind:)``. A non-empty SQLite database that is not
    /// marked as a StateStore database is refused with ``StateStoreError/notAStateStore(file:reason:)``
    /// and never altered; one whose tables or triggers are not StateStore's with
    /// ``StateStoreError/schemaMismatch(file:detail:)``.
    ///
    /// A missing database that ``openOrRecover(path:options:)`` was recovering when it was
    /// stopped between its renames is put in place from its whole copy first; one another
    /// process is recovering now is refused with ``StateStoreError/busy(_:)``.
    ///
    /// - Throws: ``StateStoreError``; every case leaves the file as it was.
    public convenience init(path: String, options: Options = .init()) throws(StateStoreError) {
        try Self.validateDatabasePath(path)
        try self.init(location: path, inMemory: false, options: options)
    }

    /// `recordingSeal: false` opens without writing the sealer's key id as the database's record
    /// (``sealedWith``): a rekey records what it made only when it commits.
    init(
        location path: String, inMemory isMemory: Bool, options: Options, recordingSeal: Bool = true
    ) throws(StateStoreError) {
        self.path = path
        self.options = options
        if let sealer = options.sealer,
            let invalid = sealer.openableKeyIDs.first(where: { !StoredState.isValidKeyID($0) })
        {
            throw .invalidKeyID(invalid)
        }
        try options.validateDurations()
        openableKeyList = Self.openableKeyList(options.sealer)
        resolvedMetricsFactory = options.metricsFactory ?? MetricsSystem.factory
        metrics = StoreMetrics(factory: resolvedMetricsFactory)
        var warnings: [String] = []
        if !isMemory {
            // Everything about the files is settled before SQLite opens one: SQLite itself may
            // write on open (rolling back another program's hot journal, for one). A missing
            // file may be a recovery's, stopped before its whole copy took the name.
            if !options.readOnly, access(path, F_OK) != 0, try Self.finishInterruptedRecovery(at: path) {
                options.logger.info(
                    "database recovered: the copy made before an interruption took its place",
                    metadata: [
                        "statestore.database": "\(path)"
                    ])
            }
            try Self.requireRegularFileOrNothing(at: path, readOnly: options.readOnly)
            // A file a connection of this process has open was looked at when it was opened;
            // looking again would close a descriptor of it, and with it that connection's locks.
            try OpenDatabaseFiles.lookUnlessOpen(at: path) { () throws(StateStoreError) in
                try Self.requireStateStoreBeforeOpening(path)
                try Self.refuseLostWAL(at: path)
            }
            if !options.readOnly { warnings = try Self.prepareFile(at: path) }
        }
        // SQLite makes a -wal and -shm beside a file whose header says WAL as it reads it, and
        // they are left beside a file refused after that (a file cut short is refused before,
        // by its header). They are never removed here: another process may have made the same
        // names meanwhile and be writing its commits into them, which no check made without
        // SQLite's locks can rule out.
        let connection = try Self.connect(to: path, options: options)
        sceneClaimFolder = isMemory ? nil : (connection.fileName.flatMap { $0.isEmpty ? nil : $0 } ?? path) + ".scenes"
        // The file SQLite opened, by the name it opened it by, and which file that is, taken
        // now: the check after open reads it again by that name, and makes sure it still names it.
        // Without a check, nothing is looked at.
        let openedFile =
            options.backgroundCheck == .off
            ? nil : connection.fileName.map { (name: $0, identity: FileIdentity.of($0)) }
        let migrator = Migrator()
        // The header's user_version first: a newer build's schema may use SQL this SQLite
        // cannot parse, which the probe would report as damage.
        if let header = try? connection.scalarInt("PRAGMA user_version"), Int(header) > migrator.latestVersion {
            try Self.requireStateStore(connection)
            throw .schemaTooNew(file: path, found: Int(header), supported: migrator.latestVersion)
        }
        try Self.probe(connection, check: options.openCheck)
        try Self.requireStateStore(connection)
        if options.readOnly, options.salvage, try migrator.appliedVersion(of: connection) <= migrator.latestVersion,
            try Self.schemaRecords(of: connection).differences.isEmpty
        {
            // Tables intact, version records perhaps not: read what is there; schemaRecords() says what is wrong.
            schemaVersion = try migrator.appliedVersion(of: connection)
        } else if options.readOnly {
            try migrator.requireRecordedVersion(connection)
            let found = try migrator.appliedVersion(of: connection)
            guard found <= migrator.latestVersion else {
                throw .schemaTooNew(file: path, found: found, supported: migrator.latestVersion)
            }
            guard found == migrator.latestVersion else {
                throw .schemaTooOld(file: path, found: found, required: migrator.latestVersion)
            }
            try SchemaShape.verify(connection)
            schemaVersion = found
        } else {
            // Refuse a newer schema, or tables that are not ours, before the first write:
            // the file must stay byte-for-byte as it was.
            if try migrator.pending(for: connection).isEmpty { try SchemaShape.verify(connection) }
            if !isMemory {
                let mode = try connection.strings("PRAGMA journal_mode = WAL").first
                guard mode == "wal" else {
                    throw .sqlite(
                        SQLiteFailure(
                            extendedResultCode: .error,
                            message: "the database could not be switched to WAL mode (it reports \(mode ?? "nothing"))",
                            sql: "PRAGMA journal_mode = WAL"
                        ))
                }
                connection.usesWAL = true
            }
            try connection.execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
            if let pages = options.maximumPageCount {
                _ = try connection.strings("PRAGMA max_page_count = \(max(1, pages))")
            }
            // Not synced here: a migration a power cut takes back is applied again at the next
            // open, and the first sync of a later save covers it.
            if !(try migrator.migrate(connection)).isEmpty { try SchemaShape.verify(connection) }
            schemaVersion = migrator.latestVersion
        }
        if let retention = options.retention, !options.readOnly {
            let cutoff = Date().addingTimeInterval(-retention.seconds).storedMilliseconds
            let openable = openableKeyList
            prunedAtOpen = try connection.writeTransaction { () throws(StateStoreError) -> Int in
                // By their update time, so that the prune reads what it removes, not the whole
                // table at every launch (0.1-1 s warm at 300k-1M states, seconds cold). Made at the
                // first open with a retention, in one pass over the table; kept up by every save
                // after that (a non-unique index beside the schema's, which every open tolerates).
                // A file at its page cap, or a full disk, has no room for it: the prune then reads
                // every row, as it needs no new page, and the next launch tries again.
                try connection.execute("SAVEPOINT retention_index")
                do throws(StateStoreError) {
                    try connection.execute("CREATE INDEX IF NOT EXISTS \(Self.retentionIndex) ON states(updated_at)")
                } catch .diskFull {
                    try connection.execute("ROLLBACK TO retention_index")
                }
                try connection.execute("RELEASE retention_index")
                // Rows sealed with a key this store was not given are kept: started with the
                // wrong key, the app must not lose what the right one opens.
                let prune = try connection.cached(
                    "DELETE FROM states WHERE updated_at < ?1 AND (key_id IS NULL OR instr(?2, ',' || key_id || ',') > 0)"
                )
                prune.bind(cutoff, at: 1)
                prune.bind(openable, at: 2)
                try prune.run()
                return connection.changes
            }
        } else {
            prunedAtOpen = 0
        }
        if !options.readOnly {
            // A set-aside cut short by a kill or a power cut left a partial copy in quarantine,
            // named by its marker: removed now. One lookup when there is none. A failure (a lock
            // held past the busy timeout) leaves it to the next open; readers skip it meanwhile.
            do {
                let removed = try Self.removeAbandonedSetAsides(connection)
                if removed > 0 {
                    options.logger.info(
                        "partial copies of states being set aside removed",
                        metadata: ["statestore.database": "\(path)", "statestore.count": "\(removed)"])
                }
            } catch {
                options.logger.info(
                    "partial copies of states being set aside not removed",
                    metadata: ["statestore.database": "\(path)", "statestore.error": "\(error.description)"])
            }
        }
        recordedSeal = Lock(
            try Self.recordSealing(connection, sealer: options.sealer, readOnly: options.readOnly || !recordingSeal))
        noStatesAtChangeCount = Self.noStatesAtChangeCount(connection)
        publishedChangeCount.store(connection.changeCount, ordering: .releasing)
        // The file is accepted: from now on a clean close checkpoints and removes the WAL,
        // and files of this user's that others could read are tightened.
        if !options.readOnly {
            connection.checkpointsOnClose = true
            if !isMemory { warnings += Self.tightenPermissions(of: path) }
        }
        let threadError = writeBehind.threadStartError
        if threadError != 0 {
            warnings.append(
                """
                the write-behind thread could not be started (errno \(threadError), \(String(cString: strerror(threadError))); \
                the process may be at its thread limit, RLIMIT_NPROC or its cgroup's pids.max): each structural \
                change is written before the call that made it returns, as with RestorationCoordinator.writesBehind = \
                false, and the integrity check after open does not run
                """)
        }
        for warning in warnings { options.logger.info("\(warning)", metadata: ["statestore.database": "\(path)"]) }
        self.warnings = warnings
        self.connection = Lock(connection)
        if let openedFile {
            backgroundChecker = BackgroundChecker.start(
                file: openedFile.name, identity: openedFile.identity, options: options, on: writeBehind
            )
        } else {
            backgroundChecker = nil
        }
        if let backgroundChecker, !options.readOnly {
            self.connection.withLock { $0.pausingCheckpoints = backgroundChecker }
        }
    }

    deinit {
        // Before the store's connection closes: the check is interrupted and its thread joined.
        backgroundChecker?.cancelAndWait()
    }

    /// A private in-memory store: the same schema and behaviour, nothing on disk.
    public static func inMemory(options: Options = .init()) throws(StateStoreError) -> StateStore {
        try StateStore(location: ":memory:", inMemory: true, options: options)
    }

    /// `$XDG_STATE_HOME/<appName>/state.sqlite`, else `~/.local/state/<appName>/state.sqlite`
    /// (the XDG Base Directory default). A relative `XDG_STATE_HOME` is ignored, as the spec says.
    public static func defaultPath(appName: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base: String
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = state
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = home + "/.local/state"
        }
        return base + "/" + appName + "/state.sqlite"
    }

    // MARK: Opening

    /// A `-shm` file whose index lists WAL frames not yet copied into the database, beside a
    /// missing `-wal` file, means committed saves were lost with the WAL (a backup or copy that
    /// left it behind). SQLite would silently open the older database; refuse instead, so the
    /// WAL can be put back. See <https://www.sqlite.org/walformat.html#the_wal_index_file_format>.
    static func refuseLostWAL(at path: String) throws(StateStoreError) {
        var wal = stat()
        let base = companionBase(of: path)
        guard lstat(base + "-wal", &wal) != 0, let header = FileKind.readPrefix(of: base + "-shm", count: 104),
            header.count == 104
        else { return }
        func word(_ offset: Int) -> UInt32 {
            header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        // WalIndexHdr: isInit at 12, mxFrame at 16; WalCkptInfo.nBackfill at 96 (native byte order).
        let isInitialised = header[12] != 0
        let lastFrame = word(16), backfilled = word(96)
        if isInitialised && lastFrame > backfilled {
            throw .walMissing(file: path, frames: Int(lastFrame - backfilled))
        }
    }

    /// SQLite opens any file and fails only on the first statement; read the schema
    /// (and, with `openCheck: .quick`, every page) now so a bad file is reported at open, untouched.
    private static func probe(_ connection: Connection, check: Options.OpenCheck) throws(StateStoreError) {
        _ = try connection.scalarInt("SELECT count(*) FROM sqlite_schema")
        let pragma: String
        switch check {
        case .header: return
        case .quick: pragma = "PRAGMA quick_check(5)"
        case .full: pragma = "PRAGMA integrity_check(5)"
        }
        let problems = try connection.integrityMessages(pragma)
        if problems != ["ok"] {
            throw .corrupt(
                file: connection.path,
                SQLiteFailure(
                    extendedResultCode: .corrupt, message: problems.joined(separator: "; "), sql: pragma
                ))
        }
    }

    /// The change count from which the database is known to hold no state, or `nil`. Another
    /// connection's commit after the look raises the count: `PRAGMA data_version` is read first,
    /// so one that lands between the two is seen by the next read of it. One descent of the
    /// table's b-tree: the same cost at any size. A table that cannot be read (a damaged page,
    /// left to the background check and to the reads that meet it) is taken to hold states.
    private static func noStatesAtChangeCount(_ connection: Connection) -> UInt64? {
        connection.noteOtherConnectionsCommits()
        guard (try? connection.scalarInt("SELECT NOT EXISTS (SELECT 1 FROM states)")) == 1 else { return nil }
        return connection.changeCount
    }

    // MARK: Access

    /// Runs `body` with the connection, under the lock, after the write-behind writes handed
    /// to the store so far have committed (unless `waitingForWrites` is `false`: only for a
    /// caller that knows none of them concerns what it reads).
    func withConnection<T: Sendable>(
        waitingForWrites: Bool = true, _ body: (Connection) throws(StateStoreError) -> T
    ) throws(StateStoreError) -> T {
        if waitingForWrites { writeBehind.waitUntilIdle() }
        return try connection.withLock { (connection: inout Connection) throws(StateStoreError) -> T in
            // Looked at under the lock, which the death takes to close the connection.
            if writeBehind.isAbandoned { throw Self.deadProcessError(path) }
            defer { publishedChangeCount.store(connection.changeCount, ordering: .releasing) }
            return try body(connection)
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: everything it writes
    /// commits together or not at all.
    ///
    /// ```swift
    /// try store.write { (transaction) throws(StateStoreError) in
    ///     try transaction.save(inbox, for: "root/inbox")
    ///     try transaction.remove("root/inbox/compose")
    /// }
    /// ```
    public func write<T: Sendable>(_ body: (WriteTransaction) throws(StateStoreError) -> T) throws(StateStoreError) -> T
    {
        try write(waitingForWrites: true, body)
    }

    /// ``write(_:)``, after the write-behind writes handed over so far have committed only when
    /// `waitingForWrites`: `false` only for a caller whose writes none of them touches (it then
    /// waits for the connection, one of the writer's transactions at most).
    func write<T: Sendable>(
        waitingForWrites: Bool, _ body: (WriteTransaction) throws(StateStoreError) -> T
    ) throws(StateStoreError) -> T {
        try withConnection(waitingForWrites: waitingForWrites) { (connection) throws(StateStoreError) -> T in
            do throws(StateStoreError) {
                return try connection.writeTransaction { () throws(StateStoreError) -> T in
                    try body(WriteTransaction(connection: connection, store: self))
                }
            } catch {
                // A sealing record the transaction wrote went with it: the copy follows the file.
                if let recorded = try? Self.readSealingRecord(connection) { recordedSeal.withLock { $0 = recorded } }
                throw error
            }
        }
    }

    /// Makes every commit so far survive a power cut, not only an application crash.
    ///
    /// With ``Options/Synchronous/normal`` (the default) a commit reaches the WAL in the page
    /// cache, and the WAL is synced to storage at checkpoints; this syncs it now (one
    /// `fdatasync`). With ``Options/Synchronous/full`` every commit already is, and this only
    /// waits for the write-behind writer. Flush points call it (see
    /// ``RestorationCoordinator/flush(archiving:)``), so what a flush point wrote survives a
    /// power cut in both modes.
    ///
    /// - Throws: ``StateStoreError/notSynced(file:_:)`` when the sync fails (an I/O error from
    ///   the storage). The commits stay in the database as every connection sees it; whether
    ///   they reached storage is unknown, and Linux reports such a failure once, so a later
    ///   sync that succeeds does not prove they did.
    public func synchronize() throws(StateStoreError) {
        try withConnection { (connection) throws(StateStoreError) in
            guard options.synchronous != .full else { return }
            try connection.syncJournal()
        }
    }

    /// Asks SQLite to give back the memory its page cache holds. Called on memory warnings.
    public func releaseMemory() {
        connection.withLock { $0.releaseMemory() }
    }

    /// Bytes held by the connection's page cache and prepared statements.
    public var memoryUsed: Int {
        connection.withLock { $0.memoryUsed }
    }
}

extension StateStore.Options {
    /// The durations are within what they can mean: the busy timeout from zero to SQLite's
    /// largest (`Int32.max` milliseconds, about 24.8 days), a retention of zero or more, the check
    /// after open's delay zero or more. Throws ``StateStoreError/invalidOption(name:reason:)``.
    func validateDurations() throws(StateStoreError) {
        let longestBusyTimeout = Duration.milliseconds(Int64(Int32.max))
        guard busyTimeout >= .zero, busyTimeout <= longestBusyTimeout else {
            throw .invalidOption(
                name: "busyTimeout",
                reason:
                    "is \(busyTimeout); it must be from zero to \(longestBusyTimeout) (Int32.max milliseconds, SQLite's longest)"
            )
        }
        if let retention, retention < .zero {
            throw .invalidOption(
                name: "retention", reason: "is \(retention); it must be zero or more (or nil to keep states for ever)")
        }
        switch backgroundCheck {
        case .quick(let after), .full(let after):
            guard after >= .zero else {
                throw .invalidOption(
                    name: "backgroundCheck", reason: "waits \(after) after open; the delay must be zero or more")
            }
        case .off:
            break
        }
    }
}
