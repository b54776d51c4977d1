/// Writes the entries of a keyed container: each is a key, then a value.
struct BinaryKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: BinaryEncodingState
    /// The container's serial in `state.core.open`; -1 when it could not be opened.
    let serial: Int
    /// Length of the container's coding path.
    let depth: Int

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }

    mutating func encodeNil(forKey key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.null()
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.bool(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.string(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.double(value)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.float(value)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws { try signed(Int64(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try signed(Int64(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try signed(Int64(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try signed(Int64(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try signed(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try unsigned(value, key) }

    mutating func encode(_ value: Int128, forKey key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.int128(value)
    }

    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.uint128(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let index = try state.core.beginItem(serial)
        state.core.writer.key(key)
        try state.encodeItem(value, index: index, depth: depth, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = state.core.nestedContainer(keyed: true, in: serial, depth: depth, key: key, writesKey: true)
        return KeyedEncodingContainer(BinaryKeyedEncoder<NestedKey>(state: state, serial: nested, depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = state.core.nestedContainer(keyed: false, in: serial, depth: depth, key: key, writesKey: true)
        return BinaryUnkeyedEncoder(state: state, serial: nested, depth: depth + 1)
    }

    mutating func superEncoder() -> any Encoder {
        state.superEncoder(in: serial, depth: depth, key: BinarySuperKey(), writesKey: true)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        state.superEncoder(in: serial, depth: depth, key: key, writesKey: true)
    }

    private func signed(_ value: Int64, _ key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.int(value)
    }

    private func unsigned(_ value: UInt64, _ key: Key) throws {
        try state.core.beginEntry(serial, key: key)
        state.core.writer.uint(value)
    }
}
