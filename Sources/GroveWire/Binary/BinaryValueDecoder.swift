/// The `Decoder` for the value at one offset of the input. Three words: it travels inside
/// `any Decoder` without an allocation.
struct BinaryValueDecoder: Decoder {
    let state: BinaryDecodingState
    let offset: Int
    /// Length of the coding path.
    let depth: Int

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try BinaryKeyedDecoder<Key>(state: state, start: offset, depth: depth))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try BinaryUnkeyedDecoder(state: state, start: offset, depth: depth)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecoder(state: state, offset: offset, depth: depth)
    }
}

/// Reads the one value at an offset.
struct BinarySingleValueDecoder: SingleValueDecodingContainer {
    let state: BinaryDecodingState
    let offset: Int
    let depth: Int

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }

    func decodeNil() -> Bool {
        guard (try? state.core.reader.tag(at: offset)) == BinaryTag.null else { return false }
        state.core.finished(offset, end: offset + 1)
        return true
    }

    func decode(_ type: Bool.Type) throws -> Bool { try value(type) }
    func decode(_ type: String.Type) throws -> String { try value(type) }
    func decode(_ type: Double.Type) throws -> Double { try value(type) }
    func decode(_ type: Float.Type) throws -> Float { try value(type) }
    func decode(_ type: Int.Type) throws -> Int { try value(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try value(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try value(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try value(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try value(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try value(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try value(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try value(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try value(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try value(type) }
    func decode(_ type: Int128.Type) throws -> Int128 { try value(type) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try value(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try value(type) }

    private func value<T: Decodable>(_ type: T.Type) throws -> T {
        var end = -1
        let value = try state.decodeValue(T.self, at: offset, depth: depth, key: BinaryNoKey(), end: &end)
        if end >= 0 { state.core.finished(offset, end: end) }
        return value
    }
}
