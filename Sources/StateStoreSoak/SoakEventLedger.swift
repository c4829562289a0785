import Foundation
import StateStore

/// Monitor events above `.normal` not yet matched by a delivered ``MemoryWarningReport``,
/// keyed by their time in microseconds. Written on the monitor's thread, read on the main actor.
///
/// The monitor calls its handlers in no fixed order, so the application's handler may deliver
/// an event before the harness's handler has put it in the ledger; such early deliveries are
/// remembered, and the event is not entered as pending when it comes.
final class SoakEventLedger: Sendable {
    struct Book {
        var pending: [Int64: MemoryPressureEvent] = [:]
        var deliveredEarly: Set<Int64> = []
    }
    let book = Lock(Book())
    let count = Lock(0)

    func raised(_ event: MemoryPressureEvent) {
        let key = Self.key(event.time)
        book.withLock { book in
            if book.deliveredEarly.remove(key) == nil { book.pending[key] = event }
        }
    }

    func delivered(raisedAt date: Date) {
        let key = Self.key(date)
        book.withLock { book in
            if book.pending.removeValue(forKey: key) == nil { book.deliveredEarly.insert(key) }
        }
    }

    var isEmpty: Bool { book.withLock { $0.pending.isEmpty } }

    static func key(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
}
