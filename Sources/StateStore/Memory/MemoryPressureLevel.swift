/// How hard the system is pressed for memory, from the application's point of view.
///
/// Levels are ordered: `.normal < .warning < .critical`. The raw values are stored in
/// the database's `pressure_events.level` column and must not change.
public enum MemoryPressureLevel: Int, Comparable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Plenty of headroom; nothing to do.
    case normal = 0
    /// Headroom is shrinking: trim what is cheap to recreate.
    case warning = 1
    /// An out-of-memory kill may follow: release every recreatable cache and flush state.
    case critical = 2

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .normal: "normal"
        case .warning: "warning"
        case .critical: "critical"
        }
    }
}
