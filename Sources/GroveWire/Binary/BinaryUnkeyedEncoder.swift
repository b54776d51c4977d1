/// Writes the elements of an unkeyed container.
struct BinaryUnkeyedEncoder: UnkeyedEncodingContainer {
    let state: BinaryEncodingState
    /// The container's serial in `state.core.open`; -1 when it could not be opened.
    let serial: Int
    /// Length of the container's coding path.
    let depth: Int

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }

    var count: Int {
        guard let index = state.core.index(of: serial) else { return 0 }
        return state.core.open[index].count
    }

    mutating func encodeNil() throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.null()
    }

    mutating func encode(_ value: Bool) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.bool(value)
    }

    mutating func encode(_ value: String) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.string(value)
    }

    mutating func encode(_ value: Double) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.double(value)
    }

    mutating func encode(_ value: Float) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.float(value)
    }

    mutating func encode(_ value: Int) throws { try signed(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try signed(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try signed(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try signed(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try signed(value) }
    mutating func encode(_ value: UInt) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try unsigned(value) }

    mutating func encode(_ value: Int128) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.int128(value)
    }

    mutating func encode(_ value: UInt128) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.uint128(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = try state.core.beginItem(serial)
        try state.encodeItem(value, index: index, depth: depth, key: BinaryIndexKey(state.core.open[index].count - 1))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = state.core.nestedContainer(keyed: true, in: serial, depth: depth, key: BinaryIndexKey(count), writesKey: false)
        return KeyedEncodingContainer(BinaryKeyedEncoder<NestedKey>(state: state, serial: nested, depth: depth + 1))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = state.core.nestedContainer(keyed: false, in: serial, depth: depth, key: BinaryIndexKey(count), writesKey: false)
        return BinaryUnkeyedEncoder(state: state, serial: nested, depth: depth + 1)
    }

    mutating func superEncoder() -> any Encoder {
        state.superEncoder(in: serial, depth: depth, key: BinaryIndexKey(count), writesKey: false)
    }

    private func signed(_ value: Int64) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.int(value)
    }

    private func unsigned(_ value: UInt64) throws {
        _ = try state.core.beginItem(serial)
        state.core.writer.uint(value)
    }
}
