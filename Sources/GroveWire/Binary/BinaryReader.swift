/// Bounds-checked reads of the binary format. Every read checks the input's end and throws
/// ``BinaryCodingError`` (without a path; containers add it) instead of trapping.
///
/// Reads from a buffer pointer, valid while `BinaryCodec.decode` runs: an array slice would be
/// retained and released on every access. Decoding replaces the reader with an empty one when it
/// returns, so a decoder or container kept past that reads nothing rather than freed memory.
struct BinaryReader {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Offsets are from the start of the input.
    var start: Int { 0 }
    var end: Int { bytes.count }

    static var empty: BinaryReader { BinaryReader(bytes: UnsafeBufferPointer(start: nil, count: 0)) }

    @inline(__always)
    func tag(at offset: Int) throws(BinaryCodingError) -> UInt8 {
        guard offset < end else { throw .truncated("a value", at: offset - start) }
        return bytes[offset]
    }

    @inline(__always)
    func varint(_ offset: inout Int) throws(BinaryCodingError) -> UInt64 {
        guard offset < end else { throw .truncated("a varint", at: offset - start) }
        let first = bytes[offset]
        offset += 1
        if first < 0x80 { return UInt64(first) }
        return try longVarint(first, &offset)
    }

    private func longVarint(_ first: UInt8, _ offset: inout Int) throws(BinaryCodingError) -> UInt64 {
        var result = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        while true {
            guard offset < end else { throw .truncated("a varint", at: offset - start) }
            let byte = bytes[offset]
            offset += 1
            if shift == 63 && byte > 1 { throw .malformed("varint longer than 64 bits at byte \(offset - 1 - start)") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// A count or length; each of the `count` items takes at least `itemSize` bytes, so a count
    /// larger than the rest of the input is rejected before anyone allocates for it.
    @inline(__always)
    func count(_ offset: inout Int, itemSize: Int, of what: String) throws(BinaryCodingError) -> Int {
        let at = offset
        let value = try varint(&offset)
        guard value <= UInt64((end - offset) / itemSize) else { throw .truncated("\(what) of \(value) declared at byte \(at - start)", at: end - start) }
        return Int(truncatingIfNeeded: value)
    }

    func key(_ offset: inout Int) throws(BinaryCodingError) -> BinaryEntryKey {
        let header = try varint(&offset)
        if header & 1 == 1 {
            return .int(Int(truncatingIfNeeded: BinaryFormat.unzigzag(header >> 1)))
        }
        let length = header >> 1
        guard length <= UInt64(end - offset) else { throw .truncated("a key of \(length) bytes", at: end - start) }
        let keyStart = offset
        offset += Int(truncatingIfNeeded: length)
        return .string(start: keyStart, count: Int(truncatingIfNeeded: length))
    }

    func fixed(at offset: Int, byteCount: Int, what: String) throws(BinaryCodingError) -> UInt64 {
        guard end - offset >= byteCount else { throw .truncated(what, at: end - start) }
        var value: UInt64 = 0
        for index in 0 ..< byteCount {
            value |= UInt64(bytes[offset + index]) << (8 * UInt64(index))
        }
        return value
    }

    /// The UTF-8 bytes at `start..<start + count` as a String, or nil when they are not UTF-8.
    func text(start: Int, count: Int) -> String? {
        String(validatingUTF8Quickly: UnsafeBufferPointer(rebasing: bytes[start ..< start + count]))
    }

    /// Whether the key bytes at `start..<start + count` spell `text`.
    func utf8(start: Int, count: Int, equals text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count == count else { return false }
            var index = 0
            while index < count {
                if utf8[index] != bytes[start + index] { return false }
                index += 1
            }
            return true
        }
    }
}
