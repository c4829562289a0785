import Foundation

/// One JSON line from the harness process to the supervisor, over the harness's stdout.
///
/// The harness prints nothing else on stdout. Each line is an object with a `"type"` and the
/// members of that type; times (`t`, `raised_at`) are wall-clock seconds since the Unix epoch,
/// shared by both processes.
///
/// | type       | sent                                  | members |
/// |------------|---------------------------------------|---------|
/// | `sample`   | every 250 ms                          | `t`, `available`, `total`, `rss`, `cache`, `level`, `live`, `transitions` |
/// | `event`    | each monitor event (monitor thread)   | `t`, `level`, `previous`, `trigger`, `source`, `ahead`, `available` |
/// | `warning`  | each `MemoryWarningReport` delivered  | `t`, `level`, `raised_at`, `delay`, `duration`, `rss_before`, `rss_after`, `released`, `cache_left`, `controllers` |
/// | `relaunch` | each simulated relaunch               | `t`, `verified`, `lost`, `corrupt`, `baseline`, `live`, `leaked`, `restored`, `duration` |
/// | `restore`  | a controller's restored state differed | `path`, `detail` |
/// | `violation`| a lifecycle violation                 | `detail` |
/// | `final`    | once, at the end                      | counts (see ``SoakFinal``) |
/// | `verify`   | the verifying process's only line     | see ``SoakVerification`` |
package struct SoakMessage: Codable, Sendable {
    package var type: String
    package var t: Double?
    package var available: UInt64?
    package var total: UInt64?
    package var rss: UInt64?
    /// RSS right after `malloc_trim(0)`: twice a second, at normal level (the RSS trend's samples).
    package var rss_trimmed: UInt64?
    package var cache: Int?
    package var level: Int?
    package var previous: Int?
    package var trigger: String?
    /// What woke the monitor (`MemoryPressureEvent.Source`), and for a wake-up how many seconds
    /// before the next timed poll it came.
    package var source: String?
    package var ahead: Double?
    package var live: Int?
    package var transitions: Int?
    package var raised_at: Double?
    package var delay: Double?
    package var duration: Double?
    package var rss_before: UInt64?
    package var rss_after: UInt64?
    package var released: Int?
    package var cache_left: Int?
    package var controllers: Int?
    package var verified: Int?
    package var lost: Int?
    package var corrupt: Int?
    package var baseline: Int?
    package var leaked: Int?
    package var restored: Bool?
    package var path: String?
    package var detail: String?
    package var final: SoakFinal?
    package var verification: SoakVerification?

    init(type: String) { self.type = type }

    /// The line, compact JSON.
    var line: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{\"type\":\"invalid\"}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ line: Substring) -> SoakMessage? {
        try? JSONDecoder().decode(SoakMessage.self, from: Data(line.utf8))
    }
}

/// What the harness did, counted over the whole run; its last line.
package struct SoakFinal: Codable, Sendable {
    /// Traffic operations by kind: push, pop, interactive pop (finished, cancelled),
    /// present, dismiss, tab switch, rotation, relaunch.
    package var operations: [String: Int] = [:]
    /// How the harness's monitor was woken (`MemoryPressureMonitor.watchDescription`) before it stopped.
    package var watch: String?
    /// Appearance transitions the controllers went through (viewDidAppear calls).
    package var transitions = 0
    package var controllersInstantiated = 0
    package var distinctPaths = 0
    package var stateWrites = 0
    package var restores = 0
    package var violations = 0
    package var restoreMismatches = 0
    package var relaunches = 0
    package var monitorEvents = 0
    package var warningsDelivered = 0
    package var redelivered = 0
    /// Events above normal that never reached the application.
    package var undelivered = 0
    /// Controllers in the final hierarchy, the baseline the verifying process compares with.
    package var finalBaseline = 0
    package var expectationsFile = ""
    package var errors: [String] = []
}

/// The verifying process's findings: a fresh process on the same database, after the harness exited.
package struct SoakVerification: Codable, Sendable {
    package var verified = 0
    package var lost = 0
    package var corrupt = 0
    package var restoredHierarchy = false
    package var live = 0
    package var baseline = 0
    package var restoreMismatches = 0
    package var integrity: [String] = []
    package var checksumMismatches = 0
    package var quarantined = 0
    package var stateCount = 0
    package var pressureEvents = 0
    package var violations = 0
    package var errors: [String] = []
}
