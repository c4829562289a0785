import ArgumentParser
import Foundation
import StateStore

/// `--db PATH`, shared by every subcommand through `@OptionGroup`, and the ways
/// subcommands open the database it names.
struct DatabaseOptions: ParsableArguments {
    /// The application name whose default database `statectl` uses when neither
    /// `--db` nor `$STATESTORE_DB` is given: the one `statectl demo` writes.
    static let defaultAppName = "statestore-demo"

    @Option(
        name: .customLong("db"),
        help: ArgumentHelp(
            "The state database file. Default: $STATESTORE_DB, else the \"statestore-demo\" app's default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).",
            valueName: "path"
        ),
        completion: .file()
    )
    var db: String?

    /// The database file this invocation works on.
    var path: String {
        if let db { return db }
        if let environment = ProcessInfo.processInfo.environment["STATESTORE_DB"], !environment.isEmpty {
            return environment
        }
        return StateStore.defaultPath(appName: Self.defaultAppName)
    }

    func validate() throws {
        if let db, db.isEmpty { throw ValidationError("--db needs a file path.") }
    }

    /// Throws (exit 3) when nothing is at the path, so a read command never creates a file and
    /// says plainly why it stopped. What is there but is not a database file is the store's to refuse.
    func requireExistingFile() throws {
        try StateStore.validate(path: path)
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else {
                throw StateStoreError.fileSystem(FileSystemFailure(operation: .stat, path: path, errno: errno))
            }
            throw CLIError(
                message:
                    "There is no state database at \(Format.word(path)); run `statectl migrate --db \(Format.word(path))` to create one, or point --db at an existing one.",
                status: .cannotOpen)
        }
    }

    /// Opens read-only: never creates, migrates or writes; works beside a writing application (WAL).
    /// Only the header and schema are read at open, at any size, as an application's store does;
    /// a command reports damage in the pages it reads, and `statectl check` reads them all. No
    /// check runs in the background: a command ends long before it would be of use.
    ///
    /// A database whose tables are intact but whose version records were erased or damaged
    /// outside StateStore is read all the same (salvage), after a warning that says so and how
    /// to repair it; `check` reports it as a problem instead (`warnSalvage: false`).
    func openReadOnly(warnSalvage: Bool = true, sealer: (any StateSealer)? = nil) throws -> StateStore {
        try requireExistingFile()
        var options = StateStore.Options(readOnly: true, backgroundCheck: .off, sealer: sealer)
        options.salvage = true
        let store = try StateStore(path: path, options: options).reportingWarnings()
        if warnSalvage, let problem = try salvageProblem(of: store) {
            Output.error("statectl: warning: " + problem)
        }
        return store
    }

    /// What is wrong with the version records of a database opened for salvage, and the command
    /// that puts it right; `nil` when they are intact.
    func salvageProblem(of store: StateStore) throws -> String? {
        let records = try store.schemaRecords()
        guard let problem = records.problem else { return nil }
        return
            "\(Format.word(path)): \(problem); its tables match schema \(StateStore.latestSchemaVersion) exactly and were read as they are. `statectl migrate --repair --db \(Format.word(path))` re-records the version"
    }

    /// Opens for writing, creating and migrating the file when needed.
    func openForWriting(
        maximumStateSize: Int = StateStore.Options().maximumStateSize, sealer: (any StateSealer)? = nil
    ) throws(StateStoreError) -> StateStore {
        try StateStore(
            path: path, options: .init(maximumStateSize: maximumStateSize, backgroundCheck: .off, sealer: sealer)
        ).reportingWarnings()
    }
}

/// `--max-state-size`, shared by `export` and `import` so that what one writes the other accepts,
/// and by `recover`, which leaves a larger state in the file it moves aside.
struct StateSizeOptions: ParsableArguments {
    @Option(
        name: .customLong("max-state-size"),
        help: ArgumentHelp(
            "The largest state accepted, as the application's StateStore.Options.maximumStateSize (default 1MiB).",
            valueName: "size"),
        transform: { try SizeValue(parsing: $0).requiring(1...1 << 30, "--max-state-size") }
    )
    var maximumStateSize = try! SizeValue(parsing: "1MiB")
}

extension StateStore {
    /// Prints what the store could not put right at open as `statectl: warning:` lines.
    func reportingWarnings() -> StateStore {
        for warning in warnings { Output.error("statectl: warning: " + sentence(oneLine(warning))) }
        return self
    }

    /// ``write(_:)``, then synced to storage before the command says what it did: with an
    /// application holding the database open, closing it would not sync the commit.
    func writeDurably<T: Sendable>(_ body: (WriteTransaction) throws(StateStoreError) -> T) throws(StateStoreError) -> T
    {
        let result = try write(body)
        try synchronize()
        return result
    }
}

/// `--json`, for every command that reads.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print a JSON document (stable schema, see `statectl --help`) instead of text.")
    var json = false
}
