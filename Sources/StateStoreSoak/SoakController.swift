import Foundation
import StateStore

/// The state every soak controller saves and restores: a counter bumped on each
/// disappearance and a payload regenerated with it, so every save writes new bytes.
struct SoakState: Codable, Sendable, Equatable {
    var counter = 0
    var payload = ""

    /// The harness's checksum of the state: FNV-1a over `counter:payload`.
    var checksum: UInt64 { SoakValues.fnv1a("\(counter):\(payload)".utf8) }
}

/// A controller of the soak's traffic: ``StateRestoring`` with a ``SoakState``, and two
/// registered ``RecreatableCache``s it fills whenever it appears ("rendered" content of a
/// few hundred KiB, keyed by orientation, and a thumbnail), so hidden controllers hold cache
/// memory that only a memory warning gives back.
///
/// Cache cost is the byte count of the cached buffer, so "cache bytes" in the summary are
/// bytes of heap, not a unit count.
final class SoakController: ViewController, StateRestoring {
    /// The harness that records what this controller saved and checks what it restored.
    unowned let harness: SoakHarness
    /// The pool index (its storyboard identifier is `c<index>`).
    let index: Int
    var restorableState = SoakState()

    let rendered: RecreatableCache<String, [UInt8]>
    let thumbnails: RecreatableCache<Int, [UInt8]>
    private var hasAppeared = false

    init(harness: SoakHarness, index: Int) {
        self.harness = harness
        self.index = index
        rendered = RecreatableCache(name: "c\(index).rendered", costLimit: 1 << 20, registry: nil) { $0.count }
        thumbnails = RecreatableCache(name: "c\(index).thumbnails", costLimit: 384 << 10, registry: nil) { $0.count }
        super.init()
        register(rendered)
        register(thumbnails)
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        // The restoration observer has already run: on a fresh instance, this is the restored state.
        if !hasAppeared {
            hasAppeared = true
            harness.checkRestored(self)
        }
    }

    override func viewDidAppear(_ animated: Bool) {
        super.viewDidAppear(animated)
        harness.transitions += 1
        fillCaches()
    }

    override func viewWillDisappear(_ animated: Bool) {
        super.viewWillDisappear(animated)
        // Commit an "edit": the restoration observer saves these bytes right after this returns.
        restorableState.counter += 1
        restorableState.payload = harness.payload(for: index, counter: restorableState.counter)
        harness.recordSave(of: self)
    }

    /// Makes (or reuses) this appearance's cached content.
    func fillCaches() {
        let orientation = window?.orientation.rawValue ?? "none"
        let size = harness.renderedSize(for: index)
        _ = rendered.value(forKey: orientation) { Self.buffer(size, seed: index) }
        _ = thumbnails.value(forKey: restorableState.counter % 4) { Self.buffer(96 << 10, seed: index &+ 7) }
    }

    /// A buffer of `size` bytes, every byte written, so it is resident, not just reserved.
    static func buffer(_ size: Int, seed: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(truncatingIfNeeded: seed | 1), count: size)
    }

    /// Bytes held by this controller's caches.
    var cacheBytes: Int { rendered.totalCost + thumbnails.totalCost }
}
