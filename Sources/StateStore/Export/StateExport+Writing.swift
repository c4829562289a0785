import Foundation

// Writing a document a state at a time, each piece checked as the decoder checks it, so that
// neither the document nor its JSON value is ever held whole to check it.

extension StateExport {
    /// What ``write(store:maximumStateSize:exportedAt:unsealed:limit:to:)`` wrote.
    package struct Written: Sendable, Hashable {
        /// The states in the document.
        package var stateCount = 0
        /// Their bytes as the document carries them (a state written clear counts its plaintext).
        package var stateBytes = 0
        /// How many of them are sealed, written as stored.
        package var sealedCount = 0
        /// The document's length.
        package var byteCount = 0
    }

    /// The document ``init(store:maximumStateSize:exportedAt:unsealed:)`` and ``encoded()``
    /// give, handed to `sink` in pieces as the states are read, from one snapshot, one state at a
    /// time: no state is held once its piece is written, so the cost in memory is what `sink`
    /// keeps, and the state being written (its bytes, its piece, and the piece read back while it
    /// is checked: its members, and its value as the bytes it gives back). Each piece is checked
    /// as ``init(decoding:maximumStateSize:)`` checks the whole.
    ///
    /// Refused before any state's bytes are read: a store whose smallest document
    /// (``minimumByteCount(of:unsealed:)``) is over `limit`, rows whose path is invalid, states
    /// over `maximumStateSize`, and update times a document cannot carry. A state that cannot
    /// be read (a type name that is not UTF-8, a sealed state that does not open) is refused as
    /// it is read. A document that grows over `limit` as it is written is refused by the piece
    /// that takes it over, unchecked, with ``ExportError/documentTooLarge(byteCount:limit:)``
    /// giving the bytes until then, and the rest is not read. With several problems, the first
    /// met in that order is the one thrown. On any error, what `sink` was given is not a
    /// document: drop it.
    /// `limit` is the largest document written: ``maximumByteCount``, import's limit.
    package static func write(
        store: StateStore, maximumStateSize: Int, exportedAt: Date = Date(), unsealed: Bool,
        limit: Int = maximumByteCount, to sink: (borrowing [UInt8]) -> Void
    ) throws(ExportError) -> Written {
        let databaseSchemaVersion = store.schemaVersion
        var document: DocumentWriter?
        var written = Written()
        let quarantine = try read(
            store, maximumStateSize: maximumStateSize, unsealed: unsealed, documentLimit: limit,
            begin: { (stateCount) throws(ExportError) in
                document = try DocumentWriter(
                    databaseSchemaVersion: databaseSchemaVersion, exportedAt: exportedAt,
                    stateCount: stateCount, limit: limit, to: sink
                )
            },
            visit: { (state) throws(ExportError) -> Bool in
                try document?.add(state, to: sink)
                written.stateCount += 1
                written.stateBytes += state.bytes.count
                if state.isSealed { written.sealedCount += 1 }
                // Over the limit, the rest is not read: the document is refused whatever it holds.
                return document?.isOverLimit == false
            }
        )
        guard var document else { preconditionFailure("a store read without its document begun") }
        if !document.isOverLimit { try document.finish(quarantine: quarantine, to: sink) }
        if document.isOverLimit { throw .documentTooLarge(byteCount: document.byteCount, limit: limit) }
        written.byteCount = document.byteCount
        return written
    }

    /// Reads `store` as a document carries it, in one snapshot. First, with no state's bytes
    /// read, it refuses rows a decoder would refuse: invalid paths, states over
    /// `maximumStateSize`, and, for a document (`documentLimit` given), a smallest document over
    /// that limit and update times the document cannot carry. Then it calls `begin` with the
    /// number of states, visits each state by path (opened, when `unsealed`) until `visit`
    /// returns `false`, and returns the quarantined rows.
    static func read(
        _ store: StateStore, maximumStateSize: Int, unsealed: Bool, documentLimit: Int?,
        begin: (_ stateCount: Int) throws(ExportError) -> Void,
        visit: (StoredState) throws(ExportError) -> Bool
    ) throws(ExportError) -> [QuarantineEntry] {
        let outcome: Result<[QuarantineEntry], ExportError>
        do {
            outcome = try store.withSnapshot {
                (snapshot) throws(StateStoreError) -> Result<[QuarantineEntry], ExportError> in
                do throws(ExportError) {
                    return .success(
                        try read(
                            snapshot, store: store, maximumStateSize: maximumStateSize, unsealed: unsealed,
                            documentLimit: documentLimit, begin: begin, visit: visit
                        ))
                } catch {
                    return .failure(error)
                }
            }
        } catch {
            throw .store(error)
        }
        return try outcome.get()
    }

    private static func read(
        _ snapshot: borrowing StateStore.Snapshot, store: StateStore, maximumStateSize: Int, unsealed: Bool,
        documentLimit: Int?,
        begin: (_ stateCount: Int) throws(ExportError) -> Void,
        visit: (StoredState) throws(ExportError) -> Bool
    ) throws(ExportError) -> [QuarantineEntry] {
        var stateCount = 0
        var smallest = minimumDocumentByteCount
        var oversize: [StateStore.Entry] = []
        var undated: [RestorationPath] = []
        let invalid: [StateStore.InvalidRow]
        do {
            invalid = try snapshot.forEachEntryFindingInvalidRows(under: nil) { entry in
                stateCount += 1
                smallest += minimumByteCount(of: entry, unsealed: unsealed)
                if entry.byteCount > maximumStateSize { oversize.append(entry) }
                if !TextFormat.isRepresentable(entry.updatedAt) { undated.append(entry.path) }
            }
        } catch {
            throw .store(error)
        }
        if let documentLimit, smallest > documentLimit {
            throw .documentTooLarge(byteCount: smallest, limit: documentLimit)
        }
        if !invalid.isEmpty { throw .invalidRows(invalid) }
        if !oversize.isEmpty { throw .statesTooLarge(oversize, limit: maximumStateSize) }
        if documentLimit != nil, !undated.isEmpty { throw .timesOutOfRange(undated) }
        try begin(stateCount)
        var failure: ExportError?
        do throws(StateStoreError) {
            try snapshot.forEachState(maximumSize: maximumStateSize) { stored in
                do throws(ExportError) {
                    var state = stored
                    if unsealed, state.isSealed {
                        guard state.checksumIsValid else { throw .store(.checksumMismatch(path: state.path)) }
                        do throws(StateStoreError) { state.bytes = try store.plaintext(of: state) } catch {
                            throw .store(error)
                        }
                        state.keyID = nil
                        state.checksum = Checksum.stored(state.bytes)
                    }
                    return try visit(state)
                } catch {
                    failure = error
                    return false
                }
            }
        } catch {
            throw .store(error)
        }
        if let failure { throw failure }
        do {
            return try snapshot.quarantinedStates(maximumSize: maximumStateSize).map {
                QuarantineEntry(state: $0.state, byteCount: $0.byteCount)
            }
        } catch {
            throw .store(error)
        }
    }

    /// Writes a document a piece at a time (its header, each state, its quarantined rows, its
    /// end) and checks each piece as ``init(decoding:maximumStateSize:)`` checks the whole
    /// document: the header's members, and each state parsed back from its own bytes and
    /// decoded (at the depth the document nests it), no two at one path, as many as the header
    /// says. Bytes past `limit` are counted, not handed on.
    struct DocumentWriter {
        private var object = JSON.ObjectWriter()
        private let stateCount: Int
        private let limit: Int
        /// States written so far.
        private var written = 0
        private var seen: Set<RestorationPath> = []  // by bytes, as the decoder compares them
        /// One element's bytes, the buffer reused.
        private var element: [UInt8] = []
        /// The document's bytes so far, those past `limit` included.
        private(set) var byteCount = 0

        /// Whether the document is over its limit: from then on nothing is handed on.
        var isOverLimit: Bool { byteCount > limit }

        /// Writes the members before `states`, checked, and opens `states`.
        init(
            databaseSchemaVersion: Int, exportedAt: Date?, stateCount: Int, limit: Int,
            to sink: (borrowing [UInt8]) -> Void
        ) throws(ExportError) {
            self.stateCount = stateCount
            self.limit = limit
            for (name, value) in StateExport.headerMembers(
                databaseSchemaVersion: databaseSchemaVersion, exportedAt: exportedAt, stateCount: stateCount
            ) {
                object.member(name, value)
            }
            // The header as written, closed: a document a decoder reads up to its states.
            let header = try Self.parse(object.pending + Array("\n}".utf8), depth: StateExport.maximumDepth)
            do { _ = try StateExport.checkHeader(of: header) } catch { throw .notImportable(error) }
            object.beginArray("states", writtenApart: stateCount)
            take(sink)
        }

        /// Writes `state` as the next element of `states`.
        mutating func add(_ state: StoredState, to sink: (borrowing [UInt8]) -> Void) throws(ExportError) {
            guard TextFormat.isRepresentable(state.updatedAt) else { throw .timesOutOfRange([state.path]) }
            guard written < stateCount else {
                throw .notImportable(DocumentError(.stateCountMismatch(declared: stateCount, actual: written + 1)))
            }
            element.removeAll(keepingCapacity: true)
            StateExport.writeElement(state, after: written, to: &element)
            written += 1
            byteCount += element.count
            // A piece that takes the document over its limit is not checked: the document is
            // refused whatever it holds (and a state of hundreds of MiB is not parsed back).
            if isOverLimit { return }
            let index = written - 1
            // Less its leading `[` or `,`: the state's object, nested two levels in the document.
            let item: JSONParser.Element
            do {
                item = try JSONParser.parse(
                    element.dropFirst(), maximumDepth: StateExport.maximumDepth - 2, copying: "value")
            } catch {
                throw Self.writerFault(error)
            }
            do {
                _ = try StateExport.state(item, maximumStateSize: StateExport.maximumByteCount)
            } catch {
                throw .notImportable(DocumentError(error.problem, stateIndex: index, statePath: state.path.rawValue))
            }
            guard seen.insert(state.path).inserted else {
                throw .notImportable(DocumentError(.duplicatePath(state.path.rawValue), stateIndex: index))
            }
            sink(element)
        }

        /// Closes `states`, writes `quarantine` (when not empty) and ends the document.
        mutating func finish(quarantine: [QuarantineEntry], to sink: (borrowing [UInt8]) -> Void) throws(ExportError) {
            guard written == stateCount else {
                throw .notImportable(DocumentError(.stateCountMismatch(declared: stateCount, actual: written)))
            }
            object.endArray()
            if !quarantine.isEmpty {
                object.beginArray("quarantine", writtenApart: quarantine.count)
                take(sink)
                for (index, entry) in quarantine.enumerated() {
                    element.removeAll(keepingCapacity: true)
                    JSON.ObjectWriter.writeElement(StateExport.json(entry), after: index, to: &element)
                    byteCount += element.count
                    if isOverLimit { continue }
                    // A decoder counts these and reads nothing in them: they need only be JSON.
                    _ = try Self.parse(element.dropFirst(), depth: StateExport.maximumDepth - 2)
                    sink(element)
                }
                object.endArray()
            }
            object.end()
            take(sink)
        }

        /// Hands on what the object writer holds, while within the limit.
        private mutating func take(_ sink: (borrowing [UInt8]) -> Void) {
            byteCount += object.pending.count
            if isOverLimit { object.take { _ in } } else { object.take(sink) }
        }

        /// A piece of the document parsed back, as the decoder parses it.
        private static func parse(_ bytes: some Collection<UInt8>, depth: Int) throws(ExportError) -> JSON {
            do {
                return try JSONParser.parse(bytes, maximumDepth: depth)
            } catch {
                throw writerFault(error)
            }
        }

        /// A piece the decoder would not parse: only a fault of the writer's own gets here; the
        /// line and column are the piece's.
        private static func writerFault(_ error: JSONParseError) -> ExportError {
            .notImportable(DocumentError(.malformedJSON(reason: error.message, line: error.line, column: error.column)))
        }
    }
}
