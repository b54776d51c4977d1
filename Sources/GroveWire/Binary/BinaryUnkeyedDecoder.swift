/// Reads an unkeyed container's elements in order.
struct BinaryUnkeyedDecoder: UnkeyedDecodingContainer {
    let state: BinaryDecodingState
    /// Offset of the container's tag.
    let start: Int
    /// Length of the container's coding path.
    let depth: Int
    let elementCount: Int
    private(set) var currentIndex = 0
    /// Offset of the next element; -1 while only `pendingValue`, the start of the element before
    /// it, is known.
    private var offset: Int
    private var pendingValue = -1

    init(state: BinaryDecodingState, start: Int, depth: Int) throws(BinaryCodingError) {
        guard depth <= BinaryCodec.maximumDepth else {
            throw state.core.locate(BinaryReader.tooDeep(), depth: depth, key: BinaryNoKey())
        }
        let header: (count: Int, first: Int)
        do {
            header = try state.core.reader.container(keyed: false, at: start)
        } catch {
            throw state.core.locate(error, depth: depth, key: BinaryNoKey())
        }
        self.state = state
        self.start = start
        self.depth = depth
        elementCount = header.count
        offset = header.first
        if elementCount == 0 { state.core.finished(start, end: offset) }
    }

    var codingPath: [any CodingKey] { state.core.codingPath(depth) }
    var count: Int? { elementCount }
    var isAtEnd: Bool { currentIndex >= elementCount }

    mutating func decodeNil() throws -> Bool {
        let at = try next()
        let tag: UInt8
        do {
            tag = try state.core.reader.tag(at: at)
        } catch {
            throw state.core.locate(error, depth: depth, key: BinaryIndexKey(currentIndex))
        }
        guard tag == BinaryTag.null else { return false }
        advance(end: at + 1)
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try value(type) }
    mutating func decode(_ type: String.Type) throws -> String { try value(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try value(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try value(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try value(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try value(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try value(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try value(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try value(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try value(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try value(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try value(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try value(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try value(type) }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try value(type) }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try value(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try value(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let at = try next()
        state.core.setKey(BinaryIndexKey(currentIndex), at: depth)
        let nested = try BinaryKeyedDecoder<NestedKey>(state: state, start: at, depth: depth + 1)
        advance(end: -1)
        return KeyedDecodingContainer(nested)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let at = try next()
        state.core.setKey(BinaryIndexKey(currentIndex), at: depth)
        let nested = try BinaryUnkeyedDecoder(state: state, start: at, depth: depth + 1)
        advance(end: -1)
        return nested
    }

    mutating func superDecoder() throws -> any Decoder {
        let at = try next()
        state.core.setKey(BinaryIndexKey(currentIndex), at: depth)
        advance(end: -1)
        return BinaryValueDecoder(state: state, offset: at, depth: depth + 1)
    }

    private mutating func value<T: Decodable>(_ type: T.Type) throws -> T {
        let at = try next()
        var end = -1
        let value = try state.decodeValue(T.self, at: at, depth: depth, key: BinaryIndexKey(currentIndex), end: &end)
        advance(end: end)
        return value
    }

    /// The offset of the next element; throws `valueNotFound` at the end.
    private mutating func next() throws(BinaryCodingError) -> Int {
        guard !isAtEnd else {
            var keys = codingPath
            keys.append(BinaryIndexKey(currentIndex))
            throw BinaryCodingError(.valueNotFound, "the unkeyed container has only \(elementCount) elements; the sender sent fewer than this type reads",
                                    path: BinaryCodingError.path(keys))
        }
        if offset < 0 {
            offset = state.core.knownEnd(of: pendingValue)
            if offset < 0 {
                do {
                    offset = try state.core.reader.skip(from: pendingValue, depth: depth + 1)
                } catch {
                    throw state.core.locate(error, depth: depth, key: BinaryIndexKey(currentIndex - 1))
                }
            }
        }
        return offset
    }

    /// - Parameter end: The offset past the element, or -1 when unknown.
    private mutating func advance(end: Int) {
        currentIndex += 1
        if end >= 0 {
            offset = end
            if currentIndex == elementCount { state.core.finished(start, end: end) }
        } else {
            pendingValue = offset
            offset = -1
        }
    }
}
