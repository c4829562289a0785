import Foundation
import FuzzSupport

@testable import StateStore

// The hierarchy archive's readers on arbitrary bytes, along the path the library reads a stored
// archive (`HierarchyArchive.decode`): `ArchiveScan.scan` first (nesting depth and object count
// within `Limits.standard`), then the direct `ArchiveReader.read`, and `JSONDecoder` (as
// `StateCoding.decoder()` configures it) for whatever the reader declines.
//
// Invariants (from ArchiveReader.swift, HierarchyArchive.swift and HierarchyArchive+Validation.swift):
// - nothing traps, and the reader only ever sees bytes the scan passed (its recursion is bounded
//   by that scan); bytes the scan refuses are refused by `decode` with the scan's reason;
// - whenever `ArchiveReader` accepts, `JSONDecoder` accepts too and gives the same archive, every
//   string the same bytes (it may decline what the decoder accepts: it is strict on purpose);
// - `decode` gives the reader's archive when it reads one, else exactly the decoder's verdict;
// - validating an archive that decodes never traps, and a problem it finds has a reason;
// - an archive that decodes is written by `ArchiveJSONWriter` byte for byte as `JSONEncoder`
//   (sorted keys, slashes unescaped) writes it, and those bytes decode to the same archive,
//   through the reader when it takes them.
private let limits = HierarchyArchive.Limits.standard

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)

    if let problem = ArchiveScan.scan(data, limits: limits) {
        do {
            let archive = try HierarchyArchive.decode(data)
            invariant(false, "decode read \(archive) past the scan's \(problem)")
        } catch {
            invariant(
                error == .decodingFailed(path: "hierarchy", reason: problem.description),
                "decode refused bytes the scan refused with \(error), not the scan's reason")
        }
        return 0
    }

    let direct = ArchiveReader.read(data)
    let decoded: HierarchyArchive?
    let decoderError: (any Error)?
    do {
        decoded = try StateCoding.decoder().decode(HierarchyArchive.self, from: data)
        decoderError = nil
    } catch {
        decoded = nil
        decoderError = error
    }
    if let direct {
        guard let decoded else {
            invariant(false, "ArchiveReader read an archive JSONDecoder refuses: \(decoderError.map { "\($0)" } ?? "")")
            return 0
        }
        invariant(direct == decoded, "ArchiveReader read \(direct), JSONDecoder \(decoded)")
        invariant(sameBytes(direct, decoded), "ArchiveReader and JSONDecoder read strings with different bytes")
    }

    // The library's own decode: the reader's archive, else the decoder's.
    let expected = direct ?? decoded
    do {
        let library = try HierarchyArchive.decode(data)
        guard let expected else {
            invariant(false, "decode accepted what both readers refuse")
            return 0
        }
        invariant(library == expected && sameBytes(library, expected), "decode gave another archive")
    } catch {
        invariant(expected == nil, "decode refused an archive a reader accepts: \(error)")
    }
    guard let archive = expected else { return 0 }

    // What a launch does with it before rebuilding anything.
    do {
        try archive.validate(limits: limits)
    } catch {
        invariant(!error.reason.isEmpty, "a validation problem without a reason")
    }

    // What the library stores when it archives this value, and reads back at the next launch.
    let written: Data
    do {
        written = try archive.encoded()
    } catch {
        invariant(false, "an archive that decodes cannot be written: \(error)")
        return 0
    }
    if let encoder = try? StateCoding.encoder().encode(archive) {
        invariant(
            written == encoder,
            "ArchiveJSONWriter wrote \(String(decoding: written, as: UTF8.self).debugDescription), "
                + "JSONEncoder \(String(decoding: encoder, as: UTF8.self).debugDescription)")
    }
    do {
        let again = try HierarchyArchive.decode(written)
        invariant(again == archive && sameBytes(again, archive), "the written archive reads back differently")
    } catch {
        invariant(false, "the written archive is refused: \(error)")
    }
    if let again = ArchiveReader.read(written) {
        invariant(again == archive && sameBytes(again, archive), "ArchiveReader reads the written archive differently")
    }
    return 0
}

/// Whether two archives hold the same bytes in every string (`==` on `String` is canonical
/// equivalence: "é" and "e\u{301}" are equal strings, and different archives on disk).
private func sameBytes(_ a: HierarchyArchive, _ b: HierarchyArchive) -> Bool {
    func same(_ x: String?, _ y: String?) -> Bool { x.map { Array($0.utf8) } == y.map { Array($0.utf8) } }
    func same(_ x: HierarchyArchive.Node?, _ y: HierarchyArchive.Node?) -> Bool {
        guard let x, let y else { return x == nil && y == nil }
        return same(x.storyboardIdentifier, y.storyboardIdentifier)
            && same(x.restorationIdentifier, y.restorationIdentifier)
            && same(x.restorationClass, y.restorationClass) && x.kind == y.kind && x.selectedIndex == y.selectedIndex
            && x.children.count == y.children.count && zip(x.children, y.children).allSatisfy { same($0, $1) }
            && same(x.presented?.node, y.presented?.node)
    }
    return a.format == b.format && same(a.orientation, b.orientation) && same(a.root, b.root)
        && a.unarchived.count == b.unarchived.count
        && zip(a.unarchived, b.unarchived).allSatisfy {
            same($0.path, $1.path) && same($0.typeName, $1.typeName) && same($0.reason, $1.reason)
        }
}
