import Foundation
import Glibc
import StateStoreLinux

/// A file descriptor the monitor thread polls to be woken by the kernel: a PSI trigger it
/// registered, or the watch systemd hands over in `$MEMORY_PRESSURE_WATCH`.
struct PressureWatch {
    var fd: Int32
    var events: Int16
    var source: MemoryPressureEvent.Source
    /// The level a wake-up stands for (see ``MemorySample/stallTrigger``).
    var level: MemoryPressureLevel = .warning
    /// FIFOs and sockets deliver bytes that must be read; PSI files do not.
    var drainsInput = false

    static let procMagic: Int = 0x9fa0
    static let cgroup2Magic: Int = 0x6367_7270

    /// Sets up the watches the configuration asks for and the kernel allows, with a description.
    static func make(
        configuration: MemoryPressureMonitor.Configuration, cgroup: CgroupMemory?
    ) -> ([PressureWatch], String) {
        if configuration.usesSystemdPressureWatch, configuration.root == "/", configuration.cgroupPath == nil,
            case let environment = configuration.environment ?? ProcessInfo.processInfo.environment,
            let path = environment["MEMORY_PRESSURE_WATCH"], !path.isEmpty
        {
            if path == "/dev/null" { return ([], "polling (systemd disabled the pressure watch)") }
            let write = environment["MEMORY_PRESSURE_WRITE"].flatMap { Data(base64Encoded: $0) }
            if let watch = systemd(path: path, write: write.map(Array.init)) {
                return ([watch], "systemd watch \(path)")
            }
        }
        guard configuration.usesPressureStallTriggers else { return ([], "polling") }
        let file: String
        if let cgroup, cgroup.version == .v2 {
            file = cgroup.path + "/memory.pressure"
        } else {
            file = ProcFile.join(configuration.root, "/proc/pressure/memory")
        }
        var watches: [PressureWatch] = []
        let window: UInt64 = 2_000_000  // 2 s: unprivileged triggers need a multiple of 2 s
        if let percent = configuration.warningPressureStallPercent, percent > 0, percent < 100,
            var watch = trigger(file: file, "some \(UInt64(percent / 100 * Double(window))) \(window)")
        {
            watch.level = .warning
            watches.append(watch)
        }
        if let percent = configuration.criticalPressureStallPercent, percent > 0, percent < 100,
            var watch = trigger(file: file, "full \(UInt64(percent / 100 * Double(window))) \(window)")
        {
            watch.level = .critical
            watches.append(watch)
        }
        return (watches, watches.isEmpty ? "polling (no PSI triggers on \(file))" : "psi triggers on \(file)")
    }

    /// Registers a PSI trigger: open the file read-write, write the trigger with its final NUL
    /// (the kernel overwrites the last byte written with one), then poll for `POLLPRI`. Only on
    /// procfs or cgroup2 files, so a fixture tree's plain file is never written.
    static func trigger(file: String, _ specification: String) -> PressureWatch? {
        let fd = open(file, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard isPressureFile(fd) else {
            close(fd)
            return nil
        }
        let bytes = Array(specification.utf8) + [0]
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            close(fd)
            return nil
        }
        return PressureWatch(fd: fd, events: Int16(POLLPRI), source: .pressureStallTrigger)
    }

    /// systemd's protocol (`sd_event_add_memory_pressure`): a PSI file gets
    /// `$MEMORY_PRESSURE_WRITE` (base64) written and is polled for `POLLPRI`; a FIFO is read
    /// for `POLLIN`. Sockets are not supported and fall back to the monitor's own triggers.
    static func systemd(path: String, write: [UInt8]?) -> PressureWatch? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if info.st_mode & S_IFMT == S_IFIFO {
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            return PressureWatch(fd: fd, events: Int16(POLLIN), source: .systemdWatch, drainsInput: true)
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard isPressureFile(fd) else {
            close(fd)
            return nil
        }
        if var bytes = write, !bytes.isEmpty {
            if bytes.last != 0 { bytes.append(0) }
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == bytes.count else {
                close(fd)
                return nil
            }
        }
        return PressureWatch(fd: fd, events: Int16(POLLPRI), source: .systemdWatch)
    }

    /// Whether `fd` is on procfs or cgroup2, from `fstatfs(2)`'s `f_type`.
    static func isPressureFile(_ fd: Int32) -> Bool {
        let type = clinux_filesystem_type(fd)
        return type == procMagic || type == cgroup2Magic
    }

    /// Reads and discards what a FIFO delivered, so it does not stay readable.
    func drain() {
        guard drainsInput else { return }
        var buffer = [UInt8](repeating: 0, count: 256)
        while buffer.withUnsafeMutableBytes({ Glibc.read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
