import Foundation
import StateStore

/// Everything the supervisor collected from one soak, in arrival order.
struct SoakRun {
    var samples: [SoakMessage] = []
    var events: [SoakMessage] = []
    var warnings: [SoakMessage] = []
    var relaunches: [SoakMessage] = []
    var restoreMismatches: [SoakMessage] = []
    var violations: [SoakMessage] = []
    var errors: [String] = []
    var final: SoakFinal?
    var verification: SoakVerification?
    /// The supervisor's own readings of available memory, as a percentage of the limit (from the
    /// cgroup in cgroup mode, the scripted value in synthetic mode): the ground truth the
    /// monitor's events are checked against.
    var observations: [(t: Double, percent: Double)] = []
    /// Ballast phases as (start time, phase name), for the report.
    var phases: [(t: Double, name: String)] = []

    var start: Double = 0
    var end: Double = 0
    var harnessExit: Int32?
    var harnessSignal: Int32?
    var oomKills: UInt64 = 0
    var ballastRestarts = 0
    var ballastPeakMiB = 0
    var interrupted = false
    /// The cgroup the run created (removed by the time the summary is printed).
    var cgroupPath: String?
    var cgroupVersion: CgroupMemory.Version?

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
