import ArgumentParser
import Foundation
import MailExample
import StateStore

struct MemoryFlatMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-flat",
        abstract: "Run the mail app through many cycles and print the RSS before and after each phase.",
        discussion: """
            Three phases, each after a warm-up of a tenth of its work: CYCLES message opens and closes \
            (each a push, a state change and a pop, so a save), RELAUNCHES in-process relaunches \
            (terminate, a new Application on the same store, restoreHierarchy), and WARNINGS memory \
            warnings (critical, the caches filled again in between). Prints "phase=NAME before_kib=N \
            after_kib=N" for each (VmRSS from /proc/self/status); then, everything released, \
            "leak_check=clean" (or "leaks", exiting 1) under LeakSanitizer, "leak_check=unavailable" \
            without it; then "ok", and exits 0.
            """)
    @OptionGroup var db: DatabaseArgument
    @Option var cycles = 10_000
    @Option var relaunches = 100
    @Option var warnings = 1_000

    func run() {
        MainActor.assumeIsolated {
            do {
                try MemoryFlat.run(database: db.database, cycles: cycles, relaunches: relaunches, warnings: warnings)
                // Everything the phases made is released by now, but for what the main queue
                // still holds (the writer's last outcomes).
                MemoryFlat.drainMainQueue()
                switch MemoryFlat.leakCheck() {
                case nil: emit("leak_check=unavailable")
                case true?: emit("leak_check=clean")
                case false?:
                    emit("leak_check=leaks")
                    Foundation.exit(1)
                }
                emit("ok")
                Foundation.exit(0)
            } catch {
                fail("\(error)")
            }
        }
    }
}

@MainActor
enum MemoryFlat {
    /// The resident set now, in KiB (`VmRSS`).
    static func residentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// LeakSanitizer's check of the whole heap now (`__lsan_do_recoverable_leak_check`, whose
    /// report goes where the process's sanitizer reports go): `true` when it found nothing,
    /// `nil` when the process does not run under it.
    ///
    /// The check is made here, once the app, the store and the monitor are released, rather
    /// than at exit (the address lane sets `leak_check_at_exit=0`): LeakSanitizer does not see
    /// a Swift class reference kept in an enum with several payload cases, whose tag is in the
    /// reference's spare bits, so a live object reached only that way counts as leaked, and
    /// every process that exits with its app alive reported some.
    static func leakCheck() -> Bool? {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "__lsan_do_recoverable_leak_check")
        else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) () -> Int32).self)() == 0
    }

    /// Runs what waits on the main queue, as an app's event loop does between two events.
    static func drainMainQueue() {
        _ = RunLoop.main.run(mode: .default, before: Date())
    }

    /// Runs `body(count)` once as a warm-up of a tenth of `count`, then measures it over `count`.
    static func phase(_ name: String, _ count: Int, _ body: (Int) throws -> Void) rethrows {
        try body(max(1, count / 10))
        let before = residentKiB()
        try body(count)
        emit("phase=\(name) before_kib=\(before) after_kib=\(residentKiB())")
    }

    static func run(database: String, cycles: Int, relaunches: Int, warnings: Int) throws {
        let store = try StateStore(path: database)
        var app = MailApp(store: store)
        try app.launch()
        try phase("cycles", cycles) { count in
            for index in 0..<count {
                let item = MailMessage.mailbox[index % MailMessage.mailbox.count]
                try app.open(item)
                app.message?.read(to: Double(index % 100) / 100)
                app.backToInbox()
                if index % 500 == 0 { app.application.restorationCoordinator?.flush() }
            }
            app.application.restorationCoordinator?.flush()
        }
        try phase("relaunches", relaunches) { count in
            for _ in 0..<count {
                drainMainQueue()
                app.application.terminate()
                app = MailApp(store: store)
                try app.launch()
                guard app.restored else { throw ValidationError("a relaunch did not restore the hierarchy") }
            }
        }
        try phase("warnings", warnings) { count in
            for index in 0..<count {
                try app.open(MailMessage.mailbox[index % MailMessage.mailbox.count])
                app.backToInbox()
                app.application.didReceiveMemoryWarning(level: .critical)
                drainMainQueue()
            }
            app.application.restorationCoordinator?.flush()
        }
        app.application.terminate()
    }
}
