import Foundation

extension StateExport {
    /// Why a store could not be exported, or an export encoded, as a document a decoder takes.
    /// Nothing was written when it is thrown.
    public enum ExportError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The store could not be read.
        case store(StateStoreError)
        /// Rows whose path is not a valid ``RestorationPath``, which only an edit outside the
        /// store makes and which a decoder would refuse. Remove them with
        /// ``StateStore/StateStore/WriteTransaction/removeInvalidRows()`` (`statectl prune --invalid-paths`).
        case invalidRows([StateStore.InvalidRow])
        /// States larger than the export's state size limit: `limit` bytes. Export (and
        /// import) with a larger limit, as large as the application's
        /// ``StateStore/StateStore/Options/maximumStateSize``.
        case statesTooLarge([StateStore.Entry], limit: Int)
        /// States whose update time is outside the years 0000–9999, which ISO 8601 with a
        /// four-digit year cannot write. Save or remove them.
        case timesOutOfRange([RestorationPath])
        /// The document would be `byteCount` bytes, over ``StateExport/maximumByteCount``
        /// (`limit`). Export part of the states, or keep large data outside the store. (`statectl
        /// export`, which writes the document as it reads the store, stops once it is over, and
        /// gives the bytes until then: a lower bound.)
        case documentTooLarge(byteCount: Int, limit: Int)
        /// The document would be refused by ``StateExport/init(decoding:maximumStateSize:)``,
        /// for the reason given: a checksum that does not match a state's bytes, for one.
        case notImportable(DocumentError)

        /// What went wrong and what to do about it.
        public var description: String {
            switch self {
            case .store(let error):
                return error.description
            case .invalidRows(let rows):
                return
                    "\(rows.count) row(s) have a path that is not a valid restoration path (rowid \(rows.map { String($0.rowID) }.joined(separator: ", "))), which a decoder would refuse; remove them with removeInvalidRows() before exporting."
            case .statesTooLarge(let entries, let limit):
                let listed = entries.prefix(5).map { "\($0.path) (\(TextFormat.bytes($0.byteCount)))" }.joined(
                    separator: ", ")
                return
                    "\(entries.count) state(s) are larger than the \(limit)-byte state size limit (\(listed)\(entries.count > 5 ? ", ..." : "")); export and import with a larger maximumStateSize, as large as the application's StateStore.Options.maximumStateSize."
            case .timesOutOfRange(let paths):
                return
                    "\(paths.count) state(s) have an update time outside the years 0000–9999, which the document cannot carry (\(paths.prefix(5).map(\.rawValue).joined(separator: ", "))); save them again or remove them."
            case .documentTooLarge(let byteCount, let limit):
                return
                    "The document would be \(TextFormat.bytes(byteCount)), over the \(TextFormat.bytes(limit)) a decoder accepts; export part of the states, or keep large data outside the store."
            case .notImportable(let error):
                return "The document would be refused on import: \(error)."
            }
        }
    }

    /// Why ``StateExport/init(decoding:maximumStateSize:)`` refused a document: the problem,
    /// and the state it is in, if it is in one. Nothing is imported from a refused document.
    public struct DocumentError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var problem: Problem
        /// The index in `"states"` of the state at fault; `nil` when the problem is the
        /// document's own.
        public var stateIndex: Int?
        /// That state's `"path"` as the document writes it, when it is a string; `nil` for a
        /// problem of the document's own, and for ``Problem/duplicatePath(_:)``, which names it.
        public var statePath: String?

        /// A refusal of the whole document, or of the state at `stateIndex` (whose `"path"`,
        /// when it is a string, is `statePath`).
        ///
        /// - Parameters:
        ///   - problem: what is wrong.
        ///   - stateIndex: the index in `"states"` of the state at fault, if any.
        ///   - statePath: that state's `"path"` as written, if it is a string.
        public init(_ problem: Problem, stateIndex: Int? = nil, statePath: String? = nil) {
            self.problem = problem
            self.stateIndex = stateIndex
            self.statePath = statePath
        }

        /// Where the problem is, for messages: `states[1] ("root//x")`, or `states[1]` when that
        /// state's path is not a string; `nil` for a problem of the document's own.
        public var location: String? {
            guard let stateIndex else { return nil }
            return statePath.map { "states[\(stateIndex)] (\($0.debugDescription))" } ?? "states[\(stateIndex)]"
        }

        /// Where and what: `states[1] ("root//x"): "root//x" is not a valid restoration path: a component is empty`.
        public var description: String {
            location.map { "\($0): \(problem)" } ?? problem.description
        }

        /// Whether the document is refused because a newer build wrote it
        /// (``Problem/formatTooNew(found:supported:)`` or
        /// ``Problem/databaseSchemaTooNew(found:supported:)``): a newer build may read it.
        public var isFromNewerBuild: Bool {
            switch problem {
            case .formatTooNew, .databaseSchemaTooNew: true
            default: false
            }
        }

        /// Every way a document is refused. Each ``description`` says what is wrong and, where
        /// it is not plain, what to do.
        public enum Problem: Sendable, Hashable, CustomStringConvertible {
            // The document.

            /// The document is `byteCount` bytes, over ``StateExport/maximumByteCount`` (`limit`).
            case documentTooLarge(byteCount: Int, limit: Int)
            /// The bytes are not JSON, or nest deeper than ``StateExport/maximumDepth``: `reason`,
            /// at the 1-based `line` and `column`. Repeated keys in one object are refused here.
            case malformedJSON(reason: String, line: Int, column: Int)
            /// The top level is not a JSON object but `kind` (`"an array"`, `"a number"`, ...).
            case topLevelNotAnObject(kind: String)
            /// `"schema"`, the format version, is missing or not an integer.
            case missingFormat
            /// `"kind"` is not `"export"`: another document.
            case notAnExport
            /// `"schema"` is below 1, which no export document has.
            case invalidFormat(Int)
            /// The document's format is newer than the one this build reads (``StateExport/currentFormat``).
            case formatTooNew(found: Int, supported: Int)
            /// `"database_schema_version"` is missing or not an integer.
            case missingDatabaseSchemaVersion
            /// `"database_schema_version"` is negative.
            case invalidDatabaseSchemaVersion(Int)
            /// The states come from a database whose schema is newer than this build knows
            /// (``StateStore/StateStore/latestSchemaVersion``).
            case databaseSchemaTooNew(found: Int, supported: Int)
            /// `"states"` is missing or not an array.
            case missingStates
            /// The path appears more than once in `"states"` (paths compared by their UTF-8 bytes).
            case duplicatePath(String)
            /// `"state_count"` is present and differs from the number of states: the document was cut short.
            case stateCountMismatch(declared: Int, actual: Int)

            // One state.

            /// The state is not a JSON object but `kind`.
            case stateNotAnObject(kind: String)
            /// `"path"` is missing or not a string.
            case missingPath
            /// `"path"` is not a valid ``RestorationPath``, for `reason`.
            case invalidPath(String, reason: String)
            /// `"type_name"` is missing or not a string.
            case missingTypeName
            /// `"type_name"` holds a control character or is longer than 4096 bytes.
            case invalidTypeName
            /// `"version"` is missing or not an integer from 0 to ``StoredState/maximumVersion``.
            case invalidVersion
            /// `"generation"` is not an integer from 1 to ``StoredState/maximumGeneration``.
            case invalidGeneration
            /// `"encoding"` is missing or not a ``StateEncoding``.
            case invalidEncoding
            /// `"updated_at"` is not an ISO 8601 time in UTC with a four-digit year and a day
            /// that exists.
            case invalidUpdateTime
            /// `"base64"` is not a string of valid base64, or is longer than a state of `limit`
            /// bytes can be.
            case invalidBase64(limit: Int)
            /// The state has neither `"value"` nor `"base64"`.
            case missingValue
            /// The state has both `"value"` and `"base64"`.
            case valueAndBase64
            /// The state is `byteCount` bytes, over the decoder's state size limit (`limit`).
            case stateTooLarge(byteCount: Int, limit: Int)
            /// `"byte_count"` is present and differs from the `actual` size of the state's bytes.
            case byteCountMismatch(actual: Int)
            /// `"checksum"` is present and not 16 hex digits.
            case invalidChecksum
            /// `"key_id"` is present and not 1 to 64 printable ASCII characters, or the state is
            /// sealed but given as `"value"` (sealed bytes are always `"base64"`).
            case invalidKeyID
            /// `"checksum"` does not match the state's bytes: the document was altered or damaged.
            case checksumMismatch

            /// What is wrong, in one clause (no final full stop).
            public var description: String {
                switch self {
                case .documentTooLarge(let byteCount, let limit):
                    "the document is \(TextFormat.bytes(byteCount)), over the \(TextFormat.bytes(limit)) import limit"
                case .malformedJSON(let reason, let line, let column):
                    "not a valid export document: \(JSONParseError(message: reason, line: line, column: column))"
                case .topLevelNotAnObject(let kind):
                    "not a valid export document: the top level is \(kind), not an object"
                case .missingFormat:
                    "not an export document: \"schema\" is missing or not an integer"
                case .notAnExport:
                    "not an export document: \"kind\" is not \"export\""
                case .invalidFormat(let format):
                    "not an export document: \"schema\" is \(format); export documents start at 1"
                case .formatTooNew(let found, let supported):
                    "the document format is version \(found), newer than the \(supported) this build reads; read it with a newer build of StateStore"
                case .missingDatabaseSchemaVersion:
                    "\"database_schema_version\" is missing or not an integer"
                case .invalidDatabaseSchemaVersion(let version):
                    "\"database_schema_version\" is \(version), which no database has"
                case .databaseSchemaTooNew(let found, let supported):
                    "the states come from a database with schema version \(found), newer than the \(supported) this build knows; import them with a newer build of StateStore"
                case .missingStates:
                    "\"states\" is missing or not an array"
                case .duplicatePath(let path):
                    "the path \(path.debugDescription) appears more than once"
                case .stateCountMismatch(let declared, let actual):
                    "\"state_count\" says \(declared) but \"states\" holds \(actual); the document is incomplete"
                case .stateNotAnObject(let kind):
                    "a state must be an object, not \(kind)"
                case .missingPath:
                    "\"path\" is missing or not a string"
                case .invalidPath(let path, let reason):
                    "\"\(path)\" is not a valid restoration path: \(reason)"
                case .missingTypeName:
                    "\"type_name\" is missing or not a string"
                case .invalidTypeName:
                    "\"type_name\" holds a control character or is longer than 4096 bytes; a Swift type name has neither"
                case .invalidVersion:
                    "\"version\" is missing or not an integer from 0 to \(StoredState.maximumVersion)"
                case .invalidGeneration:
                    "\"generation\" is not an integer from 1 to \(StoredState.maximumGeneration)"
                case .invalidEncoding:
                    "\"encoding\" is missing or not one of \(StateEncoding.allCases.map(\.rawValue).joined(separator: ", "))"
                case .invalidUpdateTime:
                    "\"updated_at\" is not an ISO 8601 time in UTC (like 2026-01-02T03:04:05.678Z)"
                case .invalidBase64(let limit):
                    "\"base64\" is not valid base64, or holds more than the \(limit) bytes the state size limit allows"
                case .invalidKeyID:
                    "\"key_id\" is not 1 to 64 printable ASCII characters, or a sealed state is given as \"value\" instead of \"base64\""
                case .missingValue:
                    "the state has neither \"value\" nor \"base64\""
                case .valueAndBase64:
                    "the state has both \"value\" and \"base64\"; keep one"
                case .stateTooLarge(let byteCount, let limit):
                    "the state is \(byteCount) bytes, over the \(limit)-byte state size limit; decode (and export) with a larger maximumStateSize, as large as the application's StateStore.Options.maximumStateSize"
                case .byteCountMismatch(let actual):
                    "\"byte_count\" does not match the state's \(actual) bytes"
                case .invalidChecksum:
                    "\"checksum\" is not 16 hex digits"
                case .checksumMismatch:
                    "the checksum does not match the state's bytes; the document was altered or damaged"
                }
            }
        }
    }
}
