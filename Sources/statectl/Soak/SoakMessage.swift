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
struct SoakMessage: Codable, Sendable {
    var type: String
    var t: Double?
    var available: UInt64?
    var total: UInt64?
    var rss: UInt64?
    var cache: Int?
    var level: Int?
    var previous: Int?
    var trigger: String?
    /// What woke the monitor (`MemoryPressureEvent.Source`), and for a wake-up how many seconds
    /// before the next timed poll it came.
    var source: String?
    var ahead: Double?
    var live: Int?
    var transitions: Int?
    var raised_at: Double?
    var delay: Double?
    var duration: Double?
    var rss_before: UInt64?
    var rss_after: UInt64?
    var released: Int?
    var cache_left: Int?
    var controllers: Int?
    var verified: Int?
    var lost: Int?
    var corrupt: Int?
    var baseline: Int?
    var leaked: Int?
    var restored: Bool?
    var path: String?
    var detail: String?
    var final: SoakFinal?
    var verification: SoakVerification?

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
struct SoakFinal: Codable, Sendable {
    /// Traffic operations by kind: push, pop, interactive pop (finished, cancelled),
    /// present, dismiss, tab switch, rotation, relaunch.
    var operations: [String: Int] = [:]
    /// How the harness's monitor was woken (`MemoryPressureMonitor.watchDescription`) before it stopped.
    var watch: String?
    /// Appearance transitions the controllers went through (viewDidAppear calls).
    var transitions = 0
    var controllersInstantiated = 0
    var distinctPaths = 0
    var stateWrites = 0
    var restores = 0
    var violations = 0
    var restoreMismatches = 0
    var relaunches = 0
    var monitorEvents = 0
    var warningsDelivered = 0
    var redelivered = 0
    /// Events above normal that never reached the application.
    var undelivered = 0
    /// Controllers in the final hierarchy, the baseline the verifying process compares with.
    var finalBaseline = 0
    var expectationsFile = ""
    var errors: [String] = []
}

/// The verifying process's findings: a fresh process on the same database, after the harness exited.
struct SoakVerification: Codable, Sendable {
    var verified = 0
    var lost = 0
    var corrupt = 0
    var restoredHierarchy = false
    var live = 0
    var baseline = 0
    var restoreMismatches = 0
    var integrity: [String] = []
    var checksumMismatches = 0
    var quarantined = 0
    var stateCount = 0
    var pressureEvents = 0
    var violations = 0
    var errors: [String] = []
}
