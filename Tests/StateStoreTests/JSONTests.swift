import Foundation
import Testing

@testable import StateStore

/// The JSON writer and parser every export and `statectl` document goes through: escapes
/// exactly as documented, byte-exact round trips, and errors named where they are.
@Suite("JSON: writing and parsing")
struct JSONTests {
    /// Every ASCII byte, then non-ASCII text from two-byte to four-byte UTF-8.
    static let awkward: String = {
        var text = ""
        for value in 0..<0x80 { text.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        return text + "é ✉︎ \u{2028}\u{FEFF} 😀 e\u{301}"
    }()

    @Test func stringsAreEscapedExactlyAsDocumented() {
        var expected = #"""#
        for value in 0..<0x20 {
            switch value {
            case 0x08: expected += #"\b"#
            case 0x09: expected += #"\t"#
            case 0x0A: expected += #"\n"#
            case 0x0C: expected += #"\f"#
            case 0x0D: expected += #"\r"#
            default: expected += String(format: #"\u%04x"#, value)
            }
        }
        expected +=
            ##" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"##
        expected += "\u{7F}é ✉︎ \u{2028}\u{FEFF} 😀 e\u{301}\""
        #expect(JSON.string(Self.awkward).serialized() == expected)
        #expect(JSON.string("").serialized() == #""""#)
        #expect(JSON.string("plain").serialized() == #""plain""#)
    }

    @Test func prettyAndCompactLayouts() {
        let value = JSON.object([
            ("b", .array([.int(1), .number("-0.5e3"), .null, .bool(true), .bool(false), .array([]), .object([])])),
            ("a", .object([("nested", .string("x"))])),
        ])
        #expect(value.serialized() == #"{"b":[1,-0.5e3,null,true,false,[],{}],"a":{"nested":"x"}}"#)
        #expect(value.serialized(sortKeys: true) == #"{"a":{"nested":"x"},"b":[1,-0.5e3,null,true,false,[],{}]}"#)
        #expect(
            value.serialized(pretty: true) == """
                {
                  "b": [
                    1,
                    -0.5e3,
                    null,
                    true,
                    false,
                    [],
                    {}
                  ],
                  "a": {
                    "nested": "x"
                  }
                }
                """)
        #expect(value.serializedBytes(pretty: true) == Array(value.serialized(pretty: true).utf8))
    }

    @Test func randomValuesSurviveARoundTripByteForByte() throws {
        var generator = SplitMix(seed: 0x150B)
        let strings = [Self.awkward, "", "a", "with \"quotes\"", "back\\slash", "line\nbreak", "😀", "tab\t", "\u{1F}"]
        func value(depth: Int) -> JSON {
            switch generator.next() % (depth > 4 ? 4 : 6) {
            case 0: return .string(strings[Int(generator.next() % UInt64(strings.count))])
            case 1: return .int(Int64(bitPattern: generator.next()) >> Int(generator.next() % 63))
            case 2: return .bool(generator.next() % 2 == 0)
            case 3: return .null
            case 4: return .array((0..<Int(generator.next() % 4)).map { _ in value(depth: depth + 1) })
            default:
                return .object(
                    (0..<Int(generator.next() % 4)).map { index in
                        ("\(strings[Int(generator.next() % UInt64(strings.count))])\(index)", value(depth: depth + 1))
                    })
            }
        }
        for _ in 0..<500 {
            let original = value(depth: 0)
            for pretty in [false, true] {
                let bytes = original.serializedBytes(pretty: pretty)
                let parsed = try JSONParser.parse(bytes, maximumDepth: 64)
                #expect(parsed.serializedBytes(pretty: pretty) == bytes)
                // What Foundation reads from it is the same document.
                let foundation = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
                let again = try JSONSerialization.jsonObject(
                    with: Data(parsed.serializedBytes()), options: [.fragmentsAllowed])
                let options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed]
                #expect(
                    try JSONSerialization.data(withJSONObject: foundation, options: options)
                        == JSONSerialization.data(withJSONObject: again, options: options))
            }
        }
    }

    @Test func escapedStringsAreReadBack() throws {
        let text = #"["a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\ud83d\ude00 plain é"]"#
        let parsed = try JSONParser.parse(Array(text.utf8), maximumDepth: 4)
        guard case .array(let items) = parsed, case .string(let value) = items.first else {
            Issue.record("not an array of one string: \(parsed)")
            return
        }
        #expect(value == "a\"b\\c/d\u{8}\u{C}\n\r\tAé😀 plain é")
    }

    @Test(arguments: [
        ("[\"ab", "unterminated string at line 1, column 5"),
        ("[\"a\u{1}\"]", "unescaped control character in a string at line 1, column 4"),
        ("{\"k\":1,\"k\":2}", "the key \"k\" appears twice in one object at line 1, column 8"),
        ("[tru]", "invalid literal at line 1, column 2"),
        ("[nul", "invalid literal at line 1, column 2"),
        ("[\"\\q\"]", "invalid escape at line 1, column 5"),
    ])
    func errorsAreNamedWhereTheyAre(text: String, message: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(Array(text.utf8), maximumDepth: 4) }
        do {
            _ = try JSONParser.parse(Array(text.utf8), maximumDepth: 4)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func repeatedKeysAreFoundByTheirBytesInSmallAndLargeObjects() throws {
        for count in [2, 8, 9, 16, 17, 40] {
            var members = (0..<count).map { #""k\#($0)":\#($0)"# }
            // Composed and decomposed spellings are different bytes: different keys.
            members += [#""\#u{E9}":1"#, #""e\#u{301}":2"#]
            let distinct = "{" + members.joined(separator: ",") + "}"
            guard case .object(let parsed) = try JSONParser.parse(Array(distinct.utf8), maximumDepth: 4) else {
                Issue.record("not an object")
                continue
            }
            #expect(parsed.count == count + 2)
            let repeated = "{" + (members + [#""k1":0"#]).joined(separator: ",") + "}"
            let column = repeated.unicodeScalars.count - 6  // a column is a Unicode scalar, not a byte
            do {
                _ = try JSONParser.parse(Array(repeated.utf8), maximumDepth: 4)
                Issue.record("a repeated key accepted in an object of \(count + 3)")
            } catch {
                #expect(error.description == "the key \"k1\" appears twice in one object at line 1, column \(column)")
            }
        }
    }

    @Test func invalidUTF8IsRefusedJustAfterItsString() {
        let bytes: [UInt8] = Array(#"["a"#.utf8) + [0xFF] + Array(#"", 1]"#.utf8)
        do {
            _ = try JSONParser.parse(bytes, maximumDepth: 4)
            Issue.record("invalid UTF-8 accepted")
        } catch {
            #expect(error.description == "invalid UTF-8 in a string at line 1, column 6")
        }
    }
}

/// Times as documents write them: ISO 8601 in UTC with milliseconds, four-digit years.
@Suite("JSON: times")
struct ISO8601TextTests {
    static func reference(_ milliseconds: Int64) -> String {
        let (parts, fraction) = TextFormat.utcComponents(milliseconds)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(fraction)
        )
    }

    @Test func timesAreWrittenAsThePrintfFormatWritesThem() {
        let range = TextFormat.representableMilliseconds
        var generator = SplitMix(seed: 0x7153)
        var samples: [Int64] = [range.lowerBound, range.upperBound, 0, -1, 1, 999, 1000, -1000, 1_767_323_045_678]
        for _ in 0..<2000 {
            let span = UInt64(range.upperBound - range.lowerBound)
            samples.append(range.lowerBound + Int64(generator.next() % span))
        }
        for milliseconds in samples {
            #expect(TextFormat.iso8601(milliseconds: milliseconds) == Self.reference(milliseconds))
            #expect(TextFormat.parseISO8601(TextFormat.iso8601(milliseconds: milliseconds)) == milliseconds)
        }
        for milliseconds in samples.prefix(200) {
            let (parts, _) = TextFormat.utcComponents(milliseconds)
            let table = String(
                format: "%04d-%02d-%02d %02d:%02d:%02d",
                Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec)
            )
            #expect(TextFormat.dateTime(milliseconds: milliseconds, separator: " ", fraction: false) == table)
        }
        #expect(TextFormat.iso8601(milliseconds: 1_767_323_045_678) == "2026-01-02T03:04:05.678Z")
        #expect(TextFormat.iso8601(milliseconds: range.lowerBound).hasPrefix("0000-01-01T00:00:00.000Z"))
    }
}

@Suite("Text: sizes")
struct ByteCountTextTests {
    /// What `TextFormat.bytes` wrote with `String(format: "%.1f")`.
    static func reference(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var scaled = Double(count) / 1024
        var unit = 0
        while scaled >= 1024 && unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        return String(format: "%.1f", scaled) + " " + units[unit]
    }

    @Test func sizesAreWrittenAsThePrintfFormatWritesThem() {
        // Ties (1,280 bytes is 1.25 KiB: printf rounds it to even, 1.2), the edges of each unit
        // (1,048,575 bytes is 1024.0 KiB), and counts spread over every unit.
        var samples = [
            0, 1, 1023, 1024, 1075, 1280, 1331, 1_048_575, 1_048_576, 1_310_720, 3_932_160, 1 << 30, (1 << 40) - 1,
            1 << 40, 5 << 40, 1 << 48,
        ]
        var generator = SplitMix(seed: 0x5e1f)
        for _ in 0..<5000 { samples.append(Int(generator.next() % (1 << 48))) }
        // Far past any real size (a damaged row): times ten is no longer exact there.
        for _ in 0..<2000 { samples.append(Int(generator.next() >> 1)) }
        samples += [16_479_645_203_850_854, 22_685_618_684_506_931, Int.max, -1, Int.min]
        for shift in 10..<62 { samples += [(1 << shift) / 4 * 5, (1 << shift) / 4 * 3, (1 << shift) / 1024 * 1023] }
        for count in samples {
            #expect(TextFormat.bytes(count) == Self.reference(count), "\(count) bytes")
        }
        #expect(TextFormat.bytes(1280) == "1.2 KiB")
    }
}
