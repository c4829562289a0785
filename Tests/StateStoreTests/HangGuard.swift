import Foundation
import Testing

extension Trait where Self == TimeLimitTrait {
    /// A test's time limit. Every limit in the suite guards against a hang, not a speed: the
    /// suite's tests share two threads and the main actor, and a test waiting behind the long
    /// ones (a soak, the power cuts, the terminal app) has its time counted.
    ///
    /// Under a sanitizer (`scripts/sanitize` sets `STATESTORE_SANITIZER`) the limit is four
    /// times as long plus 20 minutes. Four times: every process the tests start is
    /// instrumented, and runs and starts several times slower. Plus 20 minutes: Swift Testing
    /// runs synchronous tests on the cooperative pool, as many threads as cores (two here), and
    /// a case's time counts from when it is started, not from when it gets a thread; with the
    /// instrumented power-cut and kill tests holding both threads for minutes, cases started
    /// beside them wait. In one whole ThreadSanitizer run, tests that take milliseconds
    /// reported "passed after 596 seconds", and the twelve snippet cases, started together,
    /// all passed their 8-minute limit before any of them ran.
    static func hangGuard(minutes: Int) -> Self {
        let sanitized = ProcessInfo.processInfo.environment["STATESTORE_SANITIZER"].map { !$0.isEmpty } ?? false
        return .timeLimit(.minutes(sanitized ? minutes * 4 + 20 : minutes))
    }
}
