import Foundation
import FuzzSupport

@testable import StateStore

// The package's JSON layer on arbitrary bytes: `JSONParser.parse`, the copier that checks and
// rewrites a text without building its value (`JSONParser.copy`), the parses that copy a member
// (`parse(_:maximumDepth:copying:)`) or stream a top-level array
// (`parse(_:maximumDepth:streaming:copying:element:)`), which the export decoder uses, and the
// writer (`JSON.serializedBytes`, `JSON.write(to:pretty:sortKeys:indent:)`).
//
// Each at the export's depth limit (64) and at a shallow one, so that refusals for depth are met
// at every kind of value. Invariants (from the doc comments of JSONParser.swift,
// JSONParser+Copying.swift and JSON+Writing.swift):
// - nothing traps;
// - `copy` accepts exactly what `parse` accepts, and refuses with the same error at the same
//   line and column, leaving its output as it was;
// - what `copy` appends is what `serializedBytes` writes of the parsed value, compact or (with a
//   `prettyIndent`) pretty at that indent; so it parses to the same value, and copying it again
//   gives the same bytes; `copy` returns `true` exactly when the input already is that compact
//   text;
// - `serializedBytes` (compact, pretty, sorted) of a parsed value parses back to the same value
//   (sorted: to the value with its members sorted);
// - parsing with `copying:` gives the value less that member and the member's compact text;
//   streaming gives the value with the streamed arrays empty and hands on their elements in order;
//   both accept and refuse exactly what `parse` does, with the same error.
private let depths = [StateExport.maximumDepth, 3]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    for depth in depths {
        check(bytes, maximumDepth: depth)
    }
    return 0
}

private func check(_ bytes: [UInt8], maximumDepth depth: Int) {
    let parsed: Result<JSON, JSONParseError>
    do throws(JSONParseError) {
        parsed = .success(try JSONParser.parse(bytes, maximumDepth: depth))
    } catch {
        parsed = .failure(error)
    }

    // The copier, compact, after bytes already in the output.
    let prefix: [UInt8] = [0x5B, 0x20]
    var output = prefix
    let compactResult: Result<Bool, JSONParseError>
    do throws(JSONParseError) {
        compactResult = .success(try JSONParser.copy(bytes, maximumDepth: depth, to: &output))
    } catch {
        compactResult = .failure(error)
    }
    switch (parsed, compactResult) {
    case (.failure(let expected), .failure(let error)):
        invariant(
            error.message == expected.message && error.line == expected.line && error.column == expected.column,
            "copy refused with \(error), parse with \(expected)")
        invariant(output == prefix, "a refused copy changed its output")
    case (.failure(let expected), .success):
        invariant(false, "copy accepted what parse refuses (\(expected))")
    case (.success, .failure(let error)):
        invariant(false, "copy refused what parse accepts: \(error)")
    case (.success(let value), .success(let isCompact)):
        let compact = value.serializedBytes()
        invariant(output.starts(with: prefix), "copy changed what its output held")
        let copied = Array(output[prefix.count...])
        invariant(
            copied == compact,
            "copy wrote \(text(copied)), the value serialises as \(text(compact))")
        invariant(isCompact == (bytes == compact), "copy says compact: \(isCompact), for \(text(bytes))")
        // Copying the copy: the same bytes, and compact.
        var again: [UInt8] = []
        do throws(JSONParseError) {
            let compactAgain = try JSONParser.copy(copied, maximumDepth: depth, to: &again)
            invariant(again == copied, "copying the copy gave \(text(again)), not \(text(copied))")
            invariant(compactAgain, "the copy's own output is not compact")
        } catch {
            invariant(false, "copy refuses its own output \(text(copied)): \(error)")
        }
        // The writer: compact, pretty and sorted text parses back to the value.
        for (pretty, sortKeys) in [(false, false), (true, false), (true, true)] {
            let written = value.serializedBytes(pretty: pretty, sortKeys: sortKeys)
            guard let back = try? JSONParser.parse(written, maximumDepth: depth) else {
                invariant(false, "parse refuses the writer's \(text(written))")
                continue
            }
            invariant(
                same(back, sortKeys ? sorted(value) : value),
                "the writer's \(text(written)) (pretty: \(pretty), sortKeys: \(sortKeys)) parses to another value")
        }
        invariant(
            Array(value.serialized().utf8) == compact, "serialized() is not serializedBytes() as a string")
        // Pretty copies, as `write(to:pretty:indent:)` writes the value at that indent.
        for indent in [0, 2] {
            var pretty: [UInt8] = []
            do throws(JSONParseError) {
                _ = try JSONParser.copy(bytes, maximumDepth: depth, prettyIndent: indent, to: &pretty)
            } catch {
                invariant(false, "a pretty copy refused what the compact copy accepts: \(error)")
            }
            var expected: [UInt8] = []
            value.write(to: &expected, pretty: true, indent: indent)
            invariant(pretty == expected, "pretty copy at \(indent) wrote \(text(pretty)), not \(text(expected))")
        }
    }

    checkCopyingMember(bytes, maximumDepth: depth, parsed: parsed)
    checkStreaming(bytes, maximumDepth: depth, parsed: parsed)
}

/// `parse(_:maximumDepth:copying:)` against `parse`: the member named `value` copied, not built.
private func checkCopyingMember(_ bytes: [UInt8], maximumDepth depth: Int, parsed: Result<JSON, JSONParseError>) {
    let member = "value"
    do throws(JSONParseError) {
        let element = try JSONParser.parse(bytes, maximumDepth: depth, copying: member)
        guard case .success(let value) = parsed else {
            invariant(false, "parse(copying:) accepted what parse refuses")
            return
        }
        guard case .object(let members) = value else {
            invariant(same(element.value, value) && element.copied == nil, "parse(copying:) changed a non-object")
            return
        }
        let kept = members.filter { !JSONParser.sameBytes($0.key, member) }
        invariant(same(element.value, .object(kept)), "parse(copying:) kept other members than parse")
        let copiedMember = members.first { JSONParser.sameBytes($0.key, member) }?.value
        invariant(
            element.copied == copiedMember?.serializedBytes(),
            "parse(copying:) copied \(element.copied.map(text) ?? "nothing") for \(copiedMember.map { "\($0)" } ?? "no member")"
        )
    } catch {
        guard case .failure(let expected) = parsed else {
            invariant(false, "parse(copying:) refused what parse accepts: \(error)")
            return
        }
        invariant(sameError(error, expected), "parse(copying:) refused with \(error), parse with \(expected)")
    }
}

/// The export decoder's streaming parse against `parse`.
private func checkStreaming(_ bytes: [UInt8], maximumDepth depth: Int, parsed: Result<JSON, JSONParseError>) {
    let streamed: Set<String> = ["states", "quarantine"]
    let member = "value"
    var elements: [(key: String, element: JSONParser.Element)] = []
    do throws(JSONParseError) {
        let value = try JSONParser.parse(bytes, maximumDepth: depth, streaming: streamed, copying: member) {
            elements.append(($0, $1))
        }
        guard case .success(let whole) = parsed else {
            invariant(false, "the streaming parse accepted what parse refuses")
            return
        }
        guard case .object(let members) = whole else {
            invariant(same(value, whole) && elements.isEmpty, "the streaming parse changed a non-object")
            return
        }
        var expectedElements: [(key: String, value: JSON)] = []
        let emptied = members.map { (key: String, value: JSON) -> (key: String, value: JSON) in
            guard streamed.contains(key), case .array(let items) = value else { return (key, value) }
            expectedElements += items.map { (key, $0) }
            return (key, .array([]))
        }
        invariant(same(value, .object(emptied)), "the streaming parse gave another document")
        invariant(elements.count == expectedElements.count, "the streaming parse handed on another number of elements")
        for ((key, element), expected) in zip(elements, expectedElements) {
            invariant(JSONParser.sameBytes(key, expected.key), "an element handed on under another key")
            guard case .object(let fields) = expected.value else {
                invariant(same(element.value, expected.value) && element.copied == nil, "a streamed element changed")
                continue
            }
            invariant(
                same(element.value, .object(fields.filter { !JSONParser.sameBytes($0.key, member) })),
                "a streamed element kept other members")
            invariant(
                element.copied == fields.first { JSONParser.sameBytes($0.key, member) }?.value.serializedBytes(),
                "a streamed element's copied member differs")
        }
    } catch {
        guard case .failure(let expected) = parsed else {
            invariant(false, "the streaming parse refused what parse accepts: \(error)")
            return
        }
        invariant(sameError(error, expected), "the streaming parse refused with \(error), parse with \(expected)")
    }
}

private func sameError(_ a: JSONParseError, _ b: JSONParseError) -> Bool {
    a.message == b.message && a.line == b.line && a.column == b.column
}

/// Structural equality with strings compared by their bytes and numbers by their text (`JSON`
/// keeps both exactly, and `String`'s `==` is canonical equivalence).
private func same(_ a: JSON, _ b: JSON) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.number(let x), .number(let y)): return JSONParser.sameBytes(x, y)
    case (.string(let x), .string(let y)): return JSONParser.sameBytes(x, y)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count
            && zip(x, y).allSatisfy { JSONParser.sameBytes($0.key, $1.key) && same($0.value, $1.value) }
    default: return false
    }
}

/// The value with every object's members sorted as `serializedBytes(sortKeys: true)` sorts them.
private func sorted(_ value: JSON) -> JSON {
    switch value {
    case .array(let items): return .array(items.map(sorted))
    case .object(let members):
        return .object(
            members.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map {
                ($0.element.key, sorted($0.element.value))
            })
    default: return value
    }
}

private func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription
}
