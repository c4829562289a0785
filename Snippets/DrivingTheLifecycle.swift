// A terminal app's event loop: termination signals, the window's resizes and the keyboard
// arrive as dispatch sources on the main queue, and dispatchMain() runs them.

// snippet.hide
import Dispatch
import Foundation
import StateStore

/// The app, as far as its event loop sees it.
@MainActor final class TerminalApp {
    let application = Application()
    let window: Window
    init() {
        window = Window(size: Size(width: 80, height: 24), application: application)
        window.rootViewController = ViewController()
        window.makeKeyAndVisible()
    }
    func terminalResized() { window.resize(to: Size(width: 100, height: 30)) }
}
let app = TerminalApp()
// snippet.show
app.application.installTerminationHandlers(signals: [SIGTERM, SIGINT, SIGHUP])

signal(SIGWINCH, SIG_IGN)
let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .main)
resize.setEventHandler { MainActor.assumeIsolated { app.terminalResized() } }
resize.resume()

let input = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
input.setEventHandler {
    MainActor.assumeIsolated {
        // read(0, ...), decode the keys, hand them to the screen in front, draw
    }
}
input.resume()
// snippet.hide
// Run as a program of its own, it ends at once: the first turn of the main queue exits.
DispatchQueue.main.async {
    app.terminalResized()
    print("window \(app.window.size.width)×\(app.window.size.height)")
    exit(0)
}
// snippet.show
dispatchMain()
