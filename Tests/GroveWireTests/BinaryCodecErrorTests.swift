import GroveWire
import Testing

/// The error `body` throws, or nil.
private func binaryError<T>(_ body: () throws(BinaryCodingError) -> T) -> BinaryCodingError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

private struct Profile: Codable {
    var name: String
    var age: UInt8
    var tags: [String]
}

private struct ProfileWithoutAge: Codable {
    var name: String
    var tags: [String]
}

private struct Refusing: Encodable {
    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "no"))
    }
}

private struct OwnError: Error {}

private struct ThrowsOwnError: Codable {
    init() {}
    init(from decoder: any Decoder) throws { throw OwnError() }
    func encode(to encoder: any Encoder) throws { throw OwnError() }
}

@Suite("BinaryCodec errors", .timeLimit(.minutes(2)))
struct BinaryCodecErrorTests {
    @Test func typeMismatchNamesThePath() throws {
        let bytes = try BinaryCodec.encode(BinaryFixtureEvent.add(5))
        let error = binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryFixtureWrongEvent.self, from: bytes) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.path == "$.add._0")
        #expect(error?.message.contains("expected String but found a signed integer") == true, "\(String(describing: error))")
    }

    @Test func missingKeyNamesThePathAndTheKeysPresent() throws {
        let bytes = try BinaryCodec.encode(ProfileWithoutAge(name: "a", tags: ["x"]))
        let error = binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(Profile.self, from: bytes) }
        #expect(error?.code == .keyNotFound)
        #expect(error?.path == "$.age")
        #expect(error?.message.contains("'name', 'tags'") == true, "\(String(describing: error))")

        let event = try BinaryCodec.encode(BinaryFixtureEvent.rename(first: "a", last: nil))
        let nested = binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryFixtureWrongEvent.self, from: event) }
        #expect(nested?.code == .keyNotFound)
        #expect(nested?.path == "$.rename.last")
    }

    @Test func nilWhereAValueIsRequired() throws {
        let bytes = try BinaryCodec.encode([1, nil] as [Int?])
        let error = binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode([Int].self, from: bytes) }
        #expect(error?.code == .valueNotFound)
        #expect(error?.path == "$[1]")
    }

    @Test func tooFewElements() throws {
        let bytes = try BinaryCodec.encode([1])
        let error = binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryFixturePair.self, from: bytes) }
        #expect(error?.code == .valueNotFound)
        #expect(error?.path == "$[1]")
    }

    @Test func numbersOutOfRange() throws {
        let bytes = try BinaryCodec.encode(Profile(name: "a", age: 1, tags: []))
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(Int8.self, from: BinaryCodec.encode(300)) }?.code == .numberOutOfRange)
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(UInt.self, from: BinaryCodec.encode(-1)) }?.code == .numberOutOfRange)
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(Float.self, from: BinaryCodec.encode(1e300)) }?.code == .numberOutOfRange)
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(Int.self, from: BinaryCodec.encode(1.5)) }?.code == .typeMismatch)
        #expect(try BinaryCodec.decode(Profile.self, from: bytes).age == 1)
    }

    @Test func truncatedInput() throws {
        let bytes = try BinaryCodec.encode(BinaryFixtureEvent.updateEmail("someone@example.com"))
        let error = binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryFixtureEvent.self, from: bytes.dropLast(3)) }
        #expect(error?.code == .truncated)
        #expect(error?.path == "$.updateEmail._0")
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(Int.self, from: []) }?.code == .truncated)
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(Double.self, from: [0x05, 1, 2]) }?.code == .truncated)
        // A count larger than the rest of the input is refused before anything is allocated.
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode([Int].self, from: [0x08, 0xFF, 0xFF, 0xFF, 0x7F]) }?.code == .truncated)
    }

    @Test func malformedInput() throws {
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(Int.self, from: [0x42]) }?.code == .malformed)
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(String.self, from: [0x07, 0x02, 0xC3, 0x28]) }?.code == .malformed)
        let overlong: [UInt8] = [0x04] + Array(repeating: 0xFF, count: 10) + [0x01]
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(UInt64.self, from: overlong) }?.code == .malformed)
    }

    @Test func trailingBytes() throws {
        var bytes = try BinaryCodec.encode(BinaryFixtureEvent.increment)
        bytes.append(0)
        let error = binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryFixtureEvent.self, from: bytes) }
        #expect(error?.code == .trailingBytes)
        // Also when the type does not read all it was sent.
        let profile = try BinaryCodec.encode(Profile(name: "n", age: 2, tags: ["t"]))
        #expect(try BinaryCodec.decode(ProfileWithoutAge.self, from: profile).tags == ["t"])
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(ProfileWithoutAge.self, from: profile + [0x00]) }?.code == .trailingBytes)
    }

    @Test func nestingBeyondTheLimit() throws {
        var tree = BinaryTree.int(0)
        for _ in 0 ..< BinaryCodec.maximumDepth { tree = .array([tree]) }
        let bytes = try BinaryCodec.encode(tree)
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryTree.self, from: bytes) }?.code == .tooDeep)
        // Hostile input: a long run of one-element arrays.
        let hostile: [UInt8] = (0 ..< 200_000).map { $0.isMultiple(of: 2) ? 0x08 : 0x01 } + [0x00]
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryFixtureNest.self, from: hostile) }?.code == .tooDeep)
        #expect(binaryError { () throws(BinaryCodingError) in try BinaryCodec.decode(BinaryFixtureEmpty.self, from: hostile) }?.code == .tooDeep)
    }

    @Test func errorsOfTheTypesThemselves() throws {
        let refused = binaryError { () throws(BinaryCodingError) in try BinaryCodec.encode(["a": [Refusing()]]) }
        #expect(refused?.code == .invalidValue)
        #expect(refused?.path == "$.a[0]")
        let own = binaryError { () throws(BinaryCodingError) in try BinaryCodec.encode(["b": ThrowsOwnError()]) }
        #expect(own?.code == .failed)
        #expect(own?.path == "$.b")
        let ownDecoding = binaryError { () throws(BinaryCodingError) in
            try BinaryCodec.decode([String: [ThrowsOwnError]].self, from: BinaryCodec.encode(["c": [1]]))
        }
        #expect(ownDecoding?.code == .failed)
        #expect(ownDecoding?.path == "$.c[0]")
        let rawValue = binaryError { () throws(BinaryCodingError) in
            try BinaryCodec.decode([BinaryFixtureColor].self, from: BinaryCodec.encode(["red", "blue"]))
        }
        #expect(rawValue?.code == .dataCorrupted)
        #expect(rawValue?.path == "$[1]")
        let extraKeys = binaryError { () throws(BinaryCodingError) in
            try BinaryCodec.decode(BinaryFixtureEvent.self, from: BinaryCodec.encode(["add": [Int](), "increment": []]))
        }
        #expect(extraKeys?.code == .typeMismatch, "an enum value needs exactly one key")
    }

    @Test func errorsCompareByCodeAndDescribeThemselves() {
        let error = BinaryCodingError(.keyNotFound, "no value for key 'x'", path: "$.a")
        #expect(error == BinaryCodingError(.keyNotFound, "other words", path: "$.b"))
        #expect(error != BinaryCodingError(.truncated, "no value for key 'x'", path: "$.a"))
        #expect(error.description == "key-not-found at $.a: no value for key 'x'")
    }
}

/// `BinaryFixtureEvent` with different associated types, to decode its bytes wrongly.
enum BinaryFixtureWrongEvent: Codable {
    case increment
    case add(String)
    case rename(first: String, last: String)
}

/// Decodes from exactly two array elements.
struct BinaryFixturePair: Decodable {
    var first: Int
    var second: Int
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        first = try container.decode(Int.self)
        second = try container.decode(Int.self)
    }
}

/// Arrays of arrays of arrays, as deep as the input goes.
struct BinaryFixtureNest: Decodable {
    var children: [BinaryFixtureNest] = []
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { children.append(try container.decode(BinaryFixtureNest.self)) }
    }
}
