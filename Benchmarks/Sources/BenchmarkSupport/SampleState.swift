import Foundation

/// The controller state every peer saves and restores: a screen's model, as a
/// `Codable` value whose JSON grows with its rows. ``make(approximateBytes:)``
/// builds one whose encoding is close to a requested size.
public struct SampleState: Codable, Sendable, Equatable {
    public struct Row: Codable, Sendable, Equatable {
        public var id: Int
        public var title: String
        public var done: Bool

        public init(id: Int, title: String, done: Bool) {
            self.id = id
            self.title = title
            self.done = done
        }
    }

    /// Changed on every measured save so the bytes differ and every save really writes.
    public var counter: Int
    public var title: String
    public var scrollOffset: Double
    public var selection: [Int]
    public var draft: String
    public var rows: [Row]

    public init(counter: Int, title: String, scrollOffset: Double, selection: [Int], draft: String, rows: [Row]) {
        self.counter = counter
        self.title = title
        self.scrollOffset = scrollOffset
        self.selection = selection
        self.draft = draft
        self.rows = rows
    }

    /// A state whose JSON (sorted keys, as the store writes it) is `approximateBytes` long,
    /// within a few bytes.
    public static func make(approximateBytes target: Int) -> SampleState {
        var state = SampleState(
            counter: 0, title: "Inbox", scrollOffset: 1280.5, selection: [3, 5, 8], draft: "", rows: []
        )
        let coder = BenchCoding()
        func size(_ state: SampleState) -> Int { (try? coder.encode(state).count) ?? 0 }
        let row = { (id: Int) in Row(id: id, title: "Message \(id) subject line", done: id % 3 == 0) }
        // Guess the row count from the average row, refine a few times (row sizes grow
        // with the digits of their id), then step down until it fits.
        let empty = size(state)
        var count = 0
        var perRow = 50.0
        for _ in 0..<6 {
            count = max(0, Int(Double(target - empty) / perRow))
            state.rows = (0..<count).map(row)
            let measured = size(state)
            if count > 0 { perRow = Double(measured - empty) / Double(count) }
            if measured <= target && Double(target - measured) < 2 * perRow { break }
        }
        while size(state) > target, !state.rows.isEmpty { state.rows.removeLast() }
        let missing = target - size(state)
        if missing > 0 { state.draft = String(repeating: "x", count: missing) }
        return state
    }
}

/// The JSON coders every peer uses, configured as the store configures its own:
/// sorted keys (so equal values give equal bytes), no escaped slashes, dates in ms.
/// Each peer keeps one instance, as careful hand-written code would.
public struct BenchCoding {
    public let encoder: JSONEncoder
    public let decoder: JSONDecoder

    public init() {
        encoder = Self.newEncoder()
        decoder = Self.newDecoder()
    }

    public static func newEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }

    public static func newDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }

    public func encode(_ state: SampleState) throws -> Data { try encoder.encode(state) }
    public func decode(_ bytes: Data) throws -> SampleState { try decoder.decode(SampleState.self, from: bytes) }
}
