/// Typed reads: each returns the value and the offset just past it.
extension BinaryReader {
    /// Typed reads: each returns the value and sets `end` to the offset just past it.
    func integer<I: FixedWidthInteger>(_ type: I.Type, at offset: Int, end: inout Int) throws(BinaryCodingError) -> I {
        let tag = try tag(at: offset)
        var next = offset + 1
        switch tag {
        case BinaryTag.int:
            let value = BinaryFormat.unzigzag(try varint(&next))
            guard let result = I(exactly: value) else { throw Self.outOfRange(value, I.self) }
            end = next
            return result
        case BinaryTag.uint:
            let value = try varint(&next)
            guard let result = I(exactly: value) else { throw Self.outOfRange(value, I.self) }
            end = next
            return result
        case BinaryTag.int128:
            let value = Int128(bitPattern: try wide(at: next))
            guard let result = I(exactly: value) else { throw Self.outOfRange(value, I.self) }
            end = next + 16
            return result
        case BinaryTag.uint128:
            let value = try wide(at: next)
            guard let result = I(exactly: value) else { throw Self.outOfRange(value, I.self) }
            end = next + 16
            return result
        default:
            throw .mismatch(expected: "\(I.self)", found: tag, at: offset - start)
        }
    }

    private func wide(at offset: Int) throws(BinaryCodingError) -> UInt128 {
        let low = try fixed(at: offset, byteCount: 8, what: "a 128-bit integer")
        let high = try fixed(at: offset + 8, byteCount: 8, what: "a 128-bit integer")
        return UInt128(high) << 64 | UInt128(low)
    }

    func double(at offset: Int, end: inout Int) throws(BinaryCodingError) -> Double {
        let tag = try tag(at: offset)
        var next = offset + 1
        switch tag {
        case BinaryTag.double:
            let bits = try fixed(at: next, byteCount: 8, what: "a Double")
            end = next + 8
            return Double(bitPattern: bits)
        case BinaryTag.float:
            let bits = UInt32(truncatingIfNeeded: try fixed(at: next, byteCount: 4, what: "a Float"))
            end = next + 4
            return Double(Float(bitPattern: bits))
        case BinaryTag.int:
            let value = BinaryFormat.unzigzag(try varint(&next))
            end = next
            return Double(value)
        case BinaryTag.uint:
            let value = try varint(&next)
            end = next
            return Double(value)
        case BinaryTag.int128:
            return Double(try integer(Int128.self, at: offset, end: &end))
        case BinaryTag.uint128:
            return Double(try integer(UInt128.self, at: offset, end: &end))
        default:
            throw .mismatch(expected: "Double", found: tag, at: offset - start)
        }
    }

    func float(at offset: Int, end: inout Int) throws(BinaryCodingError) -> Float {
        let tag = try tag(at: offset)
        if tag == BinaryTag.float {
            let bits = UInt32(truncatingIfNeeded: try fixed(at: offset + 1, byteCount: 4, what: "a Float"))
            end = offset + 5
            return Float(bitPattern: bits)
        }
        guard tag == BinaryTag.double || tag == BinaryTag.int || tag == BinaryTag.uint || tag == BinaryTag.int128 || tag == BinaryTag.uint128 else {
            throw .mismatch(expected: "Float", found: tag, at: offset - start)
        }
        // Like JSONDecoder: a wider number is accepted when it is within Float's range.
        let value = try double(at: offset, end: &end)
        guard !value.isFinite || abs(value) <= Double(Float.greatestFiniteMagnitude) else {
            throw BinaryCodingError(.numberOutOfRange, "\(value) does not fit in Float; decode it as Double", path: BinaryCodingError.unlocated)
        }
        // Nor one too small for Float (it would read as 0).
        guard value == 0 || Float(value) != 0 else {
            throw BinaryCodingError(.numberOutOfRange, "\(value) is too small for Float; decode it as Double", path: BinaryCodingError.unlocated)
        }
        return Float(value)
    }

    func bool(at offset: Int, end: inout Int) throws(BinaryCodingError) -> Bool {
        let tag = try tag(at: offset)
        switch tag {
        case BinaryTag.trueValue:
            end = offset + 1
            return true
        case BinaryTag.falseValue:
            end = offset + 1
            return false
        default:
            throw .mismatch(expected: "Bool", found: tag, at: offset - start)
        }
    }

    func string(at offset: Int, end: inout Int) throws(BinaryCodingError) -> String {
        let tag = try tag(at: offset)
        guard tag == BinaryTag.string else { throw .mismatch(expected: "String", found: tag, at: offset - start) }
        var next = offset + 1
        let length = try count(&next, itemSize: 1, of: "a String")
        guard let text = text(start: next, count: length) else {
            throw .malformed("a String at byte \(offset - start) is not valid UTF-8")
        }
        end = next + length
        return text
    }

    /// Reads a container's tag and count; returns the count and the offset of its first item.
    func container(keyed: Bool, at offset: Int) throws(BinaryCodingError) -> (count: Int, first: Int) {
        let tag = try tag(at: offset)
        guard tag == (keyed ? BinaryTag.keyed : BinaryTag.unkeyed) else {
            throw .mismatch(expected: keyed ? "a keyed container" : "an unkeyed container", found: tag, at: offset - start)
        }
        var next = offset + 1
        let count = try count(&next, itemSize: keyed ? 2 : 1, of: keyed ? "a keyed container" : "an unkeyed container")
        return (count, next)
    }

    /// The offset just past the value at `offset`, checking its structure on the way.
    /// - Parameter depth: The container depth of the value, to refuse hostile nesting.
    func skip(from offset: Int, depth: Int) throws(BinaryCodingError) -> Int {
        let tag = try tag(at: offset)
        var next = offset + 1
        switch tag {
        case BinaryTag.null, BinaryTag.falseValue, BinaryTag.trueValue:
            return next
        case BinaryTag.int, BinaryTag.uint:
            _ = try varint(&next)
            return next
        case BinaryTag.double, BinaryTag.float, BinaryTag.int128, BinaryTag.uint128:
            let size = tag == BinaryTag.float ? 4 : tag == BinaryTag.double ? 8 : 16
            guard end - next >= size else { throw .truncated(BinaryTag.name(tag), at: end - start) }
            return next + size
        case BinaryTag.string:
            let length = try count(&next, itemSize: 1, of: "a String")
            return next + length
        case BinaryTag.unkeyed, BinaryTag.keyed:
            guard depth < BinaryCodec.maximumDepth else { throw Self.tooDeep() }
            let keyed = tag == BinaryTag.keyed
            let count = try count(&next, itemSize: keyed ? 2 : 1, of: BinaryTag.name(tag))
            for _ in 0 ..< count {
                if keyed { _ = try key(&next) }
                next = try skip(from: next, depth: depth + 1)
            }
            return next
        default:
            throw .malformed("unknown tag 0x\(String(tag, radix: 16)) at byte \(offset - start)")
        }
    }

    static func tooDeep() -> BinaryCodingError {
        BinaryCodingError(.tooDeep, "containers nest deeper than \(BinaryCodec.maximumDepth); flatten the value or split the message",
                          path: BinaryCodingError.unlocated)
    }

    private static func outOfRange(_ value: some BinaryInteger, _ type: Any.Type) -> BinaryCodingError {
        BinaryCodingError(.numberOutOfRange, "\(value) does not fit in \(type); use a wider integer type on both sides",
                          path: BinaryCodingError.unlocated)
    }
}
