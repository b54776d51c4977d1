/// Reads a keyed container: `count` entries of key and value, looked up in any order.
struct BinaryKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: BinaryDecodingState
    /// Offset of the container's tag.
    let start: Int
    /// Offset of the first entry.
    let first: Int
    let count: Int
    /// Length of the container's coding path.
    let depth: Int
    /// Identifies this container's cursor in `state.core.cursors[depth]`.
    let serial: Int

    init(state: BinaryDecodingState, start: Int, depth: Int) throws(BinaryCodingError) {
        guard depth <= BinaryCodec.maximumDepth else {
            throw state.core.locate(BinaryReader.tooDeep(), depth: depth, key: BinaryNoKey())
        }
        let header: (count: Int, first: Int)
        do {
            header = try state.core.reader.container(keyed: true, at: start)
        } catch {
            throw state.core.locate(error, depth: depth, key: BinaryNoKey())
        }
        self.state = state
        self.start = start
        first = header.first
        count = header.count
        self.depth = depth
        serial = state.core.newCursor(depth: depth, first: first)
        if count == 0 { state.core.finished(start, end: first) }
    }

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }

    var allKeys: [Key] {
        let reader = state.core.reader
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var offset = first
        for index in 0 ..< count {
            guard let entry = try? reader.key(&offset) else { break }
            switch entry {
            case .int(let value):
                if let key = Key(intValue: value) ?? Key(stringValue: String(value)) { keys.append(key) }
            case .string(let keyStart, let length):
                if let text = reader.text(start: keyStart, count: length), let key = Key(stringValue: text) { keys.append(key) }
            }
            if index + 1 < count {
                guard let next = try? reader.skip(from: offset, depth: depth + 1) else { break }
                offset = next
            }
        }
        return keys
    }

    func contains(_ key: Key) -> Bool {
        ((try? lookup(key)) ?? nil) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let offset = try require(key)
        guard try tag(at: offset, key) == BinaryTag.null else { return false }
        advance(past: offset, end: offset + 1)
        return true
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(type, key) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try value(type, key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try value(type, key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(type, key) }

    // One lookup instead of the default's three (contains, decodeNil, decode).
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }
    func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? { try optional(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let offset = try require(key)
        state.core.setKey(key, at: depth)
        let nested = try BinaryKeyedDecoder<NestedKey>(state: state, start: offset, depth: depth + 1)
        advance(past: offset, end: -1)
        return KeyedDecodingContainer(nested)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let offset = try require(key)
        state.core.setKey(key, at: depth)
        let nested = try BinaryUnkeyedDecoder(state: state, start: offset, depth: depth + 1)
        advance(past: offset, end: -1)
        return nested
    }

    func superDecoder() throws -> any Decoder { try superDecoder(BinarySuperKey()) }

    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder(key) }

    private func superDecoder(_ key: some CodingKey) throws -> any Decoder {
        let offset = try require(key)
        state.core.setKey(key, at: depth)
        advance(past: offset, end: -1)
        return BinaryValueDecoder(state: state, offset: offset, depth: depth + 1)
    }

    private func value<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        let offset = try require(key)
        var end = -1
        let value = try state.decodeValue(T.self, at: offset, depth: depth, key: key, end: &end)
        advance(past: offset, end: end)
        return value
    }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        let found: Int?
        do {
            found = try lookup(key)
        } catch {
            throw state.core.locate(error, depth: depth, key: key)
        }
        guard let offset = found else { return nil }
        if try tag(at: offset, key) == BinaryTag.null {
            advance(past: offset, end: offset + 1)
            return nil
        }
        var end = -1
        let value = try state.decodeValue(T.self, at: offset, depth: depth, key: key, end: &end)
        advance(past: offset, end: end)
        return value
    }

    private func tag(at offset: Int, _ key: Key) throws(BinaryCodingError) -> UInt8 {
        do {
            return try state.core.reader.tag(at: offset)
        } catch {
            throw state.core.locate(error, depth: depth, key: key)
        }
    }
}
