import Foundation
import Logging
import StateStoreLinux

extension StateStore {
    /// What ``StateStore/openOrRecover(path:options:)`` did with a database it could not open.
    public struct Recovery: Sendable, Hashable {
        /// Why the old database could not be used.
        public var reason: StateStoreError
        /// Where the database file (and its `-wal`/`-shm`, with the same suffix) now is.
        public var movedTo: String
        /// What the fresh database holds of the old one: the states whose bytes still match
        /// their checksums, the window hierarchy archives, the quarantine, and the rest that
        /// could be read.
        public var salvage: Salvage
    }

    /// Opens the database at `path`; when it is damaged, not a database, its WAL is lost, or its
    /// tables or triggers were changed outside StateStore, moves it aside as
    /// `<path>.broken-<UTC timestamp>` (with its `-wal` and `-shm`) and starts a fresh one
    /// holding everything of the old one that can still be read and checked. Nothing is
    /// deleted, and the moved file is not changed.
    ///
    /// What survives is copied into the fresh database in one transaction, synced before this
    /// returns (``Recovery/salvage`` counts it): every state whose row SQLite can still read and
    /// whose bytes match the checksum stored with them (and whose other columns show none of the
    /// damage ``Salvage/statesLeftBehind`` lists), the window hierarchy archives, the quarantined
    /// rows, the memory-pressure events and the metadata. Where SQLite cannot read a page of the
    /// states, the copy goes on past it and the states on it stay behind; a file that is not a
    /// database, or whose schema cannot be read, gives an empty fresh one. The copy reads the whole
    /// old file once, at this launch only.
    ///
    /// The fresh database is built beside the old one as `<path>.recovering`, and takes its name
    /// only once it is whole: the old file stays where it is until then. A crash or a power cut
    /// during the copy leaves it there, and the next call recovers it again (removing the copy
    /// cut short); one between the two renames that end it is finished by the next open of
    /// `path`, by this call or ``init(path:options:)``. When the copy cannot be made (a full
    /// disk, an I/O error), it is removed and that error is thrown: nothing changed. A `path`
    /// that is a symbolic link is followed: the file it leads to is moved aside beside itself
    /// and made afresh, so the link leads to the fresh one.
    ///
    /// Damage is seen as far as ``Options/openCheck`` reads: the default, ``Options/OpenCheck/header``,
    /// sees a file that is not a database, a lost WAL and a damaged schema; pass
    /// ``Options/OpenCheck/quick`` to read every page (as an app may at the launch after its
    /// ``Options/backgroundCheck`` reported ``StateStoreError/corrupt(file:_:)``).
    ///
    /// A database whose schema version records were changed outside StateStore while its tables
    /// are the current schema's exactly is repaired in place (``repairSchemaVersion(at:)``), not moved;
    /// when the repair fails for a reason that may pass (a lock, an I/O error, a full disk), that
    /// error is thrown and nothing is moved.
    ///
    /// A database another process or another store of this process has open is not moved, nor
    /// one another process is recovering
    /// (a recovery holds an exclusive `flock` on `<path>.recovering-lock` until it ends):
    /// ``StateStoreError/busy(_:)`` says so. A file another process's recovery put in the
    /// path's place after this call found it damaged is opened as it is, not recovered again.
    ///
    /// With ``Options/readOnly``, nothing is moved or written: the error the open met is thrown.
    ///
    /// A database from a newer build (``StateStoreError/schemaTooNew(file:found:supported:)``)
    /// is not broken and is never moved; nor is another program's database
    /// (``StateStoreError/notAStateStore(file:reason:)``): those errors are rethrown, as is anything else.
    public static func openOrRecover(
        path: String, options: Options = .init()
    ) throws(StateStoreError) -> (store: StateStore, recovery: Recovery?) {
        // Another process may recover the same file meanwhile and put its copy in the file's
        // place: a recovery goes ahead only while the file is the one this open found damaged.
        // Tried again, a few times, when it was replaced before the recovery could claim it.
        for _ in 0..<3 {
            if let opened = try openOrRecoverOnce(path: path, options: options) { return opened }
        }
        throw .busy(
            SQLiteFailure(
                extendedResultCode: .busy,
                message:
                    "\(path) was replaced by another process's recovery three times while this one tried to recover it; open it again",
                sql: nil
            ))
    }

    /// One attempt of ``openOrRecover(path:options:)``; `nil` when the file was replaced by
    /// another process before its recovery could be claimed (see ``RecoveryClaim``).
    private static func openOrRecoverOnce(
        path: String, options: Options
    ) throws(StateStoreError) -> (store: StateStore, recovery: Recovery?)? {
        let found = try? FileIdentity.of(path).get()
        do {
            return (try StateStore(path: path, options: options), nil)
        } catch {
            // A read-only open writes nothing: a broken file is reported, not moved.
            guard !options.readOnly else { throw error }
            switch error {
            case .schemaMismatch:
                // Only the version records were changed, and the tables are the current schema's
                // exactly: put right in place, as `statectl migrate --repair` does. Nothing is
                // moved, unless the file still does not open once repaired.
                guard try repairsSchemaVersion(at: path) else { break }
                do {
                    return (try StateStore(path: path, options: options), nil)
                } catch  where error.isTransient {
                    throw error
                } catch {}
            case .corrupt, .notADatabase, .walMissing:
                break
            default:
                throw error
            }
            // The file itself, where a symbolic link leads (SQLite names its -wal and -shm after
            // it): moved beside itself, and made afresh there, so the link leads to the fresh one.
            let file = recoveryFile(of: path)
            // The copy's name is this recovery's until it ends: another process's recovery of the
            // same file is refused meanwhile, and a file replaced since this open found it
            // damaged is not this recovery's to move.
            let copy = recoveryCopy(of: file)
            let claim = try RecoveryClaim(copy: copy, of: path)
            defer { claim.release() }
            guard (try? FileIdentity.of(path).get()) == found else { return nil }
            // Moving a file a store has open would leave that store writing to the moved one
            // while this one starts afresh: refused, nothing moved.
            if OpenDatabaseFiles.contains(file) {
                throw .busy(
                    SQLiteFailure(
                        extendedResultCode: .busy,
                        message:
                            "\(path) is open in this process (another StateStore has it open), so it was not moved aside; release that store, then open it again",
                        sql: nil
                    ))
            }
            if isOpenInAnotherProcess(file) {
                throw .busy(
                    SQLiteFailure(
                        extendedResultCode: .busy,
                        message:
                            "\(path) is open in another process (it holds the database's -shm), so it was not moved aside; close that process, then open it again",
                        sql: nil
                    ))
            }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            var destination = "\(file).broken-\(formatter.string(from: Date()))"
            var attempt = 1
            while FileManager.default.fileExists(atPath: destination) {
                attempt += 1
                destination = "\(file).broken-\(formatter.string(from: Date()))-\(attempt)"
            }
            let folder = (file as NSString).deletingLastPathComponent
            // What survives is copied first, into a file of its own beside the damaged one,
            // which stays where it is until the copy is whole: a crash or a power cut during the
            // copy leaves the damaged file in place, and the next open recovers it again.
            var salvage = Salvage()
            claim.removeCopy()  // what a recovery cut short left
            /// The copy, by a store that is closed (its WAL checkpointed into the copy and
            /// removed) when this returns.
            func salvaged() throws(StateStoreError) -> Salvage {
                var copying = options
                copying.backgroundCheck = .off
                copying.openCheck = .header
                let copier = try StateStore(path: copy, options: copying)
                return try copier.salvage(from: file)
            }
            do throws(StateStoreError) {
                salvage = try salvaged()
                // On storage before it takes the name: after a power cut, the damaged file
                // (by then aside) must not be replaced by a copy the storage never had.
                try syncFile(copy)
                // A process that opened the file while it was copied would go on writing
                // to it once moved aside: refused, nothing moved. (One that opens it in the
                // moment between this look and the renames is not seen.)
                if isOpenInAnotherProcess(file) {
                    throw .busy(
                        SQLiteFailure(
                            extendedResultCode: .busy,
                            message:
                                "\(path) was opened by another process while it was being recovered, so it was not moved aside; close that process, then open it again",
                            sql: nil
                        ))
                }
            } catch {
                // A copy that cannot be made (a full disk), or a file opened meanwhile: the copy
                // is removed, and the damaged file stays where it is, as if nothing had been tried.
                claim.removeCopy()
                options.logger.info(
                    "database left in place: the recovery could not be finished",
                    metadata: [
                        "statestore.database": "\(path)", "statestore.error": "\(error.description)",
                    ])
                throw error
            }
            // The damaged file moves aside, its WAL and index first (a WAL left behind beside the
            // copy would be replayed into it), then the copy takes its name. On any failure, what
            // was moved goes back and the copy is removed.
            var moved: [String] = []
            /// Renames `from` to `to`; when that fails, undoes what was done and throws why.
            func move(_ from: String, to: String) throws(StateStoreError) {
                guard rename(from, to) != 0 else { return }
                let failure = FileSystemFailure(operation: .move, path: from, errno: errno)
                for done in moved.reversed() { _ = rename(destination + done, file + done) }
                claim.removeCopy()
                syncFolder(folder)
                throw .fileSystem(failure)
            }
            for suffix in ["-wal", "-shm", ""] where FileManager.default.fileExists(atPath: file + suffix) {
                try move(file + suffix, to: destination + suffix)
                moved.append(suffix)
            }
            try move(copy, to: file)
            claim.removeCopysIndex()
            // The renames live in the folder's entries: synced before anything is written to the
            // copy in its place.
            syncFolder(folder)
            options.logger.info(
                "database moved aside",
                metadata: [
                    "statestore.database": "\(path)", "statestore.moved_to": "\(destination)",
                    "statestore.reason": "\(error.description)",
                ])
            options.logger.info(
                "database salvaged",
                metadata: [
                    "statestore.database": "\(path)", "statestore.salvaged_states": "\(salvage.states)",
                    "statestore.states_left_behind": "\(salvage.statesLeftBehind)",
                    "statestore.unreadable_stretches": "\(salvage.unreadableStretches)",
                    "statestore.salvaged_archives": "\(salvage.archives)",
                    "statestore.error": "\(salvage.error?.description ?? "none")",
                ])
            return (
                try StateStore(path: path, options: options),
                Recovery(reason: error, movedTo: destination, salvage: salvage)
            )
        }
    }

    /// Where ``openOrRecover(path:options:)`` builds the copy of the damaged database `file`
    /// before it takes the file's name.
    static func recoveryCopy(of file: String) -> String { file + ".recovering" }

    /// Finishes a recovery a crash or a power cut stopped between moving the damaged file aside
    /// and giving its copy the name, before the missing database at `path` would be made afresh:
    /// a whole copy beside it (its store closed, so no `-wal`) takes the name. A copy that is not
    /// whole was cut short: it is removed. Returns whether a copy took the name.
    static func finishInterruptedRecovery(at path: String) throws(StateStoreError) -> Bool {
        let file = recoveryFile(of: path)
        let copy = recoveryCopy(of: file)
        var info = stat()
        guard stat(copy, &info) == 0, stat(file, &info) != 0, errno == ENOENT else { return false }
        // Another process's recovery, under way, is its own to finish: refused, rather than
        // making a fresh file its copy would then replace.
        let claim = try RecoveryClaim(copy: copy, of: path)
        defer { claim.release() }
        guard stat(file, &info) != 0, errno == ENOENT else { return false }  // put in place meanwhile
        guard isWholeRecoveryCopy(copy) else {
            claim.removeCopy()
            return false
        }
        guard rename(copy, file) == 0 else {
            throw .fileSystem(FileSystemFailure(operation: .move, path: copy, errno: errno))
        }
        claim.removeCopysIndex()
        syncFolder((file as NSString).deletingLastPathComponent)
        return true
    }

    /// Whether the database at `path` is missing beside a whole recovery copy, which the next
    /// read-write open puts in its place (``finishInterruptedRecovery(at:)``).
    package static func isMissingBesideWholeRecoveryCopy(_ path: String) -> Bool {
        let file = recoveryFile(of: path)
        var info = stat()
        return stat(file, &info) != 0 && errno == ENOENT && isWholeRecoveryCopy(recoveryCopy(of: file))
    }

    /// Whether the recovery copy `copy` is whole: its store closed, so it has pages and no WAL
    /// and no rollback journal (the salvage writes through one). An empty copy is the start of
    /// one, stopped before its first page.
    static func isWholeRecoveryCopy(_ copy: String) -> Bool {
        var info = stat()
        return stat(copy, &info) == 0 && info.st_size > 0 && stat(copy + "-wal", &info) != 0
            && stat(copy + "-journal", &info) != 0
    }

    /// The file the database at `path` is: where a symbolic link leads, even when nothing is
    /// there (its file moved aside during a recovery).
    static func recoveryFile(of path: String) -> String {
        var link = stat()
        guard lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK else { return path }
        // A link is never its own real path: the same one back means nothing is there.
        let resolved = companionBase(of: path)
        if resolved != path { return resolved }
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return path }
        return target.hasPrefix("/")
            ? target : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
    }

    /// Syncs the file at `path` to storage; a sync that fails throws
    /// ``StateStoreError/notSynced(file:_:)``.
    static func syncFile(_ path: String) throws(StateStoreError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        let synced = descriptor >= 0 && fsync(descriptor) == 0
        let code = errno
        if descriptor >= 0 { close(descriptor) }
        guard synced else {
            throw .notSynced(
                file: path,
                SQLiteFailure(
                    extendedResultCode: .ioError,
                    message: "the file could not be synced to storage (\(String(cString: strerror(code))))", sql: nil
                ))
        }
    }

    /// Whether another process has the database at `path` open: every SQLite connection to a WAL
    /// database holds a shared lock on byte 128 of its `-shm` (the "dead man switch" SQLite looks
    /// at to tell whether it is the first connection) for as long as it is open.
    static func isOpenInAnotherProcess(_ path: String) -> Bool {
        // Open here counts too, and is not looked at through a descriptor of the -shm, whose
        // close would drop this process's own locks on it.
        var locked = true
        OpenDatabaseFiles.lookUnlessOpen(at: path) {
            let descriptor = open(path + "-shm", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else {
                locked = false
                return
            }
            locked = clinux_byte_locked_elsewhere(descriptor, 128) == 1
            close(descriptor)
        }
        return locked
    }

    /// Whether ``repairSchemaVersion(at:)`` left the version records right (or found them
    /// right). `false` when the file cannot be repaired (its tables differ, it is damaged), which
    /// moves it aside; a failure that may pass (a lock, an I/O error, a full disk) is thrown,
    /// as it says nothing of the file, which stays where it is.
    private static func repairsSchemaVersion(at path: String) throws(StateStoreError) -> Bool {
        do {
            _ = try repairSchemaVersion(at: path)
            return true
        } catch  where error.isTransient {
            throw error
        } catch {
            return false
        }
    }
}

/// The right to build a recovery's copy (`<file>.recovering`) and rename it into place: an
/// exclusive `flock` on a lock file of its own (`<file>.recovering-lock`), taken before anything
/// is written to the copy and held until the recovery ends. The lock file is never a database,
/// so closing it drops no SQLite lock of this process (closing any descriptor of a file drops
/// every `fcntl` lock the process holds on that file). `flock` locks are apart from `fcntl`
/// ones, and the kernel drops them with the process that held them, so a recovery stopped by a
/// crash leaves no claim behind. The lock file is removed as the claim ends.
final class RecoveryClaim {
    private var descriptor: Int32
    private let copy: String
    private let lock: String

    /// Claims the copy `copy`. Throws ``StateStoreError/busy(_:)`` when another recovery of the
    /// database at `path` holds it, and ``StateStoreError/fileSystem(_:)`` when the lock file
    /// cannot be made or locked.
    init(copy: String, of path: String) throws(StateStoreError) {
        self.copy = copy
        lock = copy + "-lock"
        // The lock file is removed by the claim that ends, and may be made again by another:
        // the lock counts only on the file that still has the name.
        for _ in 0..<8 {
            let descriptor = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
            guard descriptor >= 0 else {
                throw .fileSystem(FileSystemFailure(operation: .createFile, path: lock, errno: errno))
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                close(descriptor)
                if code == EWOULDBLOCK {
                    throw .busy(
                        SQLiteFailure(
                            extendedResultCode: .busy,
                            message:
                                "\(path) is being recovered by another process (it holds \(lock)); wait for it to finish, then open it again",
                            sql: nil
                        ))
                }
                throw .fileSystem(FileSystemFailure(operation: .lock, path: lock, errno: code))
            }
            var held = stat()
            if fstat(descriptor, &held) == 0, (try? FileIdentity.of(lock).get()) == FileIdentity(held) {
                self.descriptor = descriptor
                return
            }
            close(descriptor)
        }
        throw .busy(
            SQLiteFailure(
                extendedResultCode: .busy,
                message: "\(lock) kept being replaced while this recovery tried to claim it; open \(path) again",
                sql: nil
            ))
    }

    /// Removes the copy and what its store left beside it (the claim is still held).
    func removeCopy() {
        for suffix in ["-wal", "-shm", "-journal", ""] { _ = unlink(copy + suffix) }
    }

    /// Removes the index a closed store leaves beside the copy (`-wal`, `-shm`) once the copy has
    /// taken the database's name.
    func removeCopysIndex() {
        for suffix in ["-wal", "-shm"] { _ = unlink(copy + suffix) }
    }

    /// Ends the claim: the lock file is removed while still locked, then let go.
    func release() {
        guard descriptor >= 0 else { return }
        _ = unlink(lock)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
