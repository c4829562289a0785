/// The mounts visible to a process, parsed from `/proc/self/mountinfo`.
///
/// Only what finding cgroup hierarchies needs is kept. Lines that do not have the documented
/// shape are skipped rather than trusted: a garbled line must not send the monitor to the wrong
/// directory, and must never crash it.
///
/// See [`proc_pid_mountinfo(5)`](https://man7.org/linux/man-pages/man5/proc_pid_mountinfo.5.html).
public struct MountInfo: Sendable, Equatable {
    /// One mount.
    public struct Entry: Sendable, Equatable {
        /// The directory inside the mounted filesystem that is the mount's root (field 4).
        public var root: String
        /// Where it is mounted, with `\040`-style escapes decoded (field 5).
        public var mountPoint: String
        /// The filesystem type, such as `cgroup2` or `cgroup` (after the `-` separator).
        public var filesystemType: String
        /// The per-superblock options, such as `rw,memory` for a v1 memory hierarchy.
        public var superOptions: [String]

        /// An entry with the given fields, taken as they are (`mountPoint` already unescaped).
        public init(root: String, mountPoint: String, filesystemType: String, superOptions: [String]) {
            self.root = root
            self.mountPoint = mountPoint
            self.filesystemType = filesystemType
            self.superOptions = superOptions
        }
    }

    /// The well-formed mounts, in file order.
    public var entries: [Entry]

    /// The given mounts, in the given order; they are not checked.
    public init(entries: [Entry]) { self.entries = entries }

    /// Parses `/proc/self/mountinfo`. Never throws: malformed lines are skipped.
    public static func parse(_ text: String) -> MountInfo {
        var entries: [Entry] = []
        for line in ProcFile.lines(text, omittingEmpty: true) {
            let fields = ProcFile.split(line) { $0 == " " }
            // id parent major:minor root mountpoint options [optional…] - fstype source superoptions
            guard fields.count >= 9, let separator = fields[6...].firstIndex(of: "-"),
                separator + 1 < fields.count
            else { continue }
            guard fields[2].unicodeScalars.contains(":") else { continue }
            let fsType = String(fields[separator + 1])
            let superOptions =
                separator + 3 < fields.count ? ProcFile.split(fields[separator + 3]) { $0 == "," }.map(String.init) : []
            entries.append(
                Entry(
                    root: unescape(fields[3]),
                    mountPoint: unescape(fields[4]),
                    filesystemType: fsType,
                    superOptions: superOptions
                ))
        }
        return MountInfo(entries: entries)
    }

    /// The last cgroup v2 mount (later mounts shadow earlier ones).
    public var cgroup2: Entry? {
        entries.last { $0.filesystemType == "cgroup2" }
    }

    /// The last cgroup v1 mount whose hierarchy carries `controller`.
    public func cgroup1(controller: String) -> Entry? {
        entries.last { $0.filesystemType == "cgroup" && $0.superOptions.contains(controller) }
    }

    /// Decodes the octal escapes the kernel uses for space, tab, newline and backslash.
    static func unescape(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == 0x5c, index + 3 < utf8.count,
                utf8[(index + 1)...(index + 3)].allSatisfy({ $0 >= 0x30 && $0 <= 0x37 }),
                let value = UInt8(String(decoding: utf8[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
