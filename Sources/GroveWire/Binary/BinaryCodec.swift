// The binary format, version 1. Every value starts with a one-byte tag:
//
//   tag   kind       payload
//   0x00  nil        -
//   0x01  false      -
//   0x02  true       -
//   0x03  int        zig-zag LEB128 varint (Int, Int8 ... Int64)
//   0x04  uint       LEB128 varint (UInt, UInt8 ... UInt64)
//   0x05  double     8 bytes, IEEE 754 bit pattern, little-endian (NaN and infinities included)
//   0x06  float      4 bytes, likewise
//   0x07  string     varint byte count, then UTF-8
//   0x08  unkeyed    varint element count, then the elements
//   0x09  keyed      varint entry count, then per entry a key and a value
//   0x0A  int128     16 bytes, two's complement, little-endian (Int128 beyond Int64's range)
//   0x0B  uint128    16 bytes, little-endian (UInt128 beyond UInt64's range)
//
// A key is one varint h: h even, a string key of h >> 1 UTF-8 bytes that follow; h odd, an
// integer key equal to unzigzag(h >> 1). Keys are their stringValue; a key whose stringValue is
// the decimal form of its intValue (the keys of [Int: V]) is written as an integer key.
// Single value containers write their value with no wrapper; a value that encodes nothing is an
// empty keyed container. A message is exactly one value: no header, no trailing bytes.
//
// Example: `Event.add(5)` with synthesized Codable is
//   09 01 06 'a' 'd' 'd' 09 01 04 '_' '0' 03 0a
//   keyed(1) "add": keyed(1) "_0": int 5
//
// Decoding checks every length against the input, refuses nesting deeper than
// `BinaryCodec.maximumDepth`, and throws BinaryCodingError with the coding path; it never traps
// on input. docs/BINARY.md has the same description and the measurements.

/// A compact, self-describing binary coding for `Codable` values: several times faster than
/// `JSONEncoder`/`JSONDecoder` for Grove's small events and states, for traffic between workers.
///
/// Round-trips what JSON round-trips, plus non-finite floating-point numbers. Works on `[UInt8]`
/// without Foundation. Safe to call from any thread.
///
/// ```swift
/// enum Event: Codable { case increment, add(Int), updateEmail(String) }
///
/// let bytes = try BinaryCodec.encode(Event.add(5))          // 13 bytes
/// let event = try BinaryCodec.decode(Event.self, from: bytes)
/// ```
public enum BinaryCodec {
    /// The deepest nesting of containers that decoding accepts (like `JSONDecoder`'s limit);
    /// deeper input throws ``BinaryCodingError/Code/tooDeep`` instead of exhausting the stack.
    public static let maximumDepth = 512

    /// Encodes a value.
    /// - Parameter value: The value to encode.
    /// - Returns: The encoded bytes.
    /// - Throws: ``BinaryCodingError`` when the value's `encode(to:)` throws, or uses containers
    ///   in an order this streaming encoder cannot write (``BinaryCodingError/Code/unsupported``).
    public static func encode<T: Encodable>(_ value: T) throws(BinaryCodingError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        try encode(value, into: &bytes)
        return bytes
    }

    /// Encodes a value at the end of `buffer`, for batching several values in one allocation.
    ///
    /// The encoding does not record its own length: frame each value (or use one ZeroMQ frame
    /// each) to decode them again.
    /// - Parameters:
    ///   - value: The value to encode.
    ///   - buffer: Bytes to append to; left as it was when encoding throws.
    /// - Throws: ``BinaryCodingError``, as ``encode(_:)``.
    ///
    /// Inlinable, so that a caller that knows `T` encodes without generic metadata lookups.
    @inlinable
    public static func encode<T: Encodable>(_ value: T, into buffer: inout [UInt8]) throws(BinaryCodingError) {
        if let generated = T.self as? any BinaryCodable.Type {
            // Through a pointer, so that no cast (and no metadata lookup) is made per value.
            try withUnsafePointer(to: value) { pointer throws(BinaryCodingError) in
                try generated.encodeGenerated(at: UnsafeRawPointer(pointer), into: &buffer, refusing: nil)
            }
            return
        }
        try encodeThroughCodable(value, into: &buffer)
    }

    /// Encodes through the value's `encode(to:)`, whatever else it conforms to; with `refuses`,
    /// unless the value contains a type it names (``BinaryCodingError/Code/unsupported``).
    @usableFromInline
    static func encodeThroughCodable<T: Encodable>(
        _ value: T, into buffer: inout [UInt8], refusing refuses: ((Any.Type) -> Bool)? = nil
    ) throws(BinaryCodingError) {
        let start = buffer.count
        var state = BinaryStatePool.takeEncoder()
        defer { BinaryStatePool.recycle(&state) }
        state.core.refuses = refuses
        swap(&state.core.writer.bytes, &buffer)
        do {
            try state.encodeRoot(value, slot: start)
            swap(&state.core.writer.bytes, &buffer)
            state.core.refuses = nil
        } catch {
            swap(&state.core.writer.bytes, &buffer)
            buffer.removeSubrange(start...)
            state.core.refuses = nil
            throw error
        }
    }

    /// Encodes a value unless it contains a type `refuses` names (``BinaryCodingError/Code/unsupported``):
    /// through the generated code of a ``BinaryCodable`` type, which passes `refuses` on to the
    /// fields it encodes through `Codable`.
    static func encode<T: Encodable>(_ value: T, refusing refuses: @escaping (Any.Type) -> Bool) throws(BinaryCodingError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        if let generated = T.self as? any BinaryCodable.Type {
            try withUnsafePointer(to: value) { pointer throws(BinaryCodingError) in
                try generated.encodeGenerated(at: UnsafeRawPointer(pointer), into: &bytes, refusing: refuses)
            }
        } else {
            try encodeThroughCodable(value, into: &bytes, refusing: refuses)
        }
        return bytes
    }

    /// Decodes a value from bytes written by ``encode(_:)``.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - bytes: Exactly one encoded value.
    /// - Returns: The decoded value.
    /// - Throws: ``BinaryCodingError`` when the bytes are truncated, malformed, followed by more
    ///   bytes, or do not match the type; ``BinaryCodingError/path`` names where, e.g.
    ///   `$.updateEmail._0`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(BinaryCodingError) -> T {
        try decode(type, from: bytes[...])
    }

    /// Decodes a value from a slice of a larger buffer, without copying it.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - bytes: Exactly one encoded value.
    /// - Returns: The decoded value.
    /// - Throws: ``BinaryCodingError``, as the `[UInt8]` overload.
    ///
    /// Inlinable, so that a caller that knows `T` decodes without generic metadata lookups.
    @inlinable
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) throws(BinaryCodingError) -> T {
        try bytes.withUnsafeBufferPointer { buffer throws(BinaryCodingError) in try decode(type, from: buffer) }
    }

    @inlinable
    static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>) throws(BinaryCodingError) -> T {
        if let generated = T.self as? any BinaryCodable.Type {
            // Into a slot of T's own, so that no cast (and no Optional's metadata) is needed per value.
            return try withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { slot throws(BinaryCodingError) -> T in
                let pointer = slot.baseAddress!
                if generated.decodeGenerated(from: bytes, into: UnsafeMutableRawPointer(pointer)) { return pointer.move() }
                return try decodeThroughCodable(type, from: bytes)
            }
        }
        return try decodeThroughCodable(type, from: bytes)
    }

    /// Decodes through the type's `init(from:)`, whatever else it conforms to.
    @usableFromInline
    static func decodeThroughCodable<T: Decodable>(_ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>) throws(BinaryCodingError) -> T {
        var state = BinaryStatePool.takeDecoder(bytes: bytes)
        defer { BinaryStatePool.recycle(&state) }
        do {
            var end = -1
            let value = try state.decodeValue(T.self, at: 0, depth: 0, key: BinaryNoKey(), end: &end)
            if end < 0 {
                do {
                    end = try state.core.reader.skip(from: 0, depth: 0)
                } catch {
                    throw state.core.locate(error, depth: 0, key: BinaryNoKey())
                }
            }
            guard end == bytes.count else {
                throw BinaryCodingError(.trailingBytes, "\(bytes.count - end) bytes follow the value that ends at byte \(end); pass exactly one encoded value")
            }
            return value
        } catch {
            throw state.core.convert(error)
        }
    }
}
