// An application launched in a fresh process by the `launch to appear` benchmarks
// (Benchmarks/LaunchBenchmarks): it opens its store with the default options, rebuilds the
// archived hierarchy (a container holding ten visible pages, each with a 1 KB state) and, at the
// first page's viewDidAppear, prints "appeared" on stdout; then it terminates cleanly.
//
//     LaunchProbe setup DB    # archive the hierarchy and the ten states in DB, and quit
//     LaunchProbe launch DB   # relaunch: restore, print "appeared <bytes>" at the first appearance
//     LaunchProbe launch-quick DB   # the same with openCheck .quick, the default before
//     LaunchProbe floor DB    # print "appeared 1000" at once: the cost of starting the process
import Foundation
import StateStore

final class PageController: ViewController, StateRestoring {
    struct State: Codable, Sendable {
        var counter = 0
        var text = ""
    }
    var restorableState = State()

    override func viewDidAppear(_ animated: Bool) {
        super.viewDidAppear(animated)
        Probe.appeared(self)
    }
}

@MainActor
enum Probe {
    static var reported = false
    static var launching = false

    static func appeared(_ page: PageController) {
        guard launching, !reported else { return }
        reported = true
        // The state was restored before the page appeared: print what it holds.
        FileHandle.standardOutput.write(Data("appeared \(page.restorableState.text.utf8.count)\n".utf8))
    }

    static func storyboard() -> Storyboard {
        let storyboard = Storyboard()
        storyboard.register("page") { PageController() }
        return storyboard
    }

    static func run(_ mode: String, database: String) throws -> Int32 {
        if mode == "floor" {
            FileHandle.standardOutput.write(Data("appeared 1000\n".utf8))
            return 0
        }
        let store = try StateStore(path: database, options: .init(openCheck: mode == "launch-quick" ? .quick : .header))
        let application = Application(store: store, storyboard: storyboard())
        let window = Window(size: Size(width: 400, height: 800), application: application)
        switch mode {
        case "setup":
            let root = ViewController()
            root.restorationIdentifier = "root"
            window.rootViewController = root
            window.makeKeyAndVisible()
            for index in 0..<10 {
                let page =
                    try application.storyboard.instantiateViewController(withIdentifier: "page") as! PageController
                page.restorationIdentifier = "page\(index)"
                page.restorableState = .init(counter: index, text: String(repeating: "s", count: 1000))
                root.addChild(page)
            }
            application.terminate()
            return 0
        case "launch", "launch-quick":
            launching = true
            guard try application.restoreHierarchy(in: window) else {
                FileHandle.standardError.write(Data("no hierarchy was restored from \(database)\n".utf8))
                return 1
            }
            application.terminate()
            return reported ? 0 : 1
        default:
            FileHandle.standardError.write(Data("usage: LaunchProbe setup|launch DB\n".utf8))
            return 2
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: LaunchProbe setup|launch DB\n".utf8))
    exit(2)
}
let status = MainActor.assumeIsolated { () -> Int32 in
    do {
        return try Probe.run(arguments[1], database: arguments[2])
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        return 1
    }
}
exit(status)
