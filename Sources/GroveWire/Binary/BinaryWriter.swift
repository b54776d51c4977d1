/// Appends values in the binary format to a byte array. Structs wrap the array so that one
/// mutating call on a class property costs one exclusivity check, not one per byte.
struct BinaryWriter {
    var bytes: [UInt8]

    var count: Int { bytes.count }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest &>>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    mutating func null() { bytes.append(BinaryTag.null) }

    mutating func bool(_ value: Bool) { bytes.append(value ? BinaryTag.trueValue : BinaryTag.falseValue) }

    mutating func int(_ value: Int64) {
        bytes.append(BinaryTag.int)
        varint(BinaryFormat.zigzag(value))
    }

    mutating func uint(_ value: UInt64) {
        bytes.append(BinaryTag.uint)
        varint(value)
    }

    /// Int128 values that fit in 64 bits are plain ints; the rest take 16 bytes.
    mutating func int128(_ value: Int128) {
        if let small = Int64(exactly: value) { return int(small) }
        bytes.append(BinaryTag.int128)
        littleEndian(UInt64(truncatingIfNeeded: value), byteCount: 8)
        littleEndian(UInt64(truncatingIfNeeded: value >> 64), byteCount: 8)
    }

    mutating func uint128(_ value: UInt128) {
        if let small = UInt64(exactly: value) { return uint(small) }
        bytes.append(BinaryTag.uint128)
        littleEndian(UInt64(truncatingIfNeeded: value), byteCount: 8)
        littleEndian(UInt64(truncatingIfNeeded: value >> 64), byteCount: 8)
    }

    mutating func double(_ value: Double) {
        bytes.append(BinaryTag.double)
        littleEndian(value.bitPattern, byteCount: 8)
    }

    mutating func float(_ value: Float) {
        bytes.append(BinaryTag.float)
        littleEndian(UInt64(value.bitPattern), byteCount: 4)
    }

    mutating func string(_ value: String) {
        bytes.append(BinaryTag.string)
        utf8(value, lengthShift: 0)
    }

    /// A key: a string key is varint(byte count << 1) and its UTF-8; an integer key is
    /// varint(zigzag(n) << 1 | 1). Keys are their `stringValue`: only a key whose `stringValue` is
    /// the decimal form of its `intValue` (the keys of `[Int: V]`, or "5" in `[String: V]`) is
    /// written as an integer, so "007" stays "007" and `enum CodingKeys: Int` keep their names.
    mutating func key(_ key: some CodingKey) {
        let text = key.stringValue
        if let index = key.intValue {
            let zigzag = BinaryFormat.zigzag(Int64(index))
            if zigzag < 1 << 63, text == String(index) {
                varint(zigzag << 1 | 1)
                return
            }
        }
        utf8(text, lengthShift: 1)
    }

    /// Writes a container's tag and a one-byte count placeholder; returns the placeholder's offset.
    mutating func openContainer(keyed: Bool) -> Int {
        bytes.append(keyed ? BinaryTag.keyed : BinaryTag.unkeyed)
        bytes.append(0)
        return bytes.count - 1
    }

    /// Fills in a container's count; counts of 128 and more need more than the placeholder byte,
    /// so the container's contents move (rare in small messages, once per container at worst).
    mutating func patchCount(_ count: Int, at offset: Int) {
        if count < 0x80 {
            bytes[offset] = UInt8(truncatingIfNeeded: count)
            return
        }
        var encoded = BinaryWriter(bytes: [])
        encoded.varint(UInt64(count))
        bytes.replaceSubrange(offset ..< offset + 1, with: encoded.bytes)
    }

    mutating func emptyKeyed() {
        bytes.append(BinaryTag.keyed)
        bytes.append(0)
    }

    @inline(__always)
    private mutating func littleEndian(_ value: UInt64, byteCount: Int) {
        var rest = value
        for _ in 0 ..< byteCount {
            bytes.append(UInt8(truncatingIfNeeded: rest))
            rest &>>= 8
        }
    }

    private mutating func utf8(_ text: String, lengthShift: UInt64) {
        var text = text
        text.withUTF8 { utf8 in
            varint(UInt64(utf8.count) << lengthShift)
            bytes.append(contentsOf: utf8)
        }
    }
}
