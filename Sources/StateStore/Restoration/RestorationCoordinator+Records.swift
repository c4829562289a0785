import Foundation

// What the coordinator keeps per path and per controller instance.
extension RestorationCoordinator {
    /// A restoration path as found for one instance: its identifiers leaf first, its scene,
    /// and what the coordinator knows of the path. A reference: reading it from a record
    /// retains one object, not an array, a string and an entry.
    final class CachedPath {
        let leafFirst: [String]
        let scene: String?
        let entry: PathEntry
        init(leafFirst: [String], scene: String?, entry: PathEntry) {
            self.leafFirst = leafFirst
            self.scene = scene
            self.entry = entry
        }
    }

    /// Kept on the controller (its ``ViewController/restorationRecord``), for one coordinator.
    final class Record {
        /// The coordinator's ``serial``: a record of another coordinator is not this one's.
        let owner: UInt64
        /// The newest generation this instance has loaded or written.
        @exclusivity(unchecked) var seenGeneration: Int64?
        /// The coordinator's number of the state this instance holds (loaded or handed over).
        @exclusivity(unchecked) var seenToken: UInt64?
        /// The restoration path last found for this instance, with its identifiers leaf first
        /// and its scene: still its path while the walk to the root meets the same ones.
        @exclusivity(unchecked) var path: CachedPath?
        init(owner: UInt64) { self.owner = owner }
    }

    /// What the coordinator knows of one path: the newest state, and its value while it waits
    /// for the writer. A reference, kept in ``paths`` and on the record of each instance at
    /// the path, so that a save or an appearance at a path already met needs no lookup.
    /// Entries stay for the coordinator's life, one per path met, as what it knows of each
    /// path always did (records point at them).
    final class PathEntry {
        let path: RestorationPath
        /// The newest state of the path; `nil` while not known (the next appearance asks the
        /// database).
        @exclusivity(unchecked) var latest: Latest?
        /// That state's value while the writer has not settled it (see ``setPending(_:in:)``).
        @exclusivity(unchecked) var pending: PendingValue?
        init(path: RestorationPath) { self.path = path }
    }

    /// The newest state of a path the coordinator knows of.
    struct Latest {
        var token: UInt64
        /// Its generation in the database (0: no row); `nil` while it waits for the writer.
        var generation: Int64?
        /// The store's change count when it was known to be current.
        var verifiedAt: UInt64
    }

    /// A state handed to the writer and not yet settled. A reference, so that an entry holds
    /// one pointer per path: an appearance that takes the value looks it up once and copies
    /// no existential, and records itself as a taker in place.
    final class PendingValue {
        /// The handoff's capture (the value, its version and token), shared, not copied.
        let capture: StateHandoff.Capture
        var token: UInt64 { capture.token }
        var value: any Encodable & Sendable { capture.value }
        var version: Int { capture.version }
        /// The instance that saved it, and those that took it since: they have seen its
        /// generation once it is written.
        let saver: Record
        /// The first instance that took it, and any later ones: one screen usually takes a
        /// state once, which then needs no array.
        @exclusivity(unchecked) private(set) var taker: Record?
        @exclusivity(unchecked) private(set) var moreTakers: [Record] = []

        init(capture: StateHandoff.Capture, saver: Record) {
            self.capture = capture
            self.saver = saver
        }

        func addTaker(_ record: Record) {
            if taker == nil { taker = record } else { moreTakers.append(record) }
        }
    }
}

extension ViewController {
    /// The restoration coordinator's record of this instance, in the slot the lifecycle keeps
    /// for its observers: only this layer writes it, so the cast is left unchecked.
    var restorationRecord: RestorationCoordinator.Record? {
        get { observerSlot.map { unsafeDowncast($0, to: RestorationCoordinator.Record.self) } }
        set { observerSlot = newValue }
    }
}
