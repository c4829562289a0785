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

    static func xxh64(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
        let count = buffer.count
        var offset = 0
        var hash: UInt64
        @inline(__always) func load64(_ at: Int) -> UInt64 {
            UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        @inline(__always) func load32(_ at: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        }
        if count >= 32 {
            var v1 = p1 &+ p2, v2 = p2, v3: UInt64 = 0, v4 = 0 &- p1
            while offset + 32 <= count {
                v1 = round(v1, load64(offset))
                v2 = round(v2, load64(offset + 8))
                v3 = round(v3, load64(offset + 16))
                v4 = round(v4, load64(offset + 24))
                offset += 32
            }
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
        hash = hash &+ UInt64(count)
        while offset + 8 <= count {
            hash ^= round(0, load64(offset))
            hash = ((hash << 27) | (hash >> 37)) &* p1 &+ p4
            offset += 8
        }
        if offset + 4 <= count {
            hash ^= load32(offset) &* p1
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

    /// The checksum as SQLite stores it: the same 64 bits read as a signed integer.
    static func stored(_ bytes: Data) -> Int64 {
        Int64(bitPattern: bytes.withUnsafeBytes { xxh64($0) })
    }
}
