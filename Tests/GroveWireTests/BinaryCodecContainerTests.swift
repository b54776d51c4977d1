import GroveWire
import Testing

// Hand-written Codable conformances that use the corners of the container API.

class BinaryFixtureAnimal: Codable, @unchecked Sendable {
    var name: String
    init(name: String) { self.name = name }
    private enum CodingKeys: String, CodingKey { case name }
}

/// Encodes its superclass into `superEncoder()`, as Apple's documentation suggests.
final class BinaryFixtureDog: BinaryFixtureAnimal, @unchecked Sendable {
    var goodBoy: Bool
    init(name: String, goodBoy: Bool) {
        self.goodBoy = goodBoy
        super.init(name: name)
    }
    private enum CodingKeys: String, CodingKey { case goodBoy }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        goodBoy = try container.decode(Bool.self, forKey: .goodBoy)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(goodBoy, forKey: .goodBoy)
        try super.encode(to: container.superEncoder())
    }
}

/// Shares its encoder with its superclass: two requests for the same keyed container.
final class BinaryFixtureCat: BinaryFixtureAnimal, @unchecked Sendable {
    var lives: Int
    init(name: String, lives: Int) {
        self.lives = lives
        super.init(name: name)
    }
    private enum CodingKeys: String, CodingKey { case lives }
    required init(from decoder: any Decoder) throws {
        lives = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .lives)
        try super.init(from: decoder)
    }
    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lives, forKey: .lives)
    }
}

/// Writes explicit nils and nested containers; reads its keys backwards.
struct BinaryFixtureManual: Codable, Equatable {
    var first: Int
    var missing: String?
    var list: [Int]
    var inner: [String: Bool]

    enum CodingKeys: String, CodingKey { case first, missing, list, inner, extra }
    enum InnerKeys: String, CodingKey { case flag }

    init(first: Int, missing: String?, list: [Int], inner: [String: Bool]) {
        self.first = first
        self.missing = missing
        self.list = list
        self.inner = inner
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(first, forKey: .first)
        try container.encodeNil(forKey: .missing)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        for element in self.list { try list.encode(element) }
        var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        if let flag = self.inner["flag"] { try inner.encode(flag, forKey: .flag) }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        #expect(container.allKeys == [.first, .missing, .list, .inner])
        #expect(!container.contains(.extra))
        let innerContainer = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        inner = [:]
        if let flag = try innerContainer.decodeIfPresent(Bool.self, forKey: .flag) { inner["flag"] = flag }
        var listContainer = try container.nestedUnkeyedContainer(forKey: .list)
        let expectedCount = try container.decode(Int.self, forKey: .first)
        #expect(listContainer.count == expectedCount)
        list = []
        while !listContainer.isAtEnd { list.append(try listContainer.decode(Int.self)) }
        #expect(try container.decodeNil(forKey: .missing))
        missing = try container.decodeIfPresent(String.self, forKey: .missing)
        first = try container.decode(Int.self, forKey: .first)
    }
}

/// CodingKeys with integer values: written as integer keys.
struct BinaryFixtureIntKeys: Codable, Equatable {
    var a: String
    var b: Int
    enum CodingKeys: Int, CodingKey { case a = 1, b = -2 }
}

/// Keeps a nested container and writes to it after writing to its parent.
struct BinaryFixtureInterleaved: Encodable {
    enum CodingKeys: String, CodingKey { case list, after }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        try list.encode(1)
        try container.encode(2, forKey: .after)
        try list.encode(3)
    }
}

/// An array of mixed elements written through an unkeyed container's nested containers.
struct BinaryFixtureRow: Codable, Equatable {
    var label: String
    var pair: [Int]
    var flag: Bool?
    var inner: Int

    enum LabelKey: String, CodingKey { case label }

    init(label: String, pair: [Int], flag: Bool?, inner: Int) {
        self.label = label
        self.pair = pair
        self.flag = flag
        self.inner = inner
    }

    func encode(to encoder: any Encoder) throws {
        var row = encoder.unkeyedContainer()
        var labelled = row.nestedContainer(keyedBy: LabelKey.self)
        try labelled.encode(label, forKey: .label)
        var pairContainer = row.nestedUnkeyedContainer()
        for element in pair { try pairContainer.encode(element) }
        if let flag { try row.encode(flag) } else { try row.encodeNil() }
        try inner.encode(to: row.superEncoder())
        #expect(row.count == 4)
    }

    init(from decoder: any Decoder) throws {
        var row = try decoder.unkeyedContainer()
        #expect(row.count == 4)
        label = try row.nestedContainer(keyedBy: LabelKey.self).decode(String.self, forKey: .label)
        var pairContainer = try row.nestedUnkeyedContainer()
        pair = []
        while !pairContainer.isAtEnd { pair.append(try pairContainer.decode(Int.self)) }
        flag = try row.decodeNil() ? nil : try row.decode(Bool.self)
        inner = try Int(from: row.superDecoder())
        #expect(row.isAtEnd)
    }
}

/// Encodes nothing at all.
struct BinaryFixtureEmpty: Codable, Equatable {
    func encode(to encoder: any Encoder) throws {}
    init() {}
    init(from decoder: any Decoder) throws {}
}

@Suite("BinaryCodec containers", .timeLimit(.minutes(2)))
struct BinaryCodecContainerTests {
    @Test func classesThroughSuperEncoder() throws {
        let dog = try BinaryCodec.decode(BinaryFixtureDog.self, from: BinaryCodec.encode(BinaryFixtureDog(name: "Rex", goodBoy: true)))
        #expect(dog.name == "Rex")
        #expect(dog.goodBoy)
    }

    @Test func classesSharingTheirEncoder() throws {
        let bytes = try BinaryCodec.encode(BinaryFixtureCat(name: "Tom", lives: 9))
        #expect(bytes.prefix(2) == [0x09, 0x02], "one keyed container with both entries")
        let cat = try BinaryCodec.decode(BinaryFixtureCat.self, from: bytes)
        #expect(cat.name == "Tom")
        #expect(cat.lives == 9)
    }

    @Test func explicitNilsNestedContainersAndKeysInAnyOrder() throws {
        try expectBinaryRoundTrip(BinaryFixtureManual(first: 3, missing: nil, list: [4, 5, 6], inner: ["flag": true]))
        try expectBinaryRoundTrip(BinaryFixtureManual(first: 0, missing: nil, list: [], inner: [:]))
    }

    @Test func nestedContainersOfUnkeyedContainers() throws {
        try expectBinaryRoundTrip(BinaryFixtureRow(label: "a", pair: [1, 2], flag: nil, inner: 3))
        try expectBinaryRoundTrip([BinaryFixtureRow(label: "", pair: [], flag: true, inner: -1),
                                   BinaryFixtureRow(label: "b", pair: Array(0 ..< 200), flag: false, inner: 0)])
    }

    @Test func integerCodingKeysKeepTheirNames() throws {
        let value = BinaryFixtureIntKeys(a: "x", b: 2)
        let bytes = try BinaryCodec.encode(value)
        #expect(bytes == [0x09, 0x02, 0x02, 0x61, 0x07, 0x01, 0x78, 0x02, 0x62, 0x03, 0x04], "string keys 'a' and 'b', as JSON")
        try expectBinaryRoundTrip(value)
    }

    @Test func stringKeysThatLookLikeIntegers() throws {
        // "5" is written as the integer key 5 (one byte); "007", "+5" and "-0" stay strings.
        let value = ["5": 1, "007": 2, "+5": 3, "-0": 4, "-12": 5, "x": 6]
        try expectBinaryRoundTrip(value)
        #expect(try BinaryCodec.encode(["5": true]) == [0x09, 0x01, 0x15, 0x02])
        #expect(try BinaryCodec.decode([String: Int].self, from: BinaryCodec.encode([5: 1, -3: 2])) == ["5": 1, "-3": 2])
        #expect(try BinaryCodec.decode([Int: Int].self, from: BinaryCodec.encode(["5": 1, "-3": 2])) == [5: 1, -3: 2])
    }

    @Test func superEncoderThatEncodesNothingLeavesAValidMessage() throws {
        struct Wrapper: Codable, Equatable {
            var value: Int
            enum CodingKeys: String, CodingKey { case value }
            init(value: Int) { self.value = value }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                _ = container.superEncoder()
                try container.encode(value, forKey: .value)
            }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                #expect(container.allKeys.count == 1, "super is not one of CodingKeys")
                value = try container.decode(Int.self, forKey: .value)
                _ = try BinaryFixtureEmpty(from: container.superDecoder())
            }
        }
        try expectBinaryRoundTrip(Wrapper(value: 5))
        try expectBinaryRoundTrip([BinaryFixtureEmpty(), BinaryFixtureEmpty()])
        #expect(try BinaryCodec.encode(BinaryFixtureEmpty()) == [0x09, 0x00])
    }

    @Test func writingToAContainerAfterItsParentMovedOnThrows() throws {
        #expect {
            try BinaryCodec.encode(BinaryFixtureInterleaved())
        } throws: { error in
            (error as? BinaryCodingError)?.code == .unsupported
        }
        var buffer: [UInt8] = [1, 2, 3]
        #expect(throws: BinaryCodingError(.unsupported, "")) {
            try BinaryCodec.encode([BinaryFixtureInterleaved()], into: &buffer)
        }
        #expect(buffer == [1, 2, 3], "a failed encode leaves the buffer as it was")
    }

    @Test func codingPathsSeenByTheTypes() throws {
        let value = ["outer": [BinaryFixturePathProbe(), BinaryFixturePathProbe()]]
        let bytes = try BinaryCodec.encode(value)
        // Each probe encoded the path it saw while encoding...
        #expect(try BinaryCodec.decode([String: [String]].self, from: bytes) == ["outer": ["$.outer[0]", "$.outer[1]"]])
        // ...and records the path it sees while decoding.
        let decoded = try BinaryCodec.decode([String: [BinaryFixturePathProbe]].self, from: bytes)
        #expect(decoded["outer"]?.map(\.encodedAt) == ["$.outer[0]", "$.outer[1]"])
        #expect(decoded["outer"]?.map(\.decodedAt) == ["$.outer[0]", "$.outer[1]"])
    }
}

/// Encodes the coding path it is encoded at; remembers the one it is decoded at.
struct BinaryFixturePathProbe: Codable {
    var encodedAt = ""
    var decodedAt = ""

    init() {}

    init(from decoder: any Decoder) throws {
        decodedAt = Self.render(decoder.codingPath)
        encodedAt = try decoder.singleValueContainer().decode(String.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Self.render(encoder.codingPath))
    }

    static func render(_ keys: [any CodingKey]) -> String {
        keys.reduce("$") { text, key in
            if let index = key.intValue { return text + "[\(index)]" }
            return text + "." + key.stringValue
        }
    }
}
