import Foundation

extension StateExport {
    /// Reads an export document, checking all of it before anything is returned.
    ///
    /// The decoder is strict: the document must be one JSON object (RFC 8259, with no key
    /// repeated in any object) of at most ``maximumByteCount`` bytes nesting at most
    /// ``maximumDepth`` levels, in a format no newer than ``currentFormat``, from a database no
    /// newer than ``StateStore/StateStore/latestSchemaVersion``. Each state needs a valid
    /// ``RestorationPath`` no other state has, a type name without control characters, a
    /// version and generation in range, a known encoding, an update time that exists, and bytes
    /// within `maximumStateSize` that match the checksum and byte count when those are given.
    ///
    /// It reads no file and opens no database, so it is safe on any bytes: every failure is a
    /// ``DocumentError``, none traps, and nesting is refused before it is descended into.
    ///
    /// - Parameters:
    ///   - data: the document's bytes (UTF-8 JSON).
    ///   - maximumStateSize: the largest state accepted, in bytes: the importing store's
    ///     ``StateStore/StateStore/Options/maximumStateSize``. Default 1 MiB, that option's default.
    /// - Throws: ``DocumentError``, whose ``DocumentError/problem`` says what is wrong and whose
    ///   ``DocumentError/stateIndex`` says in which state.
    public init(
        decoding data: Data, maximumStateSize: Int = StateStore.Options().maximumStateSize
    ) throws(DocumentError) {
        try self.init(decoding: Array(data), maximumStateSize: maximumStateSize)
    }

    /// ``init(decoding:maximumStateSize:)`` for bytes already in an array (read from a file
    /// into the array the parser reads, so that the file is never held twice).
    package init(
        decoding bytes: [UInt8], maximumStateSize: Int = StateStore.Options().maximumStateSize
    ) throws(DocumentError) {
        var states: [StoredState] = []
        let contents = try Self.decode(bytes, maximumStateSize: maximumStateSize) { states.append($0) }
        self.init(
            states: states, databaseSchemaVersion: contents.databaseSchemaVersion, exportedAt: contents.exportedAt)
        decodedQuarantineCount = contents.quarantineCarried
    }

    /// What a document holds besides its states: ``decode(_:maximumStateSize:visit:)``'s result.
    struct DocumentContents {
        var databaseSchemaVersion: Int
        var exportedAt: Date?
        /// The length of its `quarantine` array, when it has one.
        var quarantineCarried: Int?
    }

    /// Reads and checks a document as ``init(decoding:maximumStateSize:)`` describes, the first
    /// problem met thrown (JSON that is not well formed anywhere, then the document's own
    /// members, then its states in order), without building its JSON value whole: each state
    /// is parsed, decoded and handed to `visit` as it is read. So states are visited before
    /// the rest of the document is checked: a caller that keeps them drops them when this throws.
    static func decode(
        _ bytes: [UInt8], maximumStateSize: Int, visit: (StoredState) -> Void
    ) throws(DocumentError) -> DocumentContents {
        guard bytes.count <= Self.maximumByteCount else {
            throw DocumentError(.documentTooLarge(byteCount: bytes.count, limit: Self.maximumByteCount))
        }
        var stateCount = 0
        var quarantined = 0
        var paths: Set<RestorationPath> = []  // by bytes, as the database's primary key is
        // The first state at fault; the document's own problems and malformed JSON anywhere
        // come before it, so the rest is still parsed.
        var problem: DocumentError?
        let document: JSON
        do throws(JSONParseError) {
            document = try JSONParser.parse(
                bytes, maximumDepth: Self.maximumDepth, streaming: ["states", "quarantine"], copying: "value"
            ) { key, element in
                guard key == "states" else {
                    quarantined += 1
                    return
                }
                let index = stateCount
                stateCount += 1
                guard problem == nil else { return }
                do throws(StateProblem) {
                    let state = try Self.state(element, maximumStateSize: maximumStateSize)
                    guard paths.insert(state.path).inserted else {
                        problem = DocumentError(.duplicatePath(state.path.rawValue), stateIndex: index)
                        return
                    }
                    visit(state)
                } catch {
                    problem = DocumentError(
                        error.problem, stateIndex: index, statePath: element.value["path"].flatMap(Self.string))
                }
            }
        } catch {
            throw DocumentError(.malformedJSON(reason: error.message, line: error.line, column: error.column))
        }
        let databaseSchema = try Self.checkHeader(of: document)
        guard case .array? = document["states"] else { throw DocumentError(.missingStates) }
        if let problem { throw problem }
        if let count = document["state_count"].flatMap(Self.integer), count != stateCount {
            throw DocumentError(.stateCountMismatch(declared: count, actual: stateCount))
        }
        let exportedAt = document["exported_at"].flatMap(Self.string).flatMap(TextFormat.parseISO8601)
        var quarantineCarried: Int?
        if case .array? = document["quarantine"] { quarantineCarried = quarantined }
        return DocumentContents(
            databaseSchemaVersion: databaseSchema, exportedAt: exportedAt.map { Date(storedMilliseconds: $0) },
            quarantineCarried: quarantineCarried
        )
    }

    /// Checks the document's own members (all but its states) as a decoder does; returns its
    /// `database_schema_version`.
    static func checkHeader(of document: JSON) throws(DocumentError) -> Int {
        guard case .object = document else { throw DocumentError(.topLevelNotAnObject(kind: document.kindName)) }
        guard let format = document["schema"].flatMap(Self.integer) else { throw DocumentError(.missingFormat) }
        guard document["kind"].flatMap(Self.string) == "export" else { throw DocumentError(.notAnExport) }
        guard format >= 1 else { throw DocumentError(.invalidFormat(format)) }
        guard format <= Self.currentFormat else {
            throw DocumentError(.formatTooNew(found: format, supported: Self.currentFormat))
        }
        guard let databaseSchema = document["database_schema_version"].flatMap(Self.integer) else {
            throw DocumentError(.missingDatabaseSchemaVersion)
        }
        guard databaseSchema >= 0 else { throw DocumentError(.invalidDatabaseSchemaVersion(databaseSchema)) }
        guard databaseSchema <= StateStore.latestSchemaVersion else {
            throw DocumentError(.databaseSchemaTooNew(found: databaseSchema, supported: StateStore.latestSchemaVersion))
        }
        return databaseSchema
    }

    /// What is wrong with one state; ``init(decoding:maximumStateSize:)`` adds where it is.
    struct StateProblem: Error {
        var problem: DocumentError.Problem
    }

    /// One element of `"states"`, its `value` copied compact by the parser (the bytes a state
    /// written as JSON holds), not built.
    static func state(_ element: JSONParser.Element, maximumStateSize: Int) throws(StateProblem) -> StoredState {
        func refuse(_ problem: DocumentError.Problem) -> StateProblem { StateProblem(problem: problem) }
        let item = element.value
        guard case .object = item else { throw refuse(.stateNotAnObject(kind: item.kindName)) }
        guard let rawPath = item["path"].flatMap(string) else { throw refuse(.missingPath) }
        let path: RestorationPath
        do {
            path = try RestorationPath(validating: rawPath)
        } catch {
            guard case .invalidPath(let joined, let reason) = error else {
                throw refuse(.invalidPath(rawPath, reason: error.description))
            }
            throw refuse(.invalidPath(joined, reason: reason))
        }
        guard let typeName = item["type_name"].flatMap(string) else { throw refuse(.missingTypeName) }
        guard StoredState.isCarried(typeName: typeName) else {
            throw refuse(.invalidTypeName)
        }
        guard let version = item["version"].flatMap(integer), (0...StoredState.maximumVersion).contains(version) else {
            throw refuse(.invalidVersion)
        }
        var generation: Int64 = 1
        if let value = item["generation"] {
            // Bounded so the row can still be saved (its generation rises) and exported exactly.
            guard let number = integer(value), (1...StoredState.maximumGeneration).contains(Int64(number)) else {
                throw refuse(.invalidGeneration)
            }
            generation = Int64(number)
        }
        guard let encodingName = item["encoding"].flatMap(string), let encoding = StateEncoding(rawValue: encodingName)
        else {
            throw refuse(.invalidEncoding)
        }
        var updatedAt = Date()
        if let value = item["updated_at"] {
            guard let text = string(value), let milliseconds = TextFormat.parseISO8601(text) else {
                throw refuse(.invalidUpdateTime)
            }
            updatedAt = Date(storedMilliseconds: milliseconds)
        }
        let bytes: Data
        switch (element.copied, item["base64"]) {
        case (let value?, nil):
            bytes = Data(value)
        case (nil, let encoded?):
            // Base64 of n bytes is at most (n / 3 + 1) * 4 characters; longer text is refused unread.
            let limit = max(0, maximumStateSize) / 3 + 2
            let longest = limit > Int.max / 4 ? Int.max : limit * 4
            guard let text = string(encoded), text.utf8.count <= longest, let decoded = Data(base64Encoded: text) else {
                throw refuse(.invalidBase64(limit: maximumStateSize))
            }
            bytes = decoded
        case (nil, nil):
            throw refuse(.missingValue)
        case (.some, .some):
            throw refuse(.valueAndBase64)
        }
        guard bytes.count <= maximumStateSize else {
            throw refuse(.stateTooLarge(byteCount: bytes.count, limit: maximumStateSize))
        }
        if let value = item["byte_count"] {
            guard let count = integer(value), count == bytes.count else {
                throw refuse(.byteCountMismatch(actual: bytes.count))
            }
        }
        let checksum = StoredState.checksum(of: bytes)
        if let value = item["checksum"] {
            guard let text = string(value), text.utf8.count == 16, let unsigned = UInt64(text, radix: 16) else {
                throw refuse(.invalidChecksum)
            }
            guard Int64(bitPattern: unsigned) == checksum else { throw refuse(.checksumMismatch) }
        }
        var keyID: String?
        if let value = item["key_id"] {
            guard let text = string(value), StoredState.isValidKeyID(text), element.copied == nil else {
                throw refuse(.invalidKeyID)
            }
            keyID = text
        }
        return StoredState(
            path: path, typeName: typeName, version: version, generation: generation,
            encoding: encoding, checksum: checksum, updatedAt: updatedAt, bytes: bytes, keyID: keyID
        )
    }

    static func integer(_ value: JSON) -> Int? {
        guard case .number(let text) = value else { return nil }
        return Int(text)
    }

    static func string(_ value: JSON) -> String? {
        guard case .string(let text) = value else { return nil }
        return text
    }
}
