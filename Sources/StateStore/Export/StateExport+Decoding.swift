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
    public init(decoding data: Data, maximumStateSize: Int = StateStore.Options().maximumStateSize) throws(DocumentError) {
        guard data.count <= Self.maximumByteCount else {
            throw DocumentError(.documentTooLarge(byteCount: data.count, limit: Self.maximumByteCount))
        }
        let document: JSON
        do {
            document = try JSONParser.parse(data, maximumDepth: Self.maximumDepth)
        } catch {
            throw DocumentError(.malformedJSON(reason: error.message, line: error.line, column: error.column))
        }
        let databaseSchema = try Self.checkHeader(of: document)
        guard case .array(let items)? = document["states"] else { throw DocumentError(.missingStates) }

        var states: [StoredState] = []
        var seen: Set<RestorationPath> = []  // by bytes, as the database's primary key is
        for (index, item) in items.enumerated() {
            let state: StoredState
            do {
                state = try Self.state(item, maximumStateSize: maximumStateSize)
            } catch {
                throw DocumentError(error.problem, stateIndex: index, statePath: item["path"].flatMap(Self.string))
            }
            guard seen.insert(state.path).inserted else {
                throw DocumentError(.duplicatePath(state.path.rawValue), stateIndex: index)
            }
            states.append(state)
        }
        if let count = document["state_count"].flatMap(Self.integer), count != states.count {
            throw DocumentError(.stateCountMismatch(declared: count, actual: states.count))
        }
        let exportedAt = document["exported_at"].flatMap(Self.string).flatMap(TextFormat.parseISO8601)
        self.init(
            states: states,
            databaseSchemaVersion: databaseSchema,
            exportedAt: exportedAt.map { Date(storedMilliseconds: $0) }
        )
        if case .array(let carried)? = document["quarantine"] { decodedQuarantineCount = carried.count }
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

    /// One element of `"states"`.
    static func state(_ item: JSON, maximumStateSize: Int) throws(StateProblem) -> StoredState {
        func refuse(_ problem: DocumentError.Problem) -> StateProblem { StateProblem(problem: problem) }
        guard case .object = item else { throw refuse(.stateNotAnObject(kind: item.kindName)) }
        guard let rawPath = item["path"].flatMap(string) else { throw refuse(.missingPath) }
        let path: RestorationPath
        do {
            path = try RestorationPath(validating: rawPath)
        } catch {
            guard case .invalidPath(let joined, let reason) = error else { throw refuse(.invalidPath(rawPath, reason: error.description)) }
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
        guard let encodingName = item["encoding"].flatMap(string), let encoding = StateEncoding(rawValue: encodingName) else {
            throw refuse(.invalidEncoding)
        }
        var updatedAt = Date()
        if let value = item["updated_at"] {
            guard let text = string(value), let milliseconds = TextFormat.parseISO8601(text) else { throw refuse(.invalidUpdateTime) }
            updatedAt = Date(storedMilliseconds: milliseconds)
        }
        let bytes: Data
        switch (item["value"], item["base64"]) {
        case (let value?, nil):
            bytes = Data(value.serializedBytes())
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
        guard bytes.count <= maximumStateSize else { throw refuse(.stateTooLarge(byteCount: bytes.count, limit: maximumStateSize)) }
        if let value = item["byte_count"] {
            guard let count = integer(value), count == bytes.count else { throw refuse(.byteCountMismatch(actual: bytes.count)) }
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
            guard let text = string(value), StoredState.isValidKeyID(text), item["value"] == nil else { throw refuse(.invalidKeyID) }
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
