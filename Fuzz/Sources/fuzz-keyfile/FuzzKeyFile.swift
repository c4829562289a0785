import Foundation
import FuzzSupport
import Glibc
import StateStore
import StateStoreCrypto

// The key-file reader behind statectl's `--key-file` and `--credential` (statectl's `KeyOptions`
// calls `StateKey.file` and `StateKey.credential`; the bytes are read and checked by their shared
// reader in StateStoreCrypto). Each input is written as a key file, mode 0600 owned by this
// user (0400 when its length is 14 mod 16, and 0640, which no key file may have, when it is
// 15 mod 16), in a temporary folder made once per process, and read both ways.
//
// Invariants (from StateKey.swift):
// - nothing traps; a refusal is the `StateKeyError` the doc comments name for that file, with a
//   description, and no description (of a key or an error) holds the key material;
// - a file of this user's, mode 0600 or 0400, of at most `maximumByteCount` bytes, is read as its
//   bytes taken whole, or, when they are text (printable ASCII and line endings), less one
//   trailing line ending; it is accepted exactly when that material has at least
//   `minimumByteCount` bytes, and refused as `.tooShort` with that count otherwise;
// - mode 0640 is refused as `.readableByOthers` before a byte is read; a longer file as
//   `.unreadable`;
// - the key read is the key of that material: the same id as `StateKey(bytes:)` of it (16 hex
//   digits), the same through `credential` as through `file`, and a state it seals opens with a
//   keyring of the key given as bytes, and with no other key.
private let folder = temporaryFolder("fuzz-keyfile")
private let name = "state.key"
private let identity = SealedRowIdentity(path: "root/inbox", typeName: "Fuzz.Key", version: 1)
private let plaintext = Data(#"{"unread":2}"#.utf8)
/// A key of other material, which must not open what an input's key sealed.
private let otherKey = try! StateKey(bytes: [UInt8](repeating: 0xA5, count: 48))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    let path = folder + "/" + name
    let mode: mode_t =
        switch count % 16 {
        case 15: 0o640
        case 14: 0o400
        default: 0o600
        }
    write(bytes, to: path, mode: mode)

    // What the doc comments say the readers make of this file: its material, or the refusal
    // (`source` names the key in a `.tooShort`: "key file PATH", or "credential NAME").
    let isText = bytes.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x0A || $0 == 0x0D }
    var material = bytes[...]
    if isText, material.last == 0x0A { material.removeLast() }
    if isText, material.last == 0x0D { material.removeLast() }
    func expected(source: String) -> Result<[UInt8], StateKeyError> {
        if mode & 0o077 != 0 { return .failure(.readableByOthers(path: path, mode: UInt32(mode))) }
        if count > StateKey.maximumByteCount { return .failure(.unreadable(path: path, reason: "")) }
        if material.count < StateKey.minimumByteCount {
            return .failure(.tooShort(source: source, byteCount: material.count))
        }
        return .success(Array(material))
    }
    let fileExpectation = expected(source: "key file \(path)")
    let credentialExpectation = expected(source: "credential \(name)")

    let fromFile: StateKey
    do {
        fromFile = try StateKey.file(path)
    } catch {
        check(error, expected: fileExpectation, material: material)
        do {
            let credential = try StateKey.credential(name, environment: ["CREDENTIALS_DIRECTORY": folder])
            invariant(false, "the credential reader accepted (\(credential)) what the file reader refused: \(error)")
        } catch let credentialError {
            check(credentialError, expected: credentialExpectation, material: material)
        }
        return 0
    }
    guard case .success(let key) = fileExpectation else {
        invariant(false, "a key file was read that should be refused with \(fileExpectation)")
        return 0
    }
    invariant(
        fromFile.id.utf8.count == 16
            && fromFile.id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) },
        "key id \(fromFile.id.debugDescription) is not 16 hex digits")
    let fromBytes: StateKey
    do {
        fromBytes = try StateKey(bytes: key)
    } catch {
        invariant(false, "the material of a key file read is refused as bytes: \(error)")
        return 0
    }
    invariant(fromFile.id == fromBytes.id, "the key file's key is not the key of its material")
    do {
        let credential = try StateKey.credential(name, environment: ["CREDENTIALS_DIRECTORY": folder])
        invariant(credential.id == fromFile.id, "the credential reader read another key than the file reader")
    } catch {
        invariant(false, "the credential reader refused a key file the file reader accepted: \(error)")
    }
    invariant(!holdsMaterial(fromFile.description, material), "the key's description holds its material")

    // A state sealed with the key read opens with the key given as bytes, and with no other.
    do {
        let sealed = try StateKeyring(fromFile).seal(plaintext, identity: identity)
        let opened = try StateKeyring(fromBytes).open(sealed, keyID: fromFile.id, identity: identity)
        invariant(opened == plaintext, "a sealed state opened to other bytes")
        if fromFile.id != otherKey.id {
            let other = StateKeyring(otherKey, previous: [])
            invariant(
                (try? other.open(sealed, keyID: otherKey.id, identity: identity)) == nil,
                "another key opened a sealed state")
        }
    } catch {
        invariant(false, "sealing with a key file's key failed: \(error)")
    }
    return 0
}

/// A refusal is the one expected (for `.unreadable`, any reason), described without the material.
private func check(_ error: StateKeyError, expected: Result<[UInt8], StateKeyError>, material: ArraySlice<UInt8>) {
    invariant(!error.description.isEmpty, "a refusal without a description")
    invariant(!holdsMaterial(error.description, material), "an error's description holds the key material")
    switch (error, expected) {
    case (.unreadable(let path, let reason), .failure(.unreadable(let expectedPath, _))):
        invariant(path == expectedPath && !reason.isEmpty, "unreadable \(path) without a reason")
    case (_, .failure(let expectedError)):
        invariant(error == expectedError, "refused with \(error), not \(expectedError)")
    case (_, .success):
        invariant(false, "a key file of \(material.count) bytes of material was refused: \(error)")
    }
}

/// Whether `text` holds the material's bytes (16 or more of them: a shorter run may be a word
/// of the message by chance).
private func holdsMaterial(_ text: String, _ material: ArraySlice<UInt8>) -> Bool {
    let text = Array(text.utf8)
    guard material.count >= 16, text.count >= material.count else { return false }
    return (0...(text.count - material.count)).contains { text[$0..<($0 + material.count)].elementsEqual(material) }
}

/// Writes `bytes` to `path` with `mode`, replacing any file there.
private func write(_ bytes: [UInt8], to path: String, mode: mode_t) {
    unlink(path)
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var written = 0
    while written < bytes.count {
        let result = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
        guard result > 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
        written += result
    }
    guard fchmod(fd, mode) == 0 else { fatalError("cannot chmod \(path)") }
}
