import StateStore
import StateStoreTesting
import XCTest

/// The testing kit from XCTest: the same calls as from Swift Testing, with its failures thrown
/// and reported by XCTest as errors. The body runs on the main actor through `MainActor.run`:
/// swift-corelibs-xctest's test discovery cannot call a test method marked `@MainActor` (it
/// aborts, failing to cast the method to a plain one).
final class TestingKitXCTests: XCTestCase {
    func testADraftComesBackAfterTerminationAndTheFlushPointAfterAKill() async throws {
        try await MainActor.run { try Self.draftComesBack() }
    }

    @MainActor
    static func draftComesBack() throws {
        let temporary = try TemporaryStore()
        let first = try temporary.launch { try KitNotesApp(store: $0) }
        first.app.list.restorableState.selected = "flushed"
        first.application.saveVisibleState()
        first.app.list.restorableState.selected = "handed over"
        try first.app.openNote().restorableState.text = "draft"

        let afterKill = try first.relaunch(after: .kill)
        XCTAssertEqual(afterKill.app.navigation.viewControllers.count, 1)
        XCTAssertEqual(afterKill.app.list.restorableState.selected, "flushed")

        try afterKill.app.openNote().restorableState.text = "draft"
        let afterTermination = try afterKill.relaunch(after: .termination)
        XCTAssertEqual(afterTermination.app.note?.restorableState.text, "draft")
        XCTAssertThrowsError(try afterKill.relaunch(after: .kill)) { error in
            XCTAssertEqual(error as? StateStoreTestingError, .alreadyRelaunched(path: temporary.path))
        }
    }
}
