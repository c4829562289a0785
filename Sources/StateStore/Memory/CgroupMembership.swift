/// The cgroups a process belongs to, parsed from `/proc/self/cgroup`.
///
/// Each line is `hierarchy-ID:controller-list:path`. Hierarchy `0` with an empty controller list
/// is the cgroup v2 (unified) hierarchy; other lines are v1 hierarchies. Malformed lines are
/// skipped, never trusted.
///
/// See [`cgroups(7)`](https://man7.org/linux/man-pages/man7/cgroups.7.html).
public struct CgroupMembership: Sendable, Equatable {
    /// One line of `/proc/self/cgroup`.
    public struct Entry: Sendable, Equatable {
        /// The hierarchy ID (`0` for cgroup v2).
        public var hierarchyID: Int
        /// The v1 controllers bound to the hierarchy (`["memory"]`, `["cpu", "cpuacct"]`); empty for v2.
        public var controllers: [String]
        /// The cgroup's path relative to the hierarchy's root, starting with `/`.
        public var path: String

        /// An entry with the given fields, taken as they are.
        public init(hierarchyID: Int, controllers: [String], path: String) {
            self.hierarchyID = hierarchyID
            self.controllers = controllers
            self.path = path
        }
    }

    /// The well-formed lines, in file order.
    public var entries: [Entry]

    /// A membership of the given entries, in the given order; they are not checked.
    public init(entries: [Entry]) { self.entries = entries }

    /// Parses `/proc/self/cgroup`. Never throws: malformed lines are skipped.
    public static func parse(_ text: String) -> CgroupMembership {
        var entries: [Entry] = []
        for line in ProcFile.lines(text, omittingEmpty: true) {
            // The path may itself contain ':' — split only twice.
            let parts = ProcFile.split(line, maxSplits: 2, omittingEmpty: false) { $0 == ":" }
            guard parts.count == 3, let id = Int(parts[0]), id >= 0, parts[2].unicodeScalars.first == "/" else {
                continue
            }
            let controllers = ProcFile.split(parts[1]) { $0 == "," }.map(String.init)
            entries.append(Entry(hierarchyID: id, controllers: controllers, path: String(parts[2])))
        }
        return CgroupMembership(entries: entries)
    }

    /// The cgroup v2 path (the `0::/path` line), if any.
    public var unifiedPath: String? {
        entries.first { $0.hierarchyID == 0 && $0.controllers.isEmpty }?.path
    }

    /// The path in the v1 hierarchy that carries `controller`, if any.
    public func path(controller: String) -> String? {
        entries.first { $0.controllers.contains(controller) }?.path
    }
}
