import Foundation
import StateStoreLinux

/// A live process's claim on a window scene of a database: which process holds it, and since
/// when. Read from the scene's claim file (see ``StateStore/sceneHolder(of:)``).
public struct SceneHolder: Sendable, Hashable, CustomStringConvertible {
    /// The scene held.
    public var scene: String
    /// The process that holds it, as it recorded itself; `nil` when its record cannot be read
    /// (it is being written this instant, or something else wrote the file).
    public var processIdentifier: Int32?
    /// When the process took the scene; `nil` when its record cannot be read.
    public var since: Date?
    /// Whether the holder is the calling process.
    public var isThisProcess: Bool

    /// A holder with the given values; `nil` stands for a record that cannot be read.
    public init(scene: String, processIdentifier: Int32?, since: Date?, isThisProcess: Bool) {
        self.scene = scene
        self.processIdentifier = processIdentifier
        self.since = since
        self.isThisProcess = isThisProcess
    }

    /// `process 4242 since 2026-12-07T01:25:43.123Z`.
    public var description: String {
        let process = processIdentifier.map { "process \($0)" } ?? "a process"
        guard let since else { return process }
        return process + " since " + since.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// One hold of a scene by this process. The process's first hold of a scene takes an exclusive
/// open-file-description lock on the scene's claim file and writes its process id and the time
/// into it; further holds of the same scene in the process share that lock. The lock goes when
/// the last hold is released (its deinit) or the process dies: the kernel drops it with the
/// process, so a `kill -9` leaves no stale claim. It drops it once it has torn the process
/// down, a moment after the kill; a claim meanwhile waits for a holder that is dying (see
/// ``SceneClaims/claim(_:file:in:)``), so a relaunch right after a `kill -9` gets its scene back.
///
/// Open-file-description locks (`F_OFD_SETLK`), not `flock`: whether one is held can be asked
/// without taking it (`F_OFD_GETLK`), so `statectl inspect --scenes` or an app listing its free
/// scenes never holds a claim for an instant and turns a launching window away. Unlike the
/// process-wide `fcntl` locks SQLite uses, they belong to the open file description, so closing
/// another descriptor of the file drops nothing. The claim files are never removed: removing a
/// locked file lets a second process lock a new file of the same name, and two would hold the
/// scene. A file whose lock is gone is an unclaimed scene.
final class SceneClaim: Sendable {
    /// The scene held.
    let scene: String
    /// This process's record in the claim file.
    let holder: SceneHolder
    private let file: FileIdentity

    fileprivate init(scene: String, file: FileIdentity, since: Date) {
        self.scene = scene
        self.file = file
        holder = SceneHolder(scene: scene, processIdentifier: getpid(), since: since, isThisProcess: true)
    }

    deinit { SceneClaims.release(file) }
}

/// What trying to claim a scene found.
enum SceneClaimAttempt: Sendable {
    /// This process holds the scene now (it may have held it already).
    case claimed(SceneClaim)
    /// Another live process holds it.
    case held(SceneHolder)
}

/// The process's claims, by claim file: one open file description (and its lock) per file,
/// however many holds share it.
enum SceneClaims {
    private struct Held {
        let descriptor: Int32
        var holds: Int
        let since: Date
    }
    private static let held = Lock<[FileIdentity: Held]>([:])

    /// `scene` with every byte but ASCII letters, digits, `-`, `_` and a `.` not in first place
    /// written `%XX`: safe as a file name and on one line of a record, and undone by
    /// `removingPercentEncoding`.
    static func percentEncoded(_ scene: String) -> String {
        var name = ""
        for byte in scene.utf8 {
            let plain =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || (byte == 0x2E && !name.isEmpty)
            name += plain ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }
        return name
    }

    /// The name of `scene`'s claim file in a claim folder: ``percentEncoded(_:)``, then `.lock`;
    /// past 200 bytes, its first 120 and a hash of the whole.
    static func fileName(for scene: String) -> String {
        var name = percentEncoded(scene)
        if name.utf8.count > 200 {
            // FNV-1a: stable across processes and builds, unlike `Hasher`.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in scene.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            name = String(name.utf8.prefix(120))! + "~" + String(format: "%016llx", hash)
        }
        return name + ".lock"
    }

    /// Claims `scene` in `folder` (made, 0700, when missing) for this process. `file` names the
    /// claim file when it is not the scene's own (scenes that save under the default scene's
    /// paths share its claim).
    ///
    /// A scene held by a process that is dying (``HolderExit/state(of:)``: killed, exiting,
    /// or a zombie) is waited for, up to ``exitingHolderWait``: the kernel drops a dead
    /// process's lock only once it has torn the process down, which can take a moment after a
    /// `kill -9` (tens of milliseconds on a busy machine, more for a large process), and a
    /// relaunch in that moment would otherwise find the killed window's scene held and open a
    /// new one. A live holder is never waited for here.
    static func claim(
        _ scene: String, file claimed: String? = nil, in folder: String
    ) throws(StateStoreError) -> SceneClaimAttempt {
        let first = try attempt(scene, file: claimed, in: folder)
        guard case .held(let holder) = first, let pid = holder.processIdentifier, pid != getpid(),
            HolderExit.state(of: pid) == .exiting
        else { return first }
        let clock = ContinuousClock()
        let deadline = clock.now + exitingHolderWait
        var latest = first
        while clock.now < deadline {
            usleep(2_000)
            latest = try attempt(scene, file: claimed, in: folder)
            // Claimed; or taken meanwhile by another process, which is not the one dying.
            guard case .held(let still) = latest, still.processIdentifier == pid else { return latest }
            // Still dying, or reaped with its lock still held (a process that inherited the open
            // file description holds it, and may let go too): waited for, up to the deadline.
            // Alive again is its process id taken by a new process: no longer waited for.
            if HolderExit.state(of: pid) == .running { return latest }
        }
        return latest
    }

    /// How long ``claim(_:file:in:)`` waits for a dying holder's lock to go: two seconds.
    static let exitingHolderWait: Duration = .seconds(2)

    /// One try at ``claim(_:file:in:)``, without waiting for a dying holder.
    private static func attempt(
        _ scene: String, file claimed: String?, in folder: String
    ) throws(StateStoreError) -> SceneClaimAttempt {
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw .fileSystem(FileSystemFailure(operation: .createFolder, path: folder, errno: errno))
        }
        let path = folder + "/" + fileName(for: claimed ?? scene)
        // A file replaced between the open and the lock (another tool renamed one over it) is
        // not the one the next process opens: the lock counts only on the file the name names.
        for _ in 0..<8 {
            let (descriptor, file) = try openClaimFile(path, flags: O_RDWR | O_CREAT)
            let attempt = try held.withLock { (table) throws(StateStoreError) -> SceneClaimAttempt? in
                if var entry = table[file] {
                    // Held by this process already: the new descriptor is a second open file
                    // description, whose closing leaves the first one's lock alone.
                    close(descriptor)
                    entry.holds += 1
                    table[file] = entry
                    return .claimed(SceneClaim(scene: scene, file: file, since: entry.since))
                }
                guard clinux_ofd_lock(descriptor) == 0 else {
                    let code = errno
                    defer { close(descriptor) }
                    if code == EAGAIN || code == EACCES {
                        return .held(holder(of: scene, reading: descriptor, ours: false))
                    }
                    throw .fileSystem(FileSystemFailure(operation: .lock, path: path, errno: code))
                }
                var named = stat()
                guard lstat(path, &named) == 0, FileIdentity(named) == file else {
                    close(descriptor)
                    return nil
                }
                let since = Date()
                let record = Array(
                    "pid=\(getpid())\nsince=\(since.storedMilliseconds)\nscene=\(percentEncoded(scene))\n".utf8)
                // The record says who holds it; a failure to write it leaves the claim in force
                // (the lock is the claim), and readers then see "a process".
                if ftruncate(descriptor, 0) == 0 {
                    _ = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                }
                table[file] = Held(descriptor: descriptor, holds: 1, since: since)
                return .claimed(SceneClaim(scene: scene, file: file, since: since))
            }
            if let attempt { return attempt }
        }
        throw .busy(
            SQLiteFailure(
                extendedResultCode: .busy,
                message: "\(path) kept being replaced while this process tried to claim it; remove what replaces it",
                sql: nil
            ))
    }

    /// Opens the claim file at `path` (never through a symbolic link, never waiting on a FIFO)
    /// and makes sure it is a regular file. Throws ``StateStoreError/fileSystem(_:)`` otherwise.
    private static func openClaimFile(_ path: String, flags: Int32) throws(StateStoreError) -> (Int32, FileIdentity) {
        let descriptor = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            throw .fileSystem(FileSystemFailure(operation: .createFile, path: path, errno: errno))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw .fileSystem(FileSystemFailure(operation: .stat, path: path, errno: code))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .fileSystem(FileSystemFailure(operation: .createFile, path: path, errno: EINVAL))
        }
        return (descriptor, FileIdentity(info))
    }

    /// Ends one hold of the claim file `file`; the last one closes its descriptor, which
    /// drops the lock.
    fileprivate static func release(_ file: FileIdentity) {
        held.withLock { table in
            guard var entry = table[file] else { return }
            entry.holds -= 1
            if entry.holds > 0 {
                table[file] = entry
            } else {
                table[file] = nil
                close(entry.descriptor)
            }
        }
    }

    /// Who holds `scene` in `folder`, without taking it; `nil` when no live process does. `file`
    /// as for ``claim(_:file:in:)``.
    static func holder(
        of scene: String, file claimed: String? = nil, in folder: String
    ) throws(StateStoreError) -> SceneHolder? {
        try holder(atPath: folder + "/" + fileName(for: claimed ?? scene), scene: scene)
    }

    /// Every scene a live process holds in `folder`, by scene identifier. Anything in the folder
    /// that is not a claim file (a link, a folder, a FIFO) holds nothing and is passed over.
    static func holders(in folder: String) throws(StateStoreError) -> [SceneHolder] {
        guard let directory = opendir(folder) else {
            if errno == ENOENT { return [] }
            throw .fileSystem(FileSystemFailure(operation: .stat, path: folder, errno: errno))
        }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasSuffix(".lock") { names.append(name) }
        }
        closedir(directory)
        var holders: [SceneHolder] = []
        for name in names.sorted() {
            if let holder = try? holder(atPath: folder + "/" + name, scene: nil) { holders.append(holder) }
        }
        return holders.sorted { $0.scene < $1.scene }
    }

    /// Who holds the claim file at `path`. `scene`: the scene it is for, when known (else read
    /// from the record, or taken from the file name). A name that is not a regular file
    /// (missing, a link, a folder, a FIFO) is held by no one: no claim can be taken on it.
    private static func holder(atPath path: String, scene: String?) throws(StateStoreError) -> SceneHolder? {
        let descriptor: Int32
        let file: FileIdentity
        do {
            (descriptor, file) = try openClaimFile(path, flags: O_RDONLY)
        } catch .fileSystem(let failure) where [ENOENT, ELOOP, EINVAL, ENXIO, EISDIR].contains(failure.errno) {
            return nil
        }
        // Closing this descriptor drops no lock: the claim's lock is its own open file description's.
        defer { close(descriptor) }
        let named = String(path.split(separator: "/").last ?? "").dropLast(".lock".count)
        let fallback = scene ?? String(named).removingPercentEncoding ?? String(named)
        if held.withLock({ $0[file] != nil }) {
            return holder(of: fallback, reading: descriptor, ours: true, sceneFromRecord: scene == nil)
        }
        switch clinux_ofd_locked_elsewhere(descriptor) {
        case 0: return nil
        case 1: return holder(of: fallback, reading: descriptor, ours: false, sceneFromRecord: scene == nil)
        default: throw .fileSystem(FileSystemFailure(operation: .lock, path: path, errno: errno))
        }
    }

    /// The holder the record in the open claim file says (`pid=`, `since=` in milliseconds,
    /// `scene=`, one a line); what cannot be read is left `nil`.
    private static func holder(
        of scene: String, reading descriptor: Int32, ours: Bool, sceneFromRecord: Bool = false
    ) -> SceneHolder {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        var result = SceneHolder(scene: scene, processIdentifier: nil, since: nil, isThisProcess: ours)
        guard count > 0 else { return result }
        for line in String(decoding: bytes.prefix(count), as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("pid="), let pid = Int32(line.dropFirst(4)), pid > 0 {
                result.processIdentifier = pid
            } else if line.hasPrefix("since="), let milliseconds = Int64(line.dropFirst(6)) {
                result.since = Date(storedMilliseconds: milliseconds)
            } else if sceneFromRecord, line.hasPrefix("scene="),
                let scene = String(line.dropFirst(6)).removingPercentEncoding
            {
                result.scene = scene
            }
        }
        return result
    }
}

/// Whether the process a claim's record names is dying, as `/proc` shows it: a scene whose
/// holder was just killed is still locked until the kernel has torn the process down.
enum HolderExit {
    /// What `/proc` says of a process.
    enum State: Equatable {
        /// Alive, with no SIGKILL pending.
        case running
        /// SIGKILL pending (sent, not yet acted on), exiting (`PF_EXITING`), or a zombie.
        case exiting
        /// No such process (or `/proc` cannot be read).
        case gone
    }

    /// `PF_EXITING` in the flags of `/proc/PID/stat` (field 9): the process is in `do_exit`.
    static let exitingFlag: UInt64 = 0x4
    /// SIGKILL's bit in the masks of `/proc/PID/status` (`SigPnd`, `ShdPnd`): signal N is bit N-1.
    static let killBit: UInt64 = 1 << (UInt64(SIGKILL) - 1)

    /// The state of process `pid`, from `/proc/PID/stat` and `/proc/PID/status`.
    static func state(of pid: Int32) -> State {
        guard let stat = contents(of: "/proc/\(pid)/stat") else { return .gone }
        return isExiting(stat: stat, status: contents(of: "/proc/\(pid)/status")) ? .exiting : .running
    }

    /// Whether `/proc/PID/stat`'s text `stat` and `/proc/PID/status`'s `status` show a dying
    /// process: state `Z`, `X` or `x`, `PF_EXITING` in its flags, or SIGKILL pending for its
    /// thread (`SigPnd`) or its thread group (`ShdPnd`).
    static func isExiting(stat: String, status: String?) -> Bool {
        // After the command's closing parenthesis (a command may hold one): state, ppid,
        // pgrp, session, tty_nr, tpgid, flags.
        if let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if let state = fields.first, ["Z", "X", "x"].contains(state) { return true }
            if fields.count > 6, let flags = UInt64(fields[6]), flags & exitingFlag != 0 { return true }
        }
        for line in (status ?? "").split(separator: "\n") where line.hasPrefix("SigPnd:") || line.hasPrefix("ShdPnd:") {
            let mask = line.dropFirst("SigPnd:".count).trimmingCharacters(in: .whitespaces)
            if let bits = UInt64(mask, radix: 16), bits & killBit != 0 { return true }
        }
        return false
    }

    /// The text of a `/proc` file (whose size says nothing), or `nil`.
    private static func contents(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}

extension StateStore {
    // MARK: Scene claims

    /// The scene whose claim file `scene` is claimed through: its own, except for a scene that
    /// saves under the default scene's paths (one archived before scenes had identities, whose
    /// path prefix is empty), which shares the default scene's claim: its windows would write
    /// the same rows.
    func claimFile(of scene: String) throws(StateStoreError) -> String {
        // "main": the default scene's identifier, as the `scenes` table records it.
        guard scene != "main", try scenePathPrefix(scene: scene) == "" else { return scene }
        return "main"
    }

    /// Who holds `scene` now: the live process (this one or another) whose window shows it,
    /// or `nil` when none does. Reads the scene's claim file in ``sceneClaimFolder`` and takes
    /// nothing, so asking never turns a launching window away. A scene archived before scenes
    /// had identities shares the default scene's claim (their windows save under the same
    /// paths). Always `nil` in memory.
    public func sceneHolder(of scene: String) throws(StateStoreError) -> SceneHolder? {
        guard let sceneClaimFolder else { return nil }
        return try SceneClaims.holder(of: scene, file: try claimFile(of: scene), in: sceneClaimFolder)
    }

    /// Every scene of this database a live process holds now, by scene identifier, including
    /// scenes not archived yet (a window opened since its last structural change).
    public func sceneHolders() throws(StateStoreError) -> [SceneHolder] {
        guard let sceneClaimFolder else { return [] }
        return try SceneClaims.holders(in: sceneClaimFolder)
    }

    /// Whether a process may hold `scene`: its claim file exists and is a regular file (looked
    /// at without opening it), or cannot be looked at.
    func sceneMayBeClaimed(_ scene: String) -> Bool {
        guard let sceneClaimFolder, let file = try? claimFile(of: scene) else { return true }
        var info = stat()
        guard lstat(sceneClaimFolder + "/" + SceneClaims.fileName(for: file), &info) == 0 else {
            return errno != ENOENT && errno != ENOTDIR
        }
        return info.st_mode & S_IFMT == S_IFREG
    }

    /// Claims `scene` for this process (see ``SceneClaim``); `nil` in memory.
    func claimScene(_ scene: String) throws(StateStoreError) -> SceneClaimAttempt? {
        guard let sceneClaimFolder else { return nil }
        return try SceneClaims.claim(scene, file: try claimFile(of: scene), in: sceneClaimFolder)
    }
}
