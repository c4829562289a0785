import Crypto
import Foundation
import StateStore
import StateStoreLinux

#if canImport(Glibc)
import Glibc
#endif

/// A key that seals states, from where Linux keeps secrets: bytes the app holds, a key file, or
/// a systemd credential.
///
/// The key material is used only as input to HKDF-SHA256, which derives one subkey per purpose
/// (sealing, the synthetic nonce, the key's identifier), so the raw key never serves two
/// purposes. ``id`` names the key without revealing it: it is what a sealed row records and
/// what errors and `statectl` show. No description, log record or error holds key material.
///
/// ```swift
/// let key = try StateKey.credential("app-state-key")  // $CREDENTIALS_DIRECTORY/app-state-key
/// let store = try StateStore(path: path, options: .init(sealer: StateKeyring(key)))
/// ```
public struct StateKey: Sendable, CustomStringConvertible {
    /// The key's identifier: 16 hex digits derived from the key (HKDF, info `statestore.key-id.v1`).
    public let id: String
    /// Where the key came from, in words: "a key passed by the app", "key file /etc/…",
    /// "credential app-state-key". Never the key itself.
    public let source: String
    /// AES-256-GCM key.
    let sealing: SymmetricKey
    /// HMAC-SHA256 key for the synthetic nonce.
    let nonce: SymmetricKey

    /// The fewest bytes of key material accepted: 32. Random bytes are 256 bits; a text key
    /// counts its characters, so 64 hex digits (`openssl rand -hex 32`) hold as many.
    public static let minimumByteCount = 32
    /// The most bytes a key file or credential may hold: 4096.
    public static let maximumByteCount = 4096

    /// A key from bytes the app holds (at least ``minimumByteCount`` of them).
    public init(_ key: SymmetricKey) throws(StateKeyError) {
        try self.init(material: key, source: "a key passed by the app")
    }

    /// A key from raw bytes the app holds (at least ``minimumByteCount`` of them).
    public init(bytes: some ContiguousBytes) throws(StateKeyError) {
        try self.init(material: SymmetricKey(data: bytes), source: "a key passed by the app")
    }

    private init(material: SymmetricKey, source: String) throws(StateKeyError) {
        let count = material.bitCount / 8
        guard count >= Self.minimumByteCount else { throw .tooShort(source: source, byteCount: count) }
        func derive(_ info: String, _ bytes: Int) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: material, salt: Data("statestore".utf8), info: Data(info.utf8), outputByteCount: bytes
            )
        }
        sealing = derive("statestore.seal.v1", 32)
        nonce = derive("statestore.nonce.v1", 32)
        id = derive("statestore.key-id.v1", 8).withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        self.source = source
    }

    /// The key in the file at `path`: at least ``minimumByteCount`` bytes, taken whole
    /// (`head -c 32 /dev/urandom > key`), or, for a text key (`openssl rand -hex 32 > key`), its
    /// text less one trailing line ending.
    ///
    /// The file must be a regular file owned by this process's user that nobody else can read
    /// or write (mode `0600` or `0400`): ``StateKeyError/readableByOthers(path:mode:)`` and
    /// ``StateKeyError/wrongOwner(path:owner:expected:)`` otherwise, before a byte is read.
    public static func file(_ path: String) throws(StateKeyError) -> StateKey {
        let source = "key file \(path)"
        return try StateKey(material: secret(at: path, provider: .user, source: source), source: source)
    }

    /// The systemd credential `name`: the file `$CREDENTIALS_DIRECTORY/name` that systemd
    /// provides to a service with `LoadCredential=` or `LoadCredentialEncrypted=`. It is checked
    /// as systemd writes it: a regular file owned by this process's user or by root (systemd,
    /// which grants a service running as another user its read through an ACL), that others
    /// cannot read and the group cannot write.
    ///
    /// - Parameter environment: where `CREDENTIALS_DIRECTORY` is read; the process's by default.
    public static func credential(
        _ name: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(StateKeyError) -> StateKey {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.utf8.contains(0) else {
            throw .invalidCredentialName(name)
        }
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw .noCredentialsDirectory(name: name)
        }
        let source = "credential \(name)"
        return try StateKey(
            material: secret(at: directory + "/" + name, provider: .systemd, source: source), source: source)
    }

    public var description: String { "StateKey(\(id), \(source))" }

    /// The file's key material; the buffer it was read into is overwritten once it is copied
    /// into the key (whose own storage swift-crypto clears when it is released). `source` names
    /// the key in a ``StateKeyError/tooShort(source:byteCount:)``, as the key's ``source`` would.
    private static func secret(
        at path: String, provider: Provider, source: String
    ) throws(StateKeyError) -> SymmetricKey {
        var bytes = try readSecret(at: path, provider: provider, source: source)
        defer { clear(&bytes) }
        return SymmetricKey(data: bytes)
    }

    private static func clear(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { _ = memset(base, 0, buffer.count) }
        }
    }

    /// Whether the file open at `fd` has a POSIX ACL (`system.posix_acl_access`: a version, then
    /// 8-byte entries of tag, permissions and id, little-endian) in which no named user but this
    /// process's, no group and no other may read, and nobody but the owner may write: what
    /// systemd writes for a service that runs as another user.
    private static func aclGrantsReadToThisUserAlone(_ fd: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 4 + 8 * 64)
        let count = bytes.withUnsafeMutableBytes { fgetxattr(fd, "system.posix_acl_access", $0.baseAddress, $0.count) }
        guard count >= 4, (count - 4) % 8 == 0, bytes[0] == 2, bytes[1...3].allSatisfy({ $0 == 0 }) else {
            return false
        }
        func field(_ offset: Int, _ size: Int) -> UInt32 {
            (0..<size).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
        }
        let me = UInt32(geteuid())
        for entry in stride(from: 4, to: count, by: 8) {
            let tag = field(entry, 2), permissions = field(entry + 2, 2), id = field(entry + 4, 4)
            switch tag {
            case 0x01, 0x10: continue  // the owner's own entry, and the mask
            case 0x02: if permissions & 2 != 0 || (permissions & 4 != 0 && id != me) { return false }  // a named user
            default: if permissions & 6 != 0 { return false }  // the owning group, a named group, others
            }
        }
        return true
    }

    /// Who put a key file where it is read from, which decides who may own it.
    private enum Provider {
        /// A key file the user made: theirs, mode 0600 or 0400.
        case user
        /// A credential systemd wrote for the service: owned by root (systemd) and mode 0400,
        /// with a POSIX ACL granting the service's user read access when the service runs as
        /// another user (`User=`, `DynamicUser=`), which shows as a group read bit (the ACL's
        /// mask, checked against the ACL itself); owned by the service's user where the file
        /// system has no ACLs.
        case systemd
    }

    /// The file's bytes, after checking that it is a regular file of this user's (or, for a
    /// systemd credential, systemd's) that nobody else can read or write; one trailing newline removed.
    private static func readSecret(
        at path: String, provider: Provider, source: String
    ) throws(StateKeyError) -> [UInt8] {
        // O_NONBLOCK: a FIFO at the path must not block the open; it is refused below.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            throw code == ENOENT
                ? .notFound(path: path) : .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        // Checked on the open descriptor: what is read is what was checked.
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: path, reason: "it is not a regular file")
        }
        switch provider {
        case .user:
            guard info.st_uid == geteuid() else {
                throw .wrongOwner(path: path, owner: info.st_uid, expected: geteuid())
            }
            guard info.st_mode & 0o077 == 0 else {
                throw .readableByOthers(path: path, mode: UInt32(info.st_mode & 0o7777))
            }
        case .systemd:
            guard info.st_uid == geteuid() || info.st_uid == 0 else {
                throw .wrongOwner(path: path, owner: info.st_uid, expected: geteuid())
            }
            // A group read bit is taken only as the mask of an ACL that grants read to this
            // process's user alone; write access for the group, or any access for others, never.
            guard info.st_mode & 0o027 == 0, info.st_mode & 0o040 == 0 || aclGrantsReadToThisUserAlone(fd) else {
                throw .readableByOthers(path: path, mode: UInt32(info.st_mode & 0o7777))
            }
        }
        guard Int(info.st_size) <= maximumByteCount else {
            throw .unreadable(
                path: path, reason: "it holds \(info.st_size) bytes, over the \(maximumByteCount) a key file may hold")
        }
        var bytes = [UInt8](repeating: 0, count: maximumByteCount + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumByteCount else {
            throw .unreadable(
                path: path, reason: "it holds more than the \(maximumByteCount) bytes a key file may hold")
        }
        guard count == Int(info.st_size) else {
            // A pseudo-file (/proc, /sys) reports a size it does not have: not a key file.
            clear(&bytes)
            throw .unreadable(
                path: path, reason: "it reads \(count) bytes but its size is \(info.st_size) (not a plain file)")
        }
        // A text key (hex, base64) loses its line ending; a binary key is taken whole, whatever
        // its last byte. Shortened in place, so the buffer cleared afterwards is the one read into.
        var length = count
        if bytes[..<count].allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x0A || $0 == 0x0D }) {
            if length > 0, bytes[length - 1] == 0x0A { length -= 1 }
            if length > 0, bytes[length - 1] == 0x0D { length -= 1 }
        }
        for index in length..<bytes.count { bytes[index] = 0 }
        bytes.removeLast(bytes.count - length)
        guard length >= minimumByteCount else {
            clear(&bytes)
            throw .tooShort(source: source, byteCount: length)
        }
        return bytes
    }
}

/// Why a key could not be had. Each case says what to do; none holds key material.
public enum StateKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key material is shorter than ``StateKey/minimumByteCount``.
    case tooShort(source: String, byteCount: Int)
    /// The key file does not exist.
    case notFound(path: String)
    /// The key file could not be read, or is not a regular file.
    case unreadable(path: String, reason: String)
    /// The key file's mode lets other users read or write it.
    case readableByOthers(path: String, mode: UInt32)
    /// The key file belongs to another user.
    case wrongOwner(path: String, owner: UInt32, expected: UInt32)
    /// `CREDENTIALS_DIRECTORY` is not set: the process was not started by systemd with credentials.
    case noCredentialsDirectory(name: String)
    /// The credential name is empty, `.`, `..`, or holds a `/` or NUL.
    case invalidCredentialName(String)

    public var description: String {
        switch self {
        case .tooShort(let source, let byteCount):
            "The key from \(source) has \(byteCount) bytes; a key needs at least \(StateKey.minimumByteCount) random bytes (`head -c 32 /dev/urandom > key`)."
        case .notFound(let path):
            "There is no key file at \(path). Point at the file the states were sealed with; nothing was opened."
        case .unreadable(let path, let reason):
            "The key file \(path) cannot be read: \(reason)."
        case .readableByOthers(let path, let mode):
            "The key file \(path) has mode \(String(mode, radix: 8)), so other users can read or change it; it was not read. "
                + (Self.isCredential(path) ? Self.credentialAdvice : "Run `chmod 600 \(path)`")
                + ", and make a new key if others may have read this one."
        case .wrongOwner(let path, let owner, let expected):
            "The key file \(path) belongs to user \(owner), not to this process's user \(expected); it was not read. Give the process its own copy (`chown`, mode 600)."
        case .noCredentialsDirectory(let name):
            "The credential \(name) was asked for, but CREDENTIALS_DIRECTORY is not set: run the program from a systemd unit with `LoadCredential=\(name):/path/to/key` (or `LoadCredentialEncrypted=`), or pass a key file."
        case .invalidCredentialName(let name):
            "\(name.debugDescription) is not a credential name: it must be a plain file name, without `/`."
        }
    }

    /// Whether `path` is in the process's `CREDENTIALS_DIRECTORY`: a file systemd wrote, whose
    /// mode `chmod` is not the way to fix.
    private static func isCredential(_ path: String) -> Bool {
        guard let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            return false
        }
        return path.hasPrefix(directory.hasSuffix("/") ? directory : directory + "/")
    }

    private static let credentialAdvice =
        "systemd writes a credential readable by the service's user alone (owned by root or that user, mode 0400, with an ACL for a `User=` service): load it with `LoadCredential=` or `LoadCredentialEncrypted=` in the unit, rather than setting CREDENTIALS_DIRECTORY to a folder of your own"
}
