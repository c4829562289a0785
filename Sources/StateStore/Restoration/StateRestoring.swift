import Foundation

/// A controller whose model state is saved on `viewWillDisappear` and restored in
/// `viewWillAppear`, so a relaunched app comes back exactly where the user left it.
///
/// ```swift
/// final class ComposeViewController: ViewController, StateRestoring {
///     struct Draft: Codable, Sendable {
///         var to = ""
///         var body = ""
///     }
///     var restorableState = Draft()
///     let editor = TextView()
///
///     override func viewWillDisappear(_ animated: Bool) {
///         super.viewWillDisappear(animated)
///         restorableState.body = editor.text  // commit edits; the save follows
///     }
///     override func viewWillAppear(_ animated: Bool) {
///         super.viewWillAppear(animated)
///         editor.text = restorableState.body  // already restored
///     }
/// }
/// ```
///
/// The state is stored under the controller's restoration path: the `restorationIdentifier`s
/// from the root controller down (through parents and presenting controllers), as in UIKit.
/// A controller with a `nil` identifier anywhere in that chain is neither saved nor restored.
///
/// Versions: bump ``restorableStateVersion`` when the state's shape changes and implement
/// ``migrateRestorableState(from:data:)``. A row from an older version is migrated on read;
/// a row from a newer version, one that cannot be decoded, and one whose migration throws are
/// moved to the quarantine table with the reason, and the controller keeps its default state.
@MainActor
public protocol StateRestoring: ViewController {
    /// The type of ``restorableState``: saved as JSON with sorted keys under the controller's
    /// restoration path, at version ``restorableStateVersion``.
    associatedtype RestorableState: Codable & Sendable

    /// The model state to save and restore. Set before `viewWillAppear` runs when the
    /// store holds something newer than this instance has seen.
    var restorableState: RestorableState { get set }

    /// The version of ``RestorableState``'s encoding. Default 1.
    static var restorableStateVersion: Int { get }

    /// Turns the JSON `data` saved by an older `version` into today's state.
    /// The default throws, so older rows are quarantined.
    static func migrateRestorableState(from version: Int, data: Data) throws -> RestorableState

    /// Called once a relaunch has rebuilt the hierarchy, parents before children.
    func applicationFinishedRestoringState()
}

extension StateRestoring {
    public static var restorableStateVersion: Int { 1 }

    public static func migrateRestorableState(from version: Int, data: Data) throws -> RestorableState {
        throw RestorationError.noMigration(
            type: String(reflecting: RestorableState.self), from: version, to: restorableStateVersion)
    }

    public func applicationFinishedRestoringState() {}
}
