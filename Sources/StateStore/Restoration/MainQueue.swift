import Dispatch

/// Whether the calling code runs on the main queue, the main actor's executor: not always the
/// main thread (a test runner may drain the main queue on another thread).
enum MainQueue {
    private static let key = DispatchSpecificKey<Bool>()

    /// Marks the main queue; once is enough, again is harmless.
    @MainActor static func mark() { DispatchQueue.main.setSpecific(key: key, value: true) }

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}
