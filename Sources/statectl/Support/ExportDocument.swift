import Foundation
import StateStore

/// The `statectl export` document, and its validation for `statectl import`.
///
/// ```json
/// {
///   "schema": 1,
///   "kind": "export",
///   "database_schema_version": 1,
///   "exported_at": "2026-01-02T03:04:05.678Z",
///   "state_count": 1,
///   "states": [
///     {
///       "path": "root/inbox",
///       "type_name": "Mail.Inbox",
///       "version": 1,
///       "generation": 3,
///       "encoding": "json",
///       "updated_at": "2026-01-02T03:04:05.678Z",
///       "checksum": "9a3c0b6e5d4f2a11",
///       "byte_count": 42,
///       "value": {"unread": 2}
///     }
///   ]
/// }
/// ```
///
/// A state whose bytes are compact JSON that this tool writes back byte for byte is
/// embedded as `"value"`; any other bytes as `"base64"`. `checksum` is XXH64 of the bytes
/// as 16 hex digits. On import, `generation`, `updated_at`, `checksum` and `byte_count` are
/// optional (defaults: 1, now, computed, computed); when present they must be right.
enum ExportDocument {
    /// The deepest nesting an import accepts, the document's own three levels included.
    static let maximumDepth = 64
    /// Levels the document itself uses above a state's value: the document, `states`, the state.
    static let documentLevels = 3
    /// The largest import file accepted.
    static let maximumFileSize = 256 << 20

    // MARK: Export

    static func make(states: [StoredState], databaseSchemaVersion: Int, exportedAt: Date) -> JSON {
        Output.document(kind: "export", [
            ("database_schema_version", .int(databaseSchemaVersion)),
            ("exported_at", .string(Format.iso8601(exportedAt))),
            ("state_count", .int(states.count)),
            ("states", .array(states.map(json))),
        ])
    }

    static func json(_ state: StoredState) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("path", .string(state.path.rawValue)),
            ("type_name", .string(state.typeName)),
            ("version", .int(state.version)),
            ("generation", .int(state.generation)),
            ("encoding", .string(state.encoding.rawValue)),
            ("updated_at", .string(Format.iso8601(state.updatedAt))),
            ("checksum", .string(Format.checksum(state.checksum))),
            ("byte_count", .int(state.bytes.count)),
        ]
        if let value = StatePrinter.exactJSONValue(of: state.bytes, maximumDepth: maximumDepth - documentLevels) {
            members.append(("value", value))
        } else {
            members.append(("base64", .string(state.bytes.base64EncodedString())))
        }
        return .object(members)
    }

    // MARK: Import

    /// Reads and validates the whole document at `file` before anything is written.
    /// Every failure is a ``CLIError`` naming the file, the state and what is wrong.
    static func read(file: String, maximumStateSize: Int) throws(CLIError) -> [StoredState] {
        func refuse(_ message: String, status: ExitStatus = .problemFound) -> CLIError {
            let sentence = message.hasSuffix(".") ? message : message + "."
            return CLIError(message: "\(file): \(sentence) Nothing was imported.", status: status)
        }
        var info = stat()
        guard stat(file, &info) == 0 else {
            throw CLIError(message: "Cannot read \(file): \(String(cString: strerror(errno))). Nothing was imported.")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw refuse("it is not a regular file (a directory, FIFO or device); give the path of an export document")
        }
        guard Int(info.st_size) <= maximumFileSize else {
            throw refuse("the file is \(Format.bytes(Int(info.st_size))), over the \(Format.bytes(maximumFileSize)) import limit")
        }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw CLIError(message: "Cannot read \(file): \(error.localizedDescription). Nothing was imported.")
        }
        guard bytes.count <= maximumFileSize else { throw refuse("the file grew over the import limit while being read") }
        return try validate(bytes, source: file, maximumStateSize: maximumStateSize)
    }

    /// Parses and validates an export document already in memory; `source` names it in
    /// messages. Pure: no file system, no database, so the fuzzer (`Fuzz/`) drives it directly.
    /// Every failure is a ``CLIError``; no input traps.
    static func validate(_ bytes: Data, source file: String, maximumStateSize: Int) throws(CLIError) -> [StoredState] {
        func refuse(_ message: String, status: ExitStatus = .problemFound) -> CLIError {
            let sentence = message.hasSuffix(".") ? message : message + "."
            return CLIError(message: "\(file): \(sentence) Nothing was imported.", status: status)
        }
        guard bytes.count <= maximumFileSize else {
            throw refuse("the document is \(Format.bytes(bytes.count)), over the \(Format.bytes(maximumFileSize)) import limit")
        }
        let document: JSON
        do {
            document = try JSONParser.parse(bytes, maximumDepth: maximumDepth)
        } catch {
            throw refuse("not a valid export document: \(error)")
        }
        guard case .object = document else { throw refuse("not a valid export document: the top level is \(document.kindName), not an object") }
        guard let schema = document["schema"].flatMap(integer) else { throw refuse("not an export document: \"schema\" is missing or not an integer") }
        guard document["kind"].flatMap(string) == "export" else { throw refuse("not an export document: \"kind\" is not \"export\"") }
        guard schema >= 1 else { throw refuse("not an export document: \"schema\" is \(schema); export documents start at 1") }
        guard schema <= Output.schemaVersion else {
            throw refuse("the document format is version \(schema), newer than the \(Output.schemaVersion) this build reads; use a newer statectl", status: .cannotOpen)
        }
        guard let databaseSchema = document["database_schema_version"].flatMap(integer) else {
            throw refuse("\"database_schema_version\" is missing or not an integer")
        }
        guard databaseSchema >= 0 else { throw refuse("\"database_schema_version\" is \(databaseSchema), which no database has") }
        guard databaseSchema <= StateStore.latestSchemaVersion else {
            let error = StateStoreError.schemaTooNew(file: file, found: databaseSchema, supported: StateStore.latestSchemaVersion)
            throw CLIError(message: error.description + " Nothing was imported.", status: .cannotOpen)
        }
        guard case .array(let items)? = document["states"] else { throw refuse("\"states\" is missing or not an array") }

        var states: [StoredState] = []
        var seen: Set<RestorationPath> = []  // by bytes, as the database's primary key is
        for (index, item) in items.enumerated() {
            let state: StoredState
            do {
                state = try readState(item, maximumStateSize: maximumStateSize)
            } catch let problem {
                let where_ = item["path"].flatMap(string).map { "states[\(index)] (\($0.debugDescription))" } ?? "states[\(index)]"
                throw refuse("\(where_): \(problem.message)")
            }
            guard seen.insert(state.path).inserted else {
                throw refuse("states[\(index)]: the path \(state.path.rawValue.debugDescription) appears more than once")
            }
            states.append(state)
        }
        if let count = document["state_count"].flatMap(integer), count != states.count {
            throw refuse("\"state_count\" says \(count) but \"states\" holds \(states.count); the document is incomplete")
        }
        return states
    }

    private static func readState(_ item: JSON, maximumStateSize: Int) throws(CLIError) -> StoredState {
        func problem(_ message: String) -> CLIError { CLIError(message: message) }
        guard case .object = item else { throw problem("a state must be an object, not \(item.kindName)") }
        guard let rawPath = item["path"].flatMap(string) else { throw problem("\"path\" is missing or not a string") }
        let path: RestorationPath
        do { path = try RestorationPath(validating: rawPath) } catch { throw problem(error.description) }
        guard let typeName = item["type_name"].flatMap(string) else { throw problem("\"type_name\" is missing or not a string") }
        guard !typeName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }), typeName.utf8.count <= 4096 else {
            throw problem("\"type_name\" holds a control character or is longer than 4096 bytes; a Swift type name has neither")
        }
        guard let version = item["version"].flatMap(integer), (0...StoredState.maximumVersion).contains(version) else {
            throw problem("\"version\" is missing or not an integer from 0 to \(StoredState.maximumVersion)")
        }
        var generation: Int64 = 1
        if let value = item["generation"] {
            // Bounded so the row can still be saved (its generation rises) and exported exactly.
            guard let number = integer(value), (1...StoredState.maximumGeneration).contains(Int64(number)) else {
                throw problem("\"generation\" is not an integer from 1 to \(StoredState.maximumGeneration)")
            }
            generation = Int64(number)
        }
        guard let encodingName = item["encoding"].flatMap(string), let encoding = StateEncoding(rawValue: encodingName) else {
            throw problem("\"encoding\" is missing or not one of \(StateEncoding.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var updatedAt = Date()
        if let value = item["updated_at"] {
            guard let text = string(value), let milliseconds = Format.parseISO8601(text) else {
                throw problem("\"updated_at\" is not an ISO 8601 time in UTC (like 2026-01-02T03:04:05.678Z)")
            }
            updatedAt = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        let bytes: Data
        switch (item["value"], item["base64"]) {
        case (let value?, nil):
            bytes = Data(value.serialized().utf8)
        case (nil, let encoded?):
            guard let text = string(encoded), text.count <= (maximumStateSize / 3 + 2) * 4,
                  let decoded = Data(base64Encoded: text)
            else { throw problem("\"base64\" is not valid base64, or holds more than the \(maximumStateSize) bytes --max-state-size allows") }
            bytes = decoded
        case (nil, nil):
            throw problem("the state has neither \"value\" nor \"base64\"")
        case (.some, .some):
            throw problem("the state has both \"value\" and \"base64\"; keep one")
        }
        guard bytes.count <= maximumStateSize else {
            throw problem("the state is \(bytes.count) bytes, over the \(maximumStateSize)-byte --max-state-size; give import (and export) a larger --max-state-size, as large as the application's StateStore.Options.maximumStateSize")
        }
        if let value = item["byte_count"] {
            guard let count = integer(value), count == bytes.count else {
                throw problem("\"byte_count\" does not match the state's \(bytes.count) bytes")
            }
        }
        let checksum = StoredState.checksum(of: bytes)
        if let value = item["checksum"] {
            guard let text = string(value), text.utf8.count == 16, let unsigned = UInt64(text, radix: 16) else {
                throw problem("\"checksum\" is not 16 hex digits")
            }
            guard Int64(bitPattern: unsigned) == checksum else {
                throw problem("the checksum does not match the state's bytes; the document was altered or damaged")
            }
        }
        return StoredState(
            path: path, typeName: typeName, version: version, generation: generation,
            encoding: encoding, checksum: checksum, updatedAt: updatedAt, bytes: bytes
        )
    }

    private static func integer(_ value: JSON) -> Int? {
        guard case .number(let text) = value else { return nil }
        return Int(text)
    }

    private static func string(_ value: JSON) -> String? {
        guard case .string(let text) = value else { return nil }
        return text
    }
}
