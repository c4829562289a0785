// A short session of real work on a real file, its metrics in a Prometheus registry, and the
// text a scrape of /metrics would return.
import Foundation
import Prometheus
import StateStore

final class NoteController: ViewController, StateRestoring {
    struct Note: Codable, Sendable { var text = "" }
    var restorableState = Note()
}

let registry = PrometheusCollectorRegistry()
var factory = PrometheusMetricsFactory(registry: registry)
factory.defaultDurationHistogramBuckets = [.microseconds(100), .milliseconds(1), .milliseconds(10)]
factory.defaultValueHistogramBuckets = [1, 4, 16]

let folder = FileManager.default.temporaryDirectory.appending(path: "statestore-prometheus-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }

try MainActor.assumeIsolated {
    let store = try StateStore(path: folder + "/state.sqlite", options: .init(metricsFactory: factory))
    let storyboard = Storyboard()
    storyboard.register("note") { NoteController() }
    let monitor = try MemoryPressureMonitor(metricsFactory: factory)
    let application = Application(store: store, storyboard: storyboard)
    let window = Window(size: Size(width: 390, height: 844), orientation: .portrait, application: application)
    let navigation = NavigationController(
        rootViewController: try storyboard.instantiateViewController(withIdentifier: "note"))
    navigation.restorationIdentifier = "notes"
    window.rootViewController = navigation
    window.makeKeyAndVisible()
    for round in 1...3 {
        (navigation.topViewController as? NoteController)?.restorableState.text = "draft \(round)"
        navigation.pushViewController(try storyboard.instantiateViewController(withIdentifier: "note"), animated: false)
        _ = navigation.popViewController(animated: false)
    }
    try monitor.refresh()
    application.didReceiveMemoryWarning(level: .warning)
    application.terminate()
}
print(registry.emitToString(), terminator: "")
