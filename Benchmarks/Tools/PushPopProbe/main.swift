// The `push pop` layer benchmarks outside package-benchmark's harness, for callgrind and perf:
// the same application (BenchmarkSupport's NavigationApp: a navigation controller whose root
// and pushed page carry a state), one push + pop per main-actor turn: the median, the 90th
// percentile and the mean printed, and for warm cycles also the median with the end of the turn
// and the median of the main thread's own CPU time (below the wall time when it waited).
//
//     swift build -c release --product PushPopProbe   # in Benchmarks/
//     .build/release/PushPopProbe warm store 20000     # or lifecycle, or wake; cycles on one warm app
//     .build/release/PushPopProbe first store 300      # each cycle on a new app and store (opened off the main thread)
//     .build/release/PushPopProbe first opened 300     # the same, the app without the store it opened
//     .build/release/PushPopProbe paced store 500      # warm, 10 ms apart, as a person navigates
//     .build/release/PushPopProbe busy store 20000     # warm, back to back without waiting for the writer
//     valgrind --tool=callgrind --toggle-collect='*measuredCycle*' .build/release/PushPopProbe warm store 2000
//     .build/release/PushPopProbe warm store 2000 20   # a tab bar of 20 tabs, the cycles in the first
//
// `wake` is lifecycle plus one empty job handed to an idle dispatch queue right after the push,
// as the store hands the push to its sleeping writer: what that wake-up costs on this machine.
//
// With --toggle-collect, callgrind counts only the main thread's instructions inside the
// measured cycles (not the writer's, nor the setup), a number that noise does not move.
import BenchmarkSupport
import Foundation
import StateStore

/// The measured part: one push + pop (callgrind's --toggle-collect names it).
@MainActor @inline(never)
func measuredCycle(_ app: NavigationApp, _ index: Int, _ page: PageController) {
    app.cycle(index, page: page)
}

func scratchDatabase(_ name: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("pushpop-probe-\(name)-\(getpid()).sqlite")
        .path
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5, ["warm", "first", "paced", "busy"].contains(arguments[1]),
    ["store", "lifecycle", "wake", "opened"].contains(arguments[2]), arguments[1] != "first" || arguments[2] != "wake",
    arguments[1] == "first" || arguments[2] != "opened",
    let count = Int(arguments[3]), let tabs = arguments.count == 5 ? Int(arguments[4]) : 1, tabs >= 1
else {
    FileHandle.standardError.write(
        Data(
            "usage: PushPopProbe warm|busy|paced store|lifecycle|wake COUNT [TABS], or first store|lifecycle|opened COUNT [TABS]\n"
                .utf8))
    exit(2)
}
let withStore = arguments[2] == "store"
let clock = ContinuousClock()
var total = Duration.zero
/// Each cycle's time, for the median and the 90th percentile.
var samples: [Duration] = []
/// Each cycle's time with the end of its main-actor turn (the coordinator's scheduled
/// hand-over and wake): all the main thread spends on the push + pop.
var withEndOfTurn: [Duration] = []
/// Minor page faults of the process so far.
func minorFaults() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)  // the process: the writer faults too, but rarely inside a cycle
    return usage.ru_minflt
}
var faults = 0
/// The main thread's own CPU time per cycle (wall time less waits for a core or a lock).
var threadSamples: [Int] = []
func threadCPU() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
}
/// CPU time of the whole process (every thread, user and system), in ns.
func processCPU() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = usage.ru_utime.tv_sec * 1_000_000 + Int(usage.ru_utime.tv_usec)
    let system = usage.ru_stime.tv_sec * 1_000_000 + Int(usage.ru_stime.tv_usec)
    return (user + system) * 1000
}
var cpuStart = 0
/// The process's CPU time per cycle, the sleeps' included (warm and paced).
var cpuPerCycle: Int?

/// Ends the main actor's turn: runs what it scheduled (the coordinator's end-of-turn hand-over).
func endTurn() {
    _ = RunLoop.main.run(mode: .default, before: Date())
}

// Synchronous on the main thread (no async main: valgrind cannot follow its exit through
// dispatch_main); turns are ended by running the main run loop once.
MainActor.assumeIsolated {
    if arguments[1] != "first" {
        let path = scratchDatabase("warm")
        let app = NavigationApp(store: withStore ? try! StateStore(path: path) : nil, stateSize: 1000, tabs: tabs)
        let wake = IdleQueueWake()
        if arguments[2] == "wake" { app.afterPush = { wake.wake() } }
        app.cycle(-1, page: app.makePage())
        app.application.restorationCoordinator?.flush()
        endTurn()
        cpuStart = processCPU()
        for index in 0..<count {
            if arguments[1] == "paced" {
                // 10 ms between cycles, as a person navigates: the writer has written and
                // sleeps, and caches are as cold as that leaves them (both peers sleep alike).
                usleep(10_000)
            }
            let page = app.makePage()
            let faultsBefore = minorFaults()
            let cpuBefore = threadCPU()
            let start = clock.now
            measuredCycle(app, index, page)
            let elapsed = clock.now - start
            threadSamples.append(threadCPU() - cpuBefore)
            total += elapsed
            samples.append(elapsed)
            faults += minorFaults() - faultsBefore
            let endStart = clock.now
            endTurn()
            withEndOfTurn.append(elapsed + (clock.now - endStart))
            // `busy`: back to back, as the harness samples them (the writer usually still
            // writes an earlier batch). Else each cycle starts with the writer idle (waited
            // for, not helped), so that whether the pop's batch is folded into the push's does
            // not vary from run to run.
            if arguments[1] == "busy" { continue }
            while app.application.store?.hasWriteBehindWork == true { usleep(20) }
            wake.waitUntilIdle()
            endTurn()  // the writer's outcomes are taken in at a turn of their own, as between samples
        }
        cpuPerCycle = (processCPU() - cpuStart) / count
        if let statistics = app.application.restorationCoordinator?.statistics {
            print(
                "transactions \(statistics.transactions), archives \(statistics.archiveWrites), state writes \(statistics.stateWrites)"
            )
        }
        app.application.terminate()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    } else {
        for index in 0..<count {
            let path = scratchDatabase("first\(index)")
            // Opened on a pool thread, as the harness opens it off the main actor. `opened`
            // keeps it open, unused, until the cycle has run.
            nonisolated(unsafe) var opened: StateStore?
            if withStore || arguments[2] == "opened" {
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    opened = try! StateStore(path: path)
                    done.signal()
                }
                done.wait()
            }
            let store = withStore ? opened : nil
            let app = NavigationApp(store: store, stateSize: 1000, tabs: tabs)
            let page = app.makePage()
            page.restorableState.text = String(repeating: "p", count: 1000)
            let faultsBefore = minorFaults()
            let start = clock.now
            measuredCycle(app, 1, page)
            let elapsed = clock.now - start
            total += elapsed
            samples.append(elapsed)
            faults += minorFaults() - faultsBefore
            app.application.terminate()
            withExtendedLifetime(opened) {}
            endTurn()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }
}
samples.sort()
threadSamples.sort()
withEndOfTurn.sort()
/// Microseconds, one decimal.
func micros(_ duration: Duration) -> String {
    let value = Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
    return String(format: "%.1f µs", value)
}
let endOfTurn =
    (withEndOfTurn.isEmpty ? "" : ", with the end of the turn \(micros(withEndOfTurn[withEndOfTurn.count / 2]))")
    + (threadSamples.isEmpty ? "" : ", main-thread CPU \(micros(.nanoseconds(threadSamples[threadSamples.count / 2])))")
print(
    "\(arguments[1]) \(arguments[2]): \(count) cycles, median \(micros(samples[samples.count / 2]))\(endOfTurn), p90 \(micros(samples[samples.count * 9 / 10])), mean \(micros(total / count)), minor page faults per cycle \(Double(faults) / Double(count))\(cpuPerCycle.map { ", process CPU per cycle \(micros(.nanoseconds($0)))" } ?? "")"
)
