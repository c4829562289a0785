import Foundation
import FuzzSupport
import StateStore

// `statectl import`'s reader on arbitrary bytes: `ExportDocument.validate`, the strict JSON
// parser under it, and the export writer for what it accepts. The validator's source files
// are symbolic links to Sources/statectl/Support (see Package.swift).
//
// Invariants (from ExportDocument.swift and JSON.swift):
// - nothing traps, however deep or malformed the document; a refusal is a `CLIError` whose
//   message names the source and says nothing was imported, with exit status 1 (or 3 for a
//   document or database schema that is too new);
// - every accepted state has a valid restoration path, a unique one, at most the state size
//   limit of bytes, a checksum that matches them, version >= 0 and generation >= 1;
// - exporting the accepted states and importing that export gives the same states back
//   (bytes, checksum, type, versions, encoding and time to the millisecond);
// - the JSON parser accepts exactly what it can write back and parse again to the same text.
private let source = "fuzz/import.json"
private let maximumStateSize = StateStore.Options().maximumStateSize

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)

    // The JSON layer alone: a parsed value serialises to text that parses to the same text.
    if let value = try? JSONParser.parse(data, maximumDepth: ExportDocument.maximumDepth) {
        let compact = value.serialized()
        guard let again = try? JSONParser.parse(Data(compact.utf8), maximumDepth: ExportDocument.maximumDepth) else {
            invariant(false, "the parser refuses its own output \(compact.prefix(200).debugDescription)")
            return 0
        }
        invariant(again.serialized() == compact, "serialising is not stable")
        _ = value.serialized(pretty: true, sortKeys: true)
    }

    let states: [StoredState]
    do {
        states = try ExportDocument.validate(data, source: source, maximumStateSize: maximumStateSize)
    } catch {
        invariant(error.message.hasPrefix("\(source): ") || error.message.contains(source), "refusal does not name the source")
        invariant(error.message.hasSuffix("Nothing was imported."), "refusal does not say nothing was imported")
        invariant(error.status == .problemFound || error.status == .cannotOpen, "refusal has exit status \(error.status)")
        return 0
    }
    var paths: Set<String> = []
    for state in states {
        invariant((try? RestorationPath(validating: state.path.rawValue)) == state.path, "accepted an invalid path")
        invariant(paths.insert(state.path.rawValue).inserted, "accepted a duplicate path")
        invariant(state.bytes.count <= maximumStateSize, "accepted \(state.bytes.count) bytes, over the limit")
        invariant(state.checksumIsValid && state.checksum == StoredState.checksum(of: state.bytes), "checksum does not match")
        invariant(state.version >= 0 && state.generation >= 1, "version or generation out of range")
    }

    // Round trip through the export writer.
    let exported = ExportDocument.make(states: states, databaseSchemaVersion: StateStore.latestSchemaVersion, exportedAt: Date(timeIntervalSince1970: 0))
    let text = exported.serialized(pretty: true)
    do {
        let reimported = try ExportDocument.validate(Data(text.utf8), source: source, maximumStateSize: maximumStateSize)
        invariant(reimported.count == states.count, "an export of accepted states imports a different number")
        for (before, after) in zip(states, reimported) {
            // A state without "updated_at" gets the current time, finer than the milliseconds
            // an export writes; everything else must match exactly.
            var expected = before
            expected.updatedAt = Date(timeIntervalSince1970: (before.updatedAt.timeIntervalSince1970 * 1000).rounded() / 1000)
            invariant(after == expected, "\(before.path) imports differently after an export")
        }
    } catch {
        invariant(false, "an export of accepted states is refused: \(error.message)")
    }
    return 0
}
