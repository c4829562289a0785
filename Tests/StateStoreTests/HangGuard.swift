import Foundation
import Testing

extension Trait where Self == TimeLimitTrait {
    /// A test's time limit. Every limit in the suite guards against a hang, not a speed: the
    /// suite's tests share two threads and the main actor, and a test waiting behind the long
    /// ones (a soak, the power cuts, the terminal app) has its time counted. Under a sanitizer
    /// (`scripts/sanitize` sets `STATESTORE_SANITIZER`) the limit is four times as long: every
    /// process the tests start is instrumented, and runs and starts several times slower.
    static func hangGuard(minutes: Int) -> Self {
        let sanitized = ProcessInfo.processInfo.environment["STATESTORE_SANITIZER"].map { !$0.isEmpty } ?? false
        return .timeLimit(.minutes(minutes * (sanitized ? 4 : 1)))
    }
}
