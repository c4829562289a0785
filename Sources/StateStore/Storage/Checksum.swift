import Foundation

/// XXH64 (seed 0) of a byte buffer: the checksum stored beside every state.
///
/// Fast enough to run on every save on the main thread (several GB/s), and stable
/// across platforms and releases, so `statectl` and other tools can verify rows.
/// Reference: <https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md>.
enum Checksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        var acc = acc &+ input &* p2
        acc = (acc << 31) | (acc >> 33)
        return acc &* p1
    }

    @inline(__always)
    private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        let acc = acc ^ round(0, value)
        return acc &* p1 &+ p4
    }

    @inline(__always)
    private static func load64(_ buffer: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The four lanes' first values (seed 0).
    private static let seedLanes: (UInt64, UInt64, UInt64, UInt64) = (p1 &+ p2, p2, 0, 0 &- p1)

    /// Runs the 32-byte stripes of `buffer` from `offset` through the lanes; returns where the
    /// first byte not consumed is.
    @inline(__always)
    private static func stripes(
        _ buffer: UnsafeRawBufferPointer, from offset: Int, into lanes: inout (UInt64, UInt64, UInt64, UInt64)
    ) -> Int {
        var (v1, v2, v3, v4) = lanes
        var offset = offset
        let count = buffer.count
        while offset + 32 <= count {
            v1 = round(v1, load64(buffer, offset))
            v2 = round(v2, load64(buffer, offset + 8))
            v3 = round(v3, load64(buffer, offset + 16))
            v4 = round(v4, load64(buffer, offset + 24))
            offset += 32
        }
        lanes = (v1, v2, v3, v4)
        return offset
    }

    /// The hash of `total` bytes whose stripes went through `lanes` (when there were any), and
    /// whose last `tail.count` bytes (fewer than 32) are `tail`.
    private static func finish(
        lanes: (UInt64, UInt64, UInt64, UInt64), total: Int, tail buffer: UnsafeRawBufferPointer
    ) -> UInt64 {
        var hash: UInt64
        if total >= 32 {
            let (v1, v2, v3, v4) = lanes
            hash =
                ((v1 << 1) | (v1 >> 63)) &+ ((v2 << 7) | (v2 >> 57))
                &+ ((v3 << 12) | (v3 >> 52)) &+ ((v4 << 18) | (v4 >> 46))
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = p5
        }
        hash = hash &+ UInt64(truncatingIfNeeded: total)
        let count = buffer.count
        var offset = 0
        while offset + 8 <= count {
            hash ^= round(0, load64(buffer, offset))
            hash = ((hash << 27) | (hash >> 37)) &* p1 &+ p4
            offset += 8
        }
        if offset + 4 <= count {
            hash ^= UInt64(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) &* p1
            hash = ((hash << 23) | (hash >> 41)) &* p2 &+ p3
            offset += 4
        }
        while offset < count {
            hash ^= UInt64(buffer[offset]) &* p5
            hash = ((hash << 11) | (hash >> 53)) &* p1
            offset += 1
        }
        hash ^= hash >> 33
        hash = hash &* p2
        hash ^= hash >> 29
        hash = hash &* p3
        hash ^= hash >> 32
        return hash
    }

    static func xxh64(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
        var lanes = seedLanes
        let offset = stripes(buffer, from: 0, into: &lanes)
        return finish(lanes: lanes, total: buffer.count, tail: UnsafeRawBufferPointer(rebasing: buffer[offset...]))
    }

    /// XXH64 (seed 0) of bytes given a part at a time: ``update(_:)`` with each part in order,
    /// then ``finalize()``, which gives what ``Checksum/xxh64(_:)`` gives for the parts joined.
    /// Holds at most 31 bytes between parts, so a row of any size is hashed in fixed memory.
    struct Incremental {
        private var lanes = Checksum.seedLanes
        private var total = 0
        /// Bytes of a stripe not yet complete (the first `pendingCount` of 32).
        private var pending: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var pendingCount = 0

        /// Adds the next part.
        mutating func update(_ buffer: UnsafeRawBufferPointer) {
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
            total += buffer.count
            var offset = 0
            if pendingCount > 0 {
                let taken = min(32 - pendingCount, buffer.count)
                let filled = pendingCount
                withUnsafeMutableBytes(of: &pending) { stripe in
                    stripe.baseAddress!.advanced(by: filled).copyMemory(from: base, byteCount: taken)
                }
                pendingCount += taken
                offset = taken
                guard pendingCount == 32 else { return }
                let stripe = pending
                withUnsafeBytes(of: stripe) { _ = Checksum.stripes($0, from: 0, into: &lanes) }
                pendingCount = 0
            }
            offset = Checksum.stripes(buffer, from: offset, into: &lanes)
            let left = buffer.count - offset
            if left > 0 {
                withUnsafeMutableBytes(of: &pending) { stripe in
                    stripe.baseAddress!.copyMemory(from: base.advanced(by: offset), byteCount: left)
                }
                pendingCount = left
            }
        }

        /// The hash of every part given so far.
        func finalize() -> UInt64 {
            let stripe = pending, count = pendingCount
            return withUnsafeBytes(of: stripe) { bytes in
                Checksum.finish(
                    lanes: lanes, total: total, tail: UnsafeRawBufferPointer(rebasing: bytes.prefix(count)))
            }
        }
    }

    /// The checksum as SQLite stores it: the same 64 bits read as a signed integer.
    static func stored(_ bytes: Data) -> Int64 {
        Int64(bitPattern: bytes.withUnsafeBytes { xxh64($0) })
    }
}
