// A screen's thumbnails in a cache that memory warnings empty: the monitor raises the
// warnings from /proc, the memory cgroup and PSI, and the application hands them to every
// live controller, whose caches are released.

// snippet.hide
import Foundation
// snippet.show
import StateStore

final class GalleryController: ViewController {
    /// Thumbnails the screen can draw again: an entry costs its size in bytes.
    let thumbnails = RecreatableCache<String, [UInt8]>(name: "gallery.thumbnails", costLimit: 64 << 20) { $0.count }

    override func viewDidLoad() {
        super.viewDidLoad()
        register(thumbnails)  // a warning trims it to half its limit, a critical warning empties it
    }
}

let monitor = try MemoryPressureMonitor()  // /proc/meminfo, the process's memory cgroup, PSI
let application = Application()
application.observeMemoryPressure(monitor)  // starts it; its warnings reach the main actor
// snippet.hide
let window = Window(size: Size(width: 390, height: 844), application: application)
let gallery = GalleryController()
window.rootViewController = gallery
window.makeKeyAndVisible()
gallery.thumbnails.setValue([UInt8](repeating: 1, count: 1 << 20), forKey: "beach.jpg")
// snippet.show

// What the monitor does under pressure, as "Simulate Memory Warning" does:
application.didReceiveMemoryWarning(level: .critical)
print(gallery.thumbnails.count)  // 0
// snippet.hide
precondition(gallery.thumbnails.count == 0)
