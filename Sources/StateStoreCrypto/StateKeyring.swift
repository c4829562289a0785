import Crypto
import Foundation
import StateStore

/// Seals states with AES-256-GCM under a ``StateKey``, and opens states sealed with it or with
/// earlier keys kept for a rotation: the ``StateStore/StateSealer`` to give
/// ``StateStore/StateStore/Options/sealer``.
///
/// ```swift
/// let keyring = StateKeyring(try .file(keyFile))  // head -c 32 /dev/urandom > state.key; chmod 600
/// let store = try StateStore(path: path, options: .init(sealer: keyring))
/// ```
///
/// Each sealed state is `nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`, with the row's path,
/// type name and version as associated data. The nonce is synthetic: HMAC-SHA256, under its own
/// subkey, of the associated data and the plaintext. Equal states at the same row seal to equal
/// bytes, so an unchanged save is recognised and not rewritten, and a nonce never repeats for
/// different plaintexts. What that shows is only what the clear metadata (generation and update
/// time) shows already: whether a row's value changed.
public struct StateKeyring: StateSealer {
    /// The key new states are sealed with.
    public let current: StateKey
    /// Earlier keys, read but never written with: keep one here while rows sealed with it remain
    /// (see `StateStore.rekey`).
    public let previous: [StateKey]

    /// A keyring that seals with `current` and also opens states sealed with any of `previous`
    /// (a key there with `current`'s id is left out).
    public init(_ current: StateKey, previous: [StateKey] = []) {
        self.current = current
        self.previous = previous.filter { $0.id != current.id }
    }

    public var keyID: String { current.id }
    public var openableKeyIDs: [String] { [current.id] + previous.map(\.id) }

    public func seal(_ plaintext: Data, identity: SealedRowIdentity) throws -> Data {
        let aad = identity.authenticatedData
        var mac = HMAC<SHA256>(key: current.nonce)
        mac.update(data: withUnsafeBytes(of: UInt64(aad.count).bigEndian) { Data($0) })
        mac.update(data: aad)
        mac.update(data: plaintext)
        let nonce = try AES.GCM.Nonce(data: Data(mac.finalize()).prefix(12))
        let box = try AES.GCM.seal(plaintext, using: current.sealing, nonce: nonce, authenticating: aad)
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return combined
    }

    public func open(_ sealed: Data, keyID: String, identity: SealedRowIdentity) throws -> Data {
        guard let key = keyID == current.id ? current : previous.first(where: { $0.id == keyID }) else {
            throw CryptoKitError.incorrectKeySize
        }
        let box = try AES.GCM.SealedBox(combined: sealed)
        return try AES.GCM.open(box, using: key.sealing, authenticating: identity.authenticatedData)
    }
}
