/// What a ``BinaryCodable`` type's generated `init(binary:)` reads with: a position in the
/// bytes ``BinaryCodec`` is decoding, moved forward by each read.
///
/// Valid only during the `init(binary:)` call it is passed to. Every read checks the input
/// (lengths, tags, depth) and throws ``BinaryCodingError``; ``BinaryCodec`` then decodes the
/// value again through `Codable`, which says exactly what is wrong and where.
public struct BinaryCodableReader {
    var reader: BinaryReader
    var offset: Int
    /// Keyed containers entered and not yet left.
    var depth: Int
    /// For fields decoded through `Codable`: taken when the first one is, returned to the pool by
    /// ``recycle()`` when the decoding ends.
    var codableState: BinaryDecodingState?

    init(reader: BinaryReader, offset: Int, depth: Int) {
        self.reader = reader
        self.offset = offset
        self.depth = depth
    }

    /// Returns the state taken for fields decoded through `Codable`, if any.
    mutating func recycle() {
        guard var state = codableState else { return }
        codableState = nil
        BinaryStatePool.recycle(&state)
    }

    /// Enters the keyed container at the position: returns its entry count and moves to its first key.
    public mutating func beginKeyed() throws(BinaryCodingError) -> Int {
        guard depth < BinaryCodec.maximumDepth else { throw BinaryReader.tooDeep() }
        let (count, first) = try reader.container(keyed: true, at: offset)
        offset = first
        depth += 1
        return count
    }

    /// Leaves the keyed container entered last, once all its entries were read or skipped.
    public mutating func endKeyed() {
        depth -= 1
    }

    /// Reads the next entry's key; its value follows.
    public mutating func key() throws(BinaryCodingError) -> BinaryCodableKey {
        switch try reader.key(&offset) {
        case .string(let start, let count):
            BinaryCodableKey(bytes: UnsafeBufferPointer(rebasing: reader.bytes[start ..< start + count]))
        case .int:
            BinaryCodableKey(bytes: nil)
        }
    }

    /// Moves past the value at the position without decoding it.
    public mutating func skipValue() throws(BinaryCodingError) {
        offset = try reader.skip(from: offset, depth: depth)
    }

    /// Moves past a nil at the position and returns true, or returns false for any other value.
    public mutating func decodeNil() throws(BinaryCodingError) -> Bool {
        guard try reader.tag(at: offset) == BinaryTag.null else { return false }
        offset += 1
        return true
    }

    public mutating func decode(_ type: String.Type) throws(BinaryCodingError) -> String {
        try reader.string(at: offset, end: &offset)
    }

    public mutating func decode(_ type: Bool.Type) throws(BinaryCodingError) -> Bool {
        try reader.bool(at: offset, end: &offset)
    }

    public mutating func decode(_ type: Double.Type) throws(BinaryCodingError) -> Double {
        try reader.double(at: offset, end: &offset)
    }

    public mutating func decode(_ type: Float.Type) throws(BinaryCodingError) -> Float {
        try reader.float(at: offset, end: &offset)
    }

    public mutating func decode(_ type: Int.Type) throws(BinaryCodingError) -> Int { try integer(type) }
    public mutating func decode(_ type: Int8.Type) throws(BinaryCodingError) -> Int8 { try integer(type) }
    public mutating func decode(_ type: Int16.Type) throws(BinaryCodingError) -> Int16 { try integer(type) }
    public mutating func decode(_ type: Int32.Type) throws(BinaryCodingError) -> Int32 { try integer(type) }
    public mutating func decode(_ type: Int64.Type) throws(BinaryCodingError) -> Int64 { try integer(type) }
    public mutating func decode(_ type: UInt.Type) throws(BinaryCodingError) -> UInt { try integer(type) }
    public mutating func decode(_ type: UInt8.Type) throws(BinaryCodingError) -> UInt8 { try integer(type) }
    public mutating func decode(_ type: UInt16.Type) throws(BinaryCodingError) -> UInt16 { try integer(type) }
    public mutating func decode(_ type: UInt32.Type) throws(BinaryCodingError) -> UInt32 { try integer(type) }
    public mutating func decode(_ type: UInt64.Type) throws(BinaryCodingError) -> UInt64 { try integer(type) }

    /// A field whose type is itself ``BinaryCodable``: its generated code, no `Codable`.
    public mutating func decode<T: BinaryCodable>(_ type: T.Type) throws(BinaryCodingError) -> T {
        try T(binary: &self)
    }

    /// Any other field, through its `Decodable` conformance.
    public mutating func decode<T: Decodable>(_ type: T.Type) throws(BinaryCodingError) -> T {
        let state = codableState ?? BinaryStatePool.takeDecoder(bytes: reader.bytes)
        codableState = state
        var end = -1
        let value: T
        do {
            value = try state.decodeValue(T.self, at: offset, depth: depth, key: BinaryNoKey(), end: &end)
        } catch {
            throw state.core.convert(error)
        }
        offset = end >= 0 ? end : try reader.skip(from: offset, depth: depth)
        return value
    }

    /// A field's value once its container is read: nil (the key was missing) throws for a
    /// required field; an optional one is nil. The type checker picks the overload, so a field
    /// whose type is an optional behind a typealias is optional here too, as in `Codable`.
    @inlinable
    public func required<T>(_ value: T?) throws(BinaryCodingError) -> T {
        guard let value else { throw mismatch() }
        return value
    }

    /// A missing optional field is nil (`decodeIfPresent`).
    @inlinable
    public func required<Wrapped>(_ value: Wrapped??) throws(BinaryCodingError) -> Wrapped? {
        value ?? nil
    }

    /// The error generated code throws when the bytes are not what it reads (``BinaryCodec``
    /// then decodes through `Codable`, whose error says what is wrong).
    public func mismatch() -> BinaryCodingError {
        BinaryCodingError(.typeMismatch, "the bytes at byte \(offset) are not what the generated decoder reads",
                          path: BinaryCodingError.unlocated)
    }

    private mutating func integer<I: FixedWidthInteger>(_ type: I.Type) throws(BinaryCodingError) -> I {
        try reader.integer(I.self, at: offset, end: &offset)
    }
}

/// A key read by ``BinaryCodableReader/key()``, compared with the names generated code knows.
public struct BinaryCodableKey {
    /// The key's UTF-8; nil for an integer key, which no synthesized coding key is.
    let bytes: UnsafeBufferPointer<UInt8>?

    /// Whether the key is `name`.
    public func matches(_ name: StaticString) -> Bool {
        guard let bytes else { return false }
        // `withUTF8Buffer`, not `utf8Start`: a one-character literal is stored as a scalar.
        return name.withUTF8Buffer { expected in
            guard expected.count == bytes.count else { return false }
            var index = 0
            while index < bytes.count {
                if bytes[index] != expected[index] { return false }
                index += 1
            }
            return true
        }
    }
}
