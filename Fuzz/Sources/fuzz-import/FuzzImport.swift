import Foundation
import FuzzSupport

@testable import StateStore

// The library's import decoder on arbitrary bytes: `StateExport(decoding:maximumStateSize:)`,
// the strict JSON parser under it, and `StateExport.encoded()` for what it accepts. `statectl
// import` calls the same decoder.
//
// Invariants (from StateExport+Decoding.swift, StateExport.swift and JSON.swift):
// - nothing traps, however deep or malformed the document; a refusal is a `DocumentError` with a
//   description, a location exactly when it names a state (by an index inside `"states"`), and
//   "from a newer build" exactly for a newer document format or database schema;
// - every accepted state has a valid restoration path, a unique one, at most the state size
//   limit of bytes, a checksum that matches them, version >= 0 and generation >= 1;
// - encoding the accepted states and decoding that document gives the same states back
//   (bytes, checksum, type, versions, encoding and time to the millisecond);
// - the JSON parser accepts exactly what it can write back and parse again to the same text.
private let maximumStateSize = StateStore.Options().maximumStateSize

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)

    // The JSON layer alone: a parsed value serialises to text that parses to the same text.
    if let value = try? JSONParser.parse(data, maximumDepth: StateExport.maximumDepth) {
        let compact = value.serialized()
        guard let again = try? JSONParser.parse(Data(compact.utf8), maximumDepth: StateExport.maximumDepth) else {
            invariant(false, "the parser refuses its own output \(compact.prefix(200).debugDescription)")
            return 0
        }
        invariant(again.serialized() == compact, "serialising is not stable")
        _ = value.serialized(pretty: true, sortKeys: true)
    }

    let export: StateExport
    do {
        export = try StateExport(decoding: data, maximumStateSize: maximumStateSize)
    } catch {
        invariant(!error.description.isEmpty, "a refusal without a description")
        invariant(
            (error.location != nil) == (error.stateIndex != nil), "a location without a state, or a state without one")
        if let index = error.stateIndex { invariant(index >= 0, "a refusal names states[\(index)]") }
        switch error.problem {
        case .formatTooNew, .databaseSchemaTooNew:
            invariant(error.isFromNewerBuild, "a newer document is not said to be one")
        default: invariant(!error.isFromNewerBuild, "\(error.problem) is said to come from a newer build")
        }
        return 0
    }
    var paths: Set<String> = []
    for state in export.states {
        invariant((try? RestorationPath(validating: state.path.rawValue)) == state.path, "accepted an invalid path")
        invariant(paths.insert(state.path.rawValue).inserted, "accepted a duplicate path")
        invariant(state.bytes.count <= maximumStateSize, "accepted \(state.bytes.count) bytes, over the limit")
        invariant(
            state.checksumIsValid && state.checksum == StoredState.checksum(of: state.bytes), "checksum does not match")
        invariant(state.version >= 0 && state.generation >= 1, "version or generation out of range")
    }

    // Round trip through the encoder.
    let document: Data
    do {
        document = try StateExport(
            states: export.states, databaseSchemaVersion: export.databaseSchemaVersion,
            exportedAt: Date(timeIntervalSince1970: 0)
        ).encoded()
    } catch {
        invariant(false, "accepted states cannot be encoded: \(error)")
        return 0
    }
    do {
        let reimported = try StateExport(decoding: document, maximumStateSize: maximumStateSize)
        invariant(
            reimported.states.count == export.states.count, "an export of accepted states decodes to a different number"
        )
        for (before, after) in zip(export.states, reimported.states) {
            // A state without "updated_at" gets the current time, finer than the milliseconds
            // a document writes; everything else must match exactly.
            var expected = before
            expected.updatedAt = Date(
                timeIntervalSince1970: (before.updatedAt.timeIntervalSince1970 * 1000).rounded() / 1000)
            invariant(after == expected, "\(before.path) decodes differently after an export")
        }
    } catch {
        invariant(false, "an export of accepted states is refused: \(error)")
    }
    return 0
}
