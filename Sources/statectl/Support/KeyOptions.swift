import ArgumentParser
import Foundation
import StateStore
import StateStoreCrypto

/// `--key-file PATH` / `--credential NAME`: the key sealed states open with, for the commands
/// that read or write states. Without one, sealed states are listed (path, size, generation,
/// key id) and never opened.
struct KeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "Open sealed states with the key in this file (mode 600 or 400, owned by you).", valueName: "path"),
        completion: .file()
    )
    var keyFile: String?

    @Option(
        name: .customLong("credential"),
        help: ArgumentHelp(
            "Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).", valueName: "name")
    )
    var credential: String?

    func validate() throws {
        if keyFile != nil && credential != nil { throw ValidationError("Use --key-file or --credential, not both.") }
        if let keyFile, keyFile.isEmpty { throw ValidationError("--key-file needs a file path.") }
    }

    /// The keyring for the key given, or `nil` when none was.
    func keyring() throws -> StateKeyring? {
        try Self.key(file: keyFile, credential: credential).map { StateKeyring($0) }
    }

    static func key(file: String?, credential: String?) throws -> StateKey? {
        do {
            if let file { return try StateKey.file(file) }
            if let credential { return try StateKey.credential(credential) }
            return nil
        } catch {
            throw CLIError(message: error.description)
        }
    }
}
