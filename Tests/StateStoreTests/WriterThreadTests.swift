import Foundation
import Synchronization
import Testing

@testable import StateStore

/// The write-behind writer's thread, as the kernel sees it (`/proc/self/task/<id>`).
@MainActor
@Suite("Write-behind: the writer's thread")
struct WriterThreadTests {
    let folder = TemporaryFolder()

    /// The scheduling policy of thread `id` of this process (field 41 of its `stat`), or `nil`
    /// when there is no such thread.
    nonisolated static func policy(ofThread id: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // The fields after the thread's name start at field 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 38 ? Int(fields[38]) : nil
    }

    @Test func theWriterRunsUnderBatchSchedulingAndEndsWithItsStore() throws {
        var store: StateStore? = try StateStore(path: folder.file("state.sqlite"))
        store?.submitWriteBehind {}
        store?.waitForWriteBehind()
        let deadline = ContinuousClock.now + .seconds(30)
        var id: Int32 = 0
        while id == 0, ContinuousClock.now < deadline {
            id = store?.writeBehind.threadID ?? 0
            if id == 0 { usleep(1_000) }
        }
        try #require(id != 0)
        let name = try String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
        #expect(name == "statestore-wb\n")
        #expect(Self.policy(ofThread: id) == 3, "SCHED_BATCH is policy 3")
        // Released, the store's writer ends.
        store = nil
        while Self.policy(ofThread: id) != nil, ContinuousClock.now < deadline { usleep(2_000) }
        #expect(Self.policy(ofThread: id) == nil)
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// Hand-overs at many distances from the end of the writer's last drain: most within 2 µs
    /// (the writer still between its last look at the queue and its sleep, where a lost
    /// wake-up would be), the rest up to 250 µs (asleep). Each must run with nobody waiting
    /// for the queue (a wait runs queued jobs itself): a wake-up lost there leaves one unrun.
    /// Off the main actor, so its busy waits hold up no other test.
    @Test nonisolated func everyHandOverRunsWithNobodyWaitingForTheQueue() throws {
        let store = try StateStore(path: folder.file("state.sqlite"))
        let ran = Counter()
        for index in 0..<3_000 {
            let gap = Duration.nanoseconds(index % 4 == 3 ? (index &* 7_919) % 250_000 : (index &* 37) % 2_000)
            let start = ContinuousClock.now
            while ContinuousClock.now - start < gap {}
            store.submitWriteBehind { ran.value.add(1, ordering: .sequentiallyConsistent) }
            let handedOver = ContinuousClock.now
            let deadline = handedOver + .seconds(10)
            while ran.value.load(ordering: .sequentiallyConsistent) <= index {
                try #require(ContinuousClock.now < deadline, "hand-over \(index) (\(gap) after the last) never ran")
                // Past 100 µs the writer may be waiting for this core: let it have it.
                if ContinuousClock.now - handedOver > .microseconds(100) { usleep(50) }
            }
        }
        #expect(ran.value.load(ordering: .sequentiallyConsistent) == 3_000)
    }
}
