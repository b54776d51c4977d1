/// The `Encoder` for one value: a slot in the output where the value's bytes start. Small
/// enough (three words) to travel inside `any Encoder` without an allocation.
struct BinaryValueEncoder: Encoder {
    let state: BinaryEncodingState
    /// Length of the coding path.
    let depth: Int
    /// Offset where this value's bytes start.
    let slot: Int

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let serial = state.core.container(keyed: true, slot: slot)
        return KeyedEncodingContainer(BinaryKeyedEncoder<Key>(state: state, serial: serial, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        BinaryUnkeyedEncoder(state: state, serial: state.core.container(keyed: false, slot: slot), depth: depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncoder(state: state, depth: depth, slot: slot)
    }
}

/// Writes the one value of a slot.
struct BinarySingleValueEncoder: SingleValueEncodingContainer {
    let state: BinaryEncodingState
    let depth: Int
    let slot: Int

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }

    mutating func encodeNil() throws { try state.core.claim(slot); state.core.writer.null() }
    mutating func encode(_ value: Bool) throws { try state.core.claim(slot); state.core.writer.bool(value) }
    mutating func encode(_ value: String) throws { try state.core.claim(slot); state.core.writer.string(value) }
    mutating func encode(_ value: Double) throws { try state.core.claim(slot); state.core.writer.double(value) }
    mutating func encode(_ value: Float) throws { try state.core.claim(slot); state.core.writer.float(value) }
    mutating func encode(_ value: Int) throws { try state.core.claim(slot); state.core.writer.int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try state.core.claim(slot); state.core.writer.int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try state.core.claim(slot); state.core.writer.int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try state.core.claim(slot); state.core.writer.int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try state.core.claim(slot); state.core.writer.int(value) }
    mutating func encode(_ value: UInt) throws { try state.core.claim(slot); state.core.writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try state.core.claim(slot); state.core.writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try state.core.claim(slot); state.core.writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try state.core.claim(slot); state.core.writer.uint(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try state.core.claim(slot); state.core.writer.uint(value) }
    mutating func encode(_ value: Int128) throws { try state.core.claim(slot); state.core.writer.int128(value) }
    mutating func encode(_ value: UInt128) throws { try state.core.claim(slot); state.core.writer.uint128(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try state.core.claim(slot)
        if state.core.writer.primitive(value) { return }
        try state.encodeNested(value, depth: depth, slot: slot)
    }
}
