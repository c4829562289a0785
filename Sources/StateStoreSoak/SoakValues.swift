import Foundation
import Glibc
import StateStore
import StateStoreLinux

/// Small values the soak generates and exchanges.
enum SoakValues {
    /// FNV-1a, 64 bits: the harness's own checksum of a state's canonical bytes, independent
    /// of the store's XXH64, so a store bug cannot vouch for itself.
    static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// Wall-clock seconds since the Unix epoch, the time base shared by supervisor and harness.
    static func now() -> Double { Date().timeIntervalSince1970 }
}

/// SplitMix64: a tiny, fast, seedable generator, so `--seed` replays the same traffic.
struct SoakRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// A failure of the soak's own machinery: a cgroup that cannot be made or written, a child
/// that cannot be started. `message` is one line that says what to do.
package struct SoakError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }

    init(message: String) { self.message = message }
}

/// Writes one line to a file descriptor with one write(2) per chunk; a line shorter than
/// `PIPE_BUF` (4 KiB) is atomic on a pipe, so threads may emit concurrently.
func soakWriteLine(_ line: String, to fd: Int32 = 1) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return }
        offset += written
    }
}

/// `prctl(PR_SET_PDEATHSIG, signal)`: the kernel sends `signal` to this process when its parent
/// dies, so a killed supervisor does not leave a harness running.
func soakSetParentDeathSignal(_ signal: Int32) {
    _ = clinux_set_parent_death_signal(signal)
}
