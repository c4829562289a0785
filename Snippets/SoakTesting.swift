// What the soak checks after every memory warning, checked by an app of its own: an
// observer sees each warning the application handled, with what it released.

// snippet.hide
import Foundation
// snippet.show
import StateStore

final class WarningLog: LifecycleObserver {
    func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {
        print(
            "\(report.level): \(report.controllerCount) controllers, \(report.cacheCostReleased) bytes of cache",
            "released, RSS \(report.rssBefore) → \(report.rssAfter) bytes in \(report.duration)")
        if report.level == .critical {
            // A critical warning empties every cache a controller holds.
            let left = application.liveControllers.flatMap(\.caches).reduce(0) { $0 + $1.totalCost }
            precondition(left == 0, "a critical warning left \(left) bytes of cache")
        }
    }
}

let application = Application()
application.addObserver(WarningLog())
// snippet.hide
let window = Window(size: Size(width: 390, height: 844), application: application)
let screen = ViewController()
let cache = RecreatableCache<Int, [UInt8]>(name: "screen.rendered") { $0.count }
screen.register(cache)
cache.setValue([UInt8](repeating: 1, count: 4 << 20), forKey: 1)
window.rootViewController = screen
window.makeKeyAndVisible()
// snippet.show
application.didReceiveMemoryWarning(level: .critical)
