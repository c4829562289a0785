import Foundation
import Synchronization

@testable import StateStore

/// A note screen: its state, and what it saw when its own callbacks ran.
final class NoteController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable {
        var text = ""
        var edits = 0
    }
    var restorableState = State()
    /// The state as `viewWillAppear`'s override saw it.
    var stateInWillAppear: State?
    /// Set by a test: committed into the state by the `viewWillDisappear` override.
    var uncommittedText: String?

    override func viewWillAppear(_ animated: Bool) {
        stateInWillAppear = restorableState
    }

    override func viewWillDisappear(_ animated: Bool) {
        if let uncommittedText {
            restorableState.text = uncommittedText
            self.uncommittedText = nil
        }
    }
}

/// Version 2 of a screen whose version 1 stored `{"text": "..."}`.
final class CounterController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable {
        var title = ""
        var words = 0
    }
    struct Version1: Codable { var text: String }
    var restorableState = State()
    static var restorableStateVersion: Int { 2 }

    static func migrateRestorableState(from version: Int, data: Data) throws -> State {
        guard version == 1 else { throw RestorationError.noMigration(type: "State", from: version, to: 2) }
        let old = try JSONDecoder().decode(Version1.self, from: data)
        return State(title: old.text, words: old.text.split(separator: " ").count)
    }
}

/// A navigation controller that restores state too, to see hooks run parents first.
final class RestoringNavigationController: NavigationController, StateRestoring {
    struct State: Codable, Sendable { var visits = 0 }
    var restorableState = State()
    var onFinishedRestoring: ((String) -> Void)?
    func applicationFinishedRestoringState() { onFinishedRestoring?(restorationIdentifier ?? "?") }
}

/// A screen of its own class for each `Tag`: many distinct controller classes.
class TaggedController<Tag>: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable { var text = "" }
    var restorableState = State()
}

/// The text in a tagged screen's state, whatever its tag.
@MainActor protocol TextState: AnyObject { var stateText: String { get set } }
extension TaggedController: TextState {
    var stateText: String {
        get { restorableState.text }
        set { restorableState.text = newValue }
    }
}

/// A subclass of a restoring screen: it restores through the conformance it inherits.
final class TaggedSubclass<Tag>: TaggedController<Tag> {}

/// A screen of its own class for each `Tag` that saves nothing.
final class PlainTagged<Tag>: ViewController {}

/// Holds the first encoding off the main thread, once armed, until the test opens it: the
/// write-behind writer stops between taking its batch and committing it.
final class EncodingGate: Sendable {
    let armed = Atomic<Bool>(false)
    let entered = Atomic<Bool>(false)
    let open = Atomic<Bool>(false)

    func pass() {
        guard !Thread.isMainThread,
            armed.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged
        else { return }
        entered.store(true, ordering: .sequentiallyConsistent)
        while !open.load(ordering: .sequentiallyConsistent) { usleep(200) }
    }
}

/// The gate ``GatedNoteController``'s state encodes through.
let noteEncodingGate = EncodingGate()

/// A note whose state's encoding passes through ``noteEncodingGate``.
final class GatedNoteController: ViewController, StateRestoring {
    struct State: Codable, Sendable, Equatable {
        var text = ""
        func encode(to encoder: any Encoder) throws {
            noteEncodingGate.pass()
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(text, forKey: .text)
        }
    }
    var restorableState = State()
    var stateInWillAppear: State?
    override func viewWillAppear(_ animated: Bool) { stateInWillAppear = restorableState }
}

/// Set by a thread once it holds another connection's write lock, and by the test to have it let go.
final class LockHeld: Sendable {
    let flag = Atomic<Bool>(false)
    let release = Atomic<Bool>(false)
}
