import ArgumentParser
import Foundation
import StateStore

#if Sealing
import StateStoreCrypto
#endif

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
        if keyFile != nil || credential != nil { try Self.requireSealing() }
    }

    /// Throws a usage error (exit 2) in a statectl built without the `Sealing` trait, as
    /// `scripts/demo` builds it: its key options are refused before anything is opened.
    static func requireSealing() throws {
        #if !Sealing
        throw ValidationError(
            "This statectl was built without sealed states (the package's Sealing trait was off, as scripts/demo builds it); build the whole one with `swift build -c release --product statectl` and run .build/release/statectl."
        )
        #endif
    }

    /// The keyring for the key given, or `nil` when none was.
    func keyring() throws -> (any StateSealer)? {
        try Self.key(file: keyFile, credential: credential)
    }

    /// A keyring of the key in `file` or the credential `credential`; `nil` when neither is given.
    /// A statectl built without the `Sealing` trait (as `scripts/demo` builds it) refuses both.
    static func key(file: String?, credential: String?) throws -> (any StateSealer)? {
        guard file != nil || credential != nil else { return nil }
        #if Sealing
        do {
            if let file { return StateKeyring(try StateKey.file(file)) }
            if let credential { return StateKeyring(try StateKey.credential(credential)) }
            return nil
        } catch {
            throw CLIError(message: error.description)
        }
        #else
        try requireSealing()
        return nil
        #endif
    }
}
