import Foundation
import StateStoreCrypto
import Testing

/// What the libFuzzer targets in `Fuzz/` found, each reduced to the input that shows it, so that
/// it stays fixed (a binary input goes under `Fixtures/fuzz/<target>/`).
@Suite("Fuzz findings")
struct FuzzFindingTests {
    /// `fuzz-keyfile`, the empty input: a credential too short to be a key was refused as the
    /// key *file* `$CREDENTIALS_DIRECTORY/NAME`, while the key itself (`StateKey.source`) and
    /// `StateKey`'s own length check name it "credential NAME". The reader's length check named
    /// every file a key file, so the check that names the source never ran.
    @Test func aShortCredentialIsNamedAsACredential() throws {
        let folder = TemporaryFolder()
        for bytes in [[], Array("too short\n".utf8)] as [[UInt8]] {
            let path = folder.file("app-state-key")
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            chmod(path, 0o400)
            let length = bytes.isEmpty ? 0 : bytes.count - 1
            #expect(throws: StateKeyError.tooShort(source: "credential app-state-key", byteCount: length)) {
                try StateKey.credential("app-state-key", environment: ["CREDENTIALS_DIRECTORY": folder.path])
            }
            #expect(throws: StateKeyError.tooShort(source: "key file \(path)", byteCount: length)) {
                try StateKey.file(path)
            }
            unlink(path)
        }
    }
}
