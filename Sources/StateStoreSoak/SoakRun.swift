import Foundation
import StateStore

/// Everything the supervisor collected from one soak, in arrival order.
package struct SoakRun {
    package var samples: [SoakMessage] = []
    package var events: [SoakMessage] = []
    package var warnings: [SoakMessage] = []
    package var relaunches: [SoakMessage] = []
    package var restoreMismatches: [SoakMessage] = []
    package var violations: [SoakMessage] = []
    package var errors: [String] = []
    package var final: SoakFinal?
    package var verification: SoakVerification?
    /// The supervisor's own readings of available memory, as a percentage of the limit (from the
    /// cgroup in cgroup mode, the scripted value in synthetic mode): the ground truth the
    /// monitor's events are checked against.
    package var observations: [(t: Double, percent: Double)] = []
    /// Ballast phases as (start time, phase name), for the report.
    package var phases: [(t: Double, name: String)] = []

    package var start: Double = 0
    package var end: Double = 0
    package var harnessExit: Int32?
    package var harnessSignal: Int32?
    package var oomKills: UInt64 = 0
    package var ballastRestarts = 0
    package var ballastPeakMiB = 0
    package var interrupted = false
    /// The cgroup the run created (removed by the time the summary is printed).
    package var cgroupPath: String?
    package var cgroupVersion: CgroupMemory.Version?

    mutating func take(_ message: SoakMessage) {
        switch message.type {
        case "sample": samples.append(message)
        case "event": events.append(message)
        case "warning": warnings.append(message)
        case "relaunch": relaunches.append(message)
        case "restore": restoreMismatches.append(message)
        case "violation": if violations.count < 1000 { violations.append(message) }
        case "error": if errors.count < 100, let detail = message.detail { errors.append(detail) }
        case "final": final = message.final
        case "verify": verification = message.verification
        default: break
        }
    }
}
