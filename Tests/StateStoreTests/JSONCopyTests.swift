import Foundation
import Testing

@testable import StateStore

/// The parser's copying reads (an export writing a state's JSON, import and the export's check
/// reading a state's `value`) against the parser that builds the value: on every text, valid
/// or not, the same verdict, the same error at the same place, and the bytes the built value
/// serialises to.
@Suite("JSON: copying without building")
struct JSONCopyTests {
    /// Texts from random values, compact and pretty, then with random damage: bytes replaced by
    /// the ones JSON's grammar turns on, inserted, deleted; escapes spelled every way.
    static let texts: [[UInt8]] = {
        var generator = SplitMix(seed: 0xC0B1)
        func pick<T>(_ items: [T]) -> T { items[Int(generator.next() % UInt64(items.count))] }
        let strings = [
            JSONTests.awkward, "", "a", "value", "with \"quotes\"", "back\\slash", "line\nbreak", "😀", "tab\t",
            "\u{1F}", "é", "e\u{301}",
        ]
        let numbers = ["0", "-0", "12", "-3.25", "1e300", "2E-7", "6.02e+23", "-0.0"]
        func value(depth: Int) -> JSON {
            switch generator.next() % (depth > 5 ? 5 : 7) {
            case 0: return .string(pick(strings))
            case 1: return .number(pick(numbers))
            case 2: return .bool(generator.next() % 2 == 0)
            case 3: return .null
            case 4: return .int(Int64(bitPattern: generator.next()) >> Int(generator.next() % 63))
            case 5: return .array((0..<Int(generator.next() % 4)).map { _ in value(depth: depth + 1) })
            default:
                // Up to 19 members: objects past the 16 keys compared one by one.
                return .object(
                    (0..<Int(generator.next() % 20)).map { index in
                        (generator.next() % 3 == 0 ? "value" : "\(pick(strings))\(index)", value(depth: depth + 1))
                    })
            }
        }
        let grammar: [UInt8] =
            Array(#""\{}[],:0-e.E+ tnuf/"#.utf8) + [0x01, 0x0A, 0x7F, 0xFF, 0xC3, 0xA9, 0xED, 0xA0, 0xF4, 0x90]
        let escapes = [
            #"\/"#, #"\u0041"#, #"\u001F"#, #"\u001f"#, #"\u00e9"#, #"\ud83d\ude00"#, #"\ud83d"#, #"\n"#, #"\u000a"#,
            #"\""#, #"\q"#,
        ]
        var texts: [[UInt8]] = []
        for _ in 0..<1_500 {
            // A state's own shape (an object with a `value`) as often as anything.
            var root = value(depth: 0)
            if generator.next() % 2 == 0 {
                root = .object([("path", .string("a/b")), ("value", root), ("n", .int(1))])
            }
            let compact = root.serializedBytes()
            texts.append(compact)
            texts.append(root.serializedBytes(pretty: true))
            for _ in 0..<3 {
                var damaged = compact
                for _ in 0...(generator.next() % 3) where !damaged.isEmpty {
                    let at = Int(generator.next() % UInt64(damaged.count))
                    switch generator.next() % 5 {
                    case 0: damaged[at] = pick(grammar)
                    case 1: damaged.insert(pick(grammar), at: at)
                    case 2: damaged.remove(at: at)
                    case 3: damaged.insert(contentsOf: Array(pick([" ", "\n", "\t", "\r", "  "]).utf8), at: at)
                    default:
                        // An escape inside a string, where the bytes before it open one.
                        if let quote = damaged[..<at].lastIndex(of: UInt8(ascii: "\"")) {
                            damaged.insert(contentsOf: Array(pick(escapes).utf8), at: quote + 1)
                        }
                    }
                }
                texts.append(damaged)
            }
        }
        // Nesting around the limits the tests use.
        for depth in [3, 4, 5, 63, 64, 65] {
            texts.append(Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8))
            texts.append(
                Array(
                    (String(repeating: #"{"value":"#, count: depth) + "1" + String(repeating: "}", count: depth)).utf8))
        }
        texts += ["", " ", "1 ", " 1", "{}", "[]", "{ }", "[ ]", "\"\"", "nul", "1 2", "{\"value\":1,\"value\":2}"].map
        { Array($0.utf8) }
        return texts
    }()

    @Test func copyingAgreesWithBuildingOnEveryText() {
        var exact = 0, refused = 0
        for text in Self.texts {
            for depth in [4, 64] {
                let built = Result { () throws(JSONParseError) in try JSONParser.parse(text, maximumDepth: depth) }
                var compact: [UInt8] = []
                let copied = Result { () throws(JSONParseError) in
                    try JSONParser.copy(text, maximumDepth: depth, to: &compact)
                }
                switch (built, copied) {
                case (.failure(let expected), .failure(let error)):
                    refused += 1
                    #expect(
                        error.description == expected.description,
                        "\(String(decoding: text, as: UTF8.self).debugDescription)")
                case (.success(let value), .success(let isCompact)):
                    let serialized = value.serializedBytes()
                    #expect(compact == serialized, "\(String(decoding: text, as: UTF8.self).debugDescription)")
                    #expect(
                        isCompact == (serialized == text), "\(String(decoding: text, as: UTF8.self).debugDescription)")
                    if isCompact { exact += 1 }
                    for indent in [0, 3] {
                        var pretty: [UInt8] = []
                        var expected: [UInt8] = []
                        value.write(to: &expected, pretty: true, indent: indent)
                        _ = try? JSONParser.copy(text, maximumDepth: depth, prettyIndent: indent, to: &pretty)
                        #expect(pretty == expected)
                    }
                default:
                    Issue.record(
                        "built \(built), copied \(copied): \(String(decoding: text, as: UTF8.self).debugDescription)")
                }
            }
        }
        // The texts reach both verdicts often, so neither side is agreed with by accident.
        #expect(exact > 1_000)
        #expect(refused > 1_000)
    }

    @Test func aMemberCopiedIsTheBytesItsBuiltValueWrites() {
        var copiedMembers = 0
        for text in Self.texts {
            for depth in [4, 64] {
                let built = Result { () throws(JSONParseError) in try JSONParser.parse(text, maximumDepth: depth) }
                let element = Result { () throws(JSONParseError) in
                    try JSONParser.parse(text, maximumDepth: depth, copying: "value")
                }
                switch (built, element) {
                case (.failure(let expected), .failure(let error)):
                    #expect(
                        error.description == expected.description,
                        "\(String(decoding: text, as: UTF8.self).debugDescription)")
                case (.success(let value), .success(let element)):
                    if case .object(let members) = value {
                        #expect(element.copied == value["value"].map { $0.serializedBytes() })
                        #expect(
                            element.value.serializedBytes()
                                == JSON.object(members.filter { $0.key != "value" }).serializedBytes())
                        if element.copied != nil { copiedMembers += 1 }
                    } else {
                        #expect(element.copied == nil)
                        #expect(element.value.serializedBytes() == value.serializedBytes())
                    }
                default:
                    Issue.record(
                        "built \(built), copied \(element): \(String(decoding: text, as: UTF8.self).debugDescription)")
                }
            }
        }
        #expect(copiedMembers > 500)
    }

    /// The member is named by its bytes, as repeated keys are told: a key canonically
    /// equivalent to its name (a different string of bytes) is another member.
    @Test func theMemberCopiedIsFoundByItsBytes() throws {
        let text = Array(#"{"K":1,"\#u{212A}":2,"\#u{E9}":3,"e\#u{301}":4}"#.utf8)
        for (name, copied) in [("K", "1"), ("\u{212A}", "2"), ("\u{E9}", "3"), ("e\u{301}", "4")] {
            let element = try JSONParser.parse(text, maximumDepth: 4, copying: name)
            #expect(element.copied == Array(copied.utf8))
            guard case .object(let members) = element.value else {
                Issue.record("not an object")
                continue
            }
            #expect(members.count == 3)
        }
    }
}
