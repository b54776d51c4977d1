/// What a ``BinaryCodable`` type's generated `encode(binary:)` writes with: appends to the
/// bytes ``BinaryCodec`` is encoding, in the format its `Codable` encoder writes.
public struct BinaryCodableWriter {
    var writer: BinaryWriter
    /// Types the encoding must not contain (WireJSON's: those JSONEncoder writes its own way),
    /// checked for the fields encoded through `Codable`.
    var refuses: ((Any.Type) -> Bool)?

    /// Starts a keyed container of `count` entries; each entry is a ``key(_:)`` and a value.
    public mutating func beginKeyed(count: Int) {
        writer.bytes.append(BinaryTag.keyed)
        writer.varint(UInt64(count))
    }

    /// Whether a field is left out: never for a value, when nil for an optional (as
    /// `encodeIfPresent` does). The type checker picks the overload, so an optional behind a
    /// typealias counts as one.
    @inlinable
    public func isAbsent<T>(_ value: T) -> Bool { false }

    /// A nil optional field is left out.
    @inlinable
    public func isAbsent<Wrapped>(_ value: Wrapped?) -> Bool { value == nil }

    /// Writes an entry's key, as a synthesized coding key's `stringValue`.
    public mutating func key(_ name: StaticString) {
        name.withUTF8Buffer { utf8 in
            writer.varint(UInt64(utf8.count) << 1)
            writer.bytes.append(contentsOf: utf8)
        }
    }

    // The primitives never throw; they are declared throwing so that generated code can write
    // `try writer.encode(x)` for any field type without a warning.
    public mutating func encodeNil() throws(BinaryCodingError) { writer.null() }
    public mutating func encode(_ value: String) throws(BinaryCodingError) { writer.string(value) }
    public mutating func encode(_ value: Bool) throws(BinaryCodingError) { writer.bool(value) }
    public mutating func encode(_ value: Double) throws(BinaryCodingError) { writer.double(value) }
    public mutating func encode(_ value: Float) throws(BinaryCodingError) { writer.float(value) }
    public mutating func encode(_ value: Int) throws(BinaryCodingError) { writer.int(Int64(value)) }
    public mutating func encode(_ value: Int8) throws(BinaryCodingError) { writer.int(Int64(value)) }
    public mutating func encode(_ value: Int16) throws(BinaryCodingError) { writer.int(Int64(value)) }
    public mutating func encode(_ value: Int32) throws(BinaryCodingError) { writer.int(Int64(value)) }
    public mutating func encode(_ value: Int64) throws(BinaryCodingError) { writer.int(value) }
    public mutating func encode(_ value: UInt) throws(BinaryCodingError) { writer.uint(UInt64(value)) }
    public mutating func encode(_ value: UInt8) throws(BinaryCodingError) { writer.uint(UInt64(value)) }
    public mutating func encode(_ value: UInt16) throws(BinaryCodingError) { writer.uint(UInt64(value)) }
    public mutating func encode(_ value: UInt32) throws(BinaryCodingError) { writer.uint(UInt64(value)) }
    public mutating func encode(_ value: UInt64) throws(BinaryCodingError) { writer.uint(value) }

    /// A field whose type is itself ``BinaryCodable``: its generated code, no `Codable`.
    public mutating func encode<T: BinaryCodable>(_ value: T) throws(BinaryCodingError) {
        try value.encode(binary: &self)
    }

    /// Any other field, through its `Encodable` conformance.
    public mutating func encode<T: Encodable>(_ value: T) throws(BinaryCodingError) {
        try BinaryCodec.encodeThroughCodable(value, into: &writer.bytes, refusing: refuses)
    }
}
