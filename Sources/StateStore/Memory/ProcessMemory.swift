import Glibc
import StateStoreLinux

/// The current process's memory, and a way to hand freed memory back to the system.
public enum ProcessMemory {
    /// Resident set size in bytes: `/proc/self/statm`'s second field × the page size, else
    /// `VmRSS` from `/proc/self/status`; `nil` when neither can be read.
    public static func residentBytes() -> UInt64? {
        if let statm = ProcFile.readIfPresent("/proc/self/statm") {
            let fields = statm.split(whereSeparator: { $0 == " " || $0 == "\n" })
            if fields.count >= 2, let pages = ProcFile.unsigned(fields[1]) {
                return pages * UInt64(max(sysconf(Int32(_SC_PAGESIZE)), 1))
            }
        }
        if let status = ProcFile.readIfPresent("/proc/self/status") {
            for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if fields.count >= 2, let kilobytes = ProcFile.unsigned(fields[1]) { return kilobytes * 1024 }
            }
        }
        return nil
    }

    /// Returns freed heap memory to the system with glibc's `malloc_trim(0)`: without it, pages
    /// freed inside malloc's arenas stay resident and purging caches does not lower RSS.
    ///
    /// - Returns: `true` when memory was released, `false` when there was nothing to release.
    @discardableResult
    public static func trim() -> Bool {
        // `malloc_trim` lives in <malloc.h>, which Swift's Glibc module does not import.
        clinux_malloc_trim(0) == 1
    }
}
