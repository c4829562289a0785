import Foundation
import Glibc

/// Where the soak's memory pressure comes from.
package enum SoakPressure: String, CaseIterable, Sendable {
    /// A child memory cgroup with the limit and a ballast in waves: real pressure.
    case cgroup
    /// A scripted `/proc/meminfo` under a `root:` tree: no privilege needed.
    case synthetic
    /// No pressure: traffic, relaunches and restores only.
    case none
}

/// What makes the memory waves in `--pressure cgroup`.
package enum SoakBallast: String, CaseIterable, Sendable {
    /// `statestore-worker ballast`: grows and shrinks to the MiB it is told, confirming each size.
    case worker
    /// `stress-ng --vm` processes of 16 MiB each, started and stopped one at a time.
    case stressNG = "stress-ng"

    /// `stress-ng` on the `PATH`, if any.
    package static var stressNGPath: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/stress-ng" }.first { access($0, X_OK) == 0 }
    }
}
