import GroveWire
import Testing

// Fixtures shaped like Grove's machines: an event enum, a state struct, arrays of small structs.

enum BinaryFixtureEvent: Codable, Equatable {
    case increment
    case add(Int)
    case updateEmail(String)
    case start(interval: Double)
    case rename(first: String, last: String?)
}

struct BinaryFixtureItem: Codable, Equatable {
    var id: Int
    var name: String
    var done: Bool
}

struct BinaryFixtureState: Codable, Equatable {
    var count: Int
    var email: String
    var verified: Bool
    var score: Double
    var nickname: String?
    var items: [BinaryFixtureItem]
}

enum BinaryFixtureColor: String, Codable {
    case red, green
}

/// Round-trips `value` and checks the result equals it.
func expectBinaryRoundTrip<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let bytes = try BinaryCodec.encode(value)
    let decoded = try BinaryCodec.decode(T.self, from: bytes)
    #expect(decoded == value, sourceLocation: sourceLocation)
}

@Suite("BinaryCodec round trips", .timeLimit(.minutes(2)))
struct BinaryCodecTests {
    @Test func documentedLayoutOfAnEnumCase() throws {
        // keyed(1) "add": keyed(1) "_0": int zigzag(5) — as in docs/BINARY.md.
        #expect(try BinaryCodec.encode(BinaryFixtureEvent.add(5))
            == [0x09, 0x01, 0x06, 0x61, 0x64, 0x64, 0x09, 0x01, 0x04, 0x5F, 0x30, 0x03, 0x0A])
        #expect(try BinaryCodec.encode(-1) == [0x03, 0x01])
        #expect(try BinaryCodec.encode(UInt8(200)) == [0x04, 0xC8, 0x01])
        #expect(try BinaryCodec.encode("é") == [0x07, 0x02, 0xC3, 0xA9])
        #expect(try BinaryCodec.encode([true, false]) == [0x08, 0x02, 0x02, 0x01])
        #expect(try BinaryCodec.encode(1.0) == [0x05, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(try BinaryCodec.encode([7: "x"]) == [0x09, 0x01, 0x1D, 0x07, 0x01, 0x78])
    }

    @Test func enumsWithAndWithoutAssociatedValues() throws {
        for event in [BinaryFixtureEvent.increment, .add(-3), .add(.max), .updateEmail("a@b.c"), .updateEmail(""),
                      .start(interval: 0.25), .rename(first: "Ada", last: nil), .rename(first: "Ada", last: "L")] {
            try expectBinaryRoundTrip(event)
        }
    }

    @Test func structsAndArraysOfStructs() throws {
        let state = BinaryFixtureState(count: 3, email: "x@y.z", verified: true, score: -1.5, nickname: nil,
                                       items: (0 ..< 5).map { BinaryFixtureItem(id: $0, name: "item \($0)", done: $0.isMultiple(of: 2)) })
        try expectBinaryRoundTrip(state)
        var named = state
        named.nickname = "ace"
        try expectBinaryRoundTrip(named)
        try expectBinaryRoundTrip([state, named])
        try expectBinaryRoundTrip([BinaryFixtureItem]())
    }

    @Test func integersAtTheirLimits() throws {
        try expectBinaryRoundTrip([Int.min, -1, 0, 1, Int.max])
        try expectBinaryRoundTrip([Int8.min, Int8.max])
        try expectBinaryRoundTrip([Int16.min, Int16.max])
        try expectBinaryRoundTrip([Int32.min, Int32.max])
        try expectBinaryRoundTrip([Int64.min, -(1 << 62), 1 << 62, Int64.max])
        try expectBinaryRoundTrip([UInt.min, UInt.max])
        try expectBinaryRoundTrip([UInt8.max, 0x80, 0x7F])
        try expectBinaryRoundTrip([UInt16.max])
        try expectBinaryRoundTrip([UInt32.max])
        try expectBinaryRoundTrip([UInt64.min, 1 << 63, UInt64.max])
        #expect(try BinaryCodec.encode(UInt64.max).count == 11)
        #expect(try BinaryCodec.encode(Int64.min).count == 11)
    }

    @Test func integersOf128Bits() throws {
        try expectBinaryRoundTrip([Int128.min, Int128(Int64.min) - 1, -1, 0, Int128(Int64.max) + 1, Int128.max])
        try expectBinaryRoundTrip([UInt128.min, UInt128(UInt64.max) + 1, UInt128.max])
        try expectBinaryRoundTrip(BinaryFixtureWide(signed: .min, unsigned: .max, small: 3))
        // Within 64 bits they are ordinary integers, interchangeable with Int64 and UInt64.
        #expect(try BinaryCodec.encode(Int128(5)) == BinaryCodec.encode(Int64(5)))
        #expect(try BinaryCodec.decode(Int128.self, from: BinaryCodec.encode(Int64.min)) == Int128(Int64.min))
        #expect(try BinaryCodec.decode(UInt64.self, from: BinaryCodec.encode(UInt128(7))) == 7)
        #expect(try BinaryCodec.encode(Int128.max).count == 17)
        #expect(try BinaryCodec.decode(Double.self, from: BinaryCodec.encode(UInt128(1) << 100)) == 0x1p100)
        #expect(throws: BinaryCodingError(.numberOutOfRange, "")) {
            try BinaryCodec.decode(Int64.self, from: BinaryCodec.encode(Int128(Int64.max) + 1))
        }
    }

    @Test func floatingPointIncludingWhatJSONCannot() throws {
        try expectBinaryRoundTrip([0.0, 1.5, -2.25, .pi, .ulpOfOne, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, -.infinity])
        try expectBinaryRoundTrip([Float(0), 3.5, .infinity, -.infinity, .leastNonzeroMagnitude])
        let nan = try BinaryCodec.decode(Double.self, from: BinaryCodec.encode(Double.nan))
        #expect(nan.isNaN)
        let floatNaN = try BinaryCodec.decode([Float].self, from: BinaryCodec.encode([Float.nan]))
        #expect(floatNaN.first?.isNaN == true)
        let negativeZero = try BinaryCodec.decode(Double.self, from: BinaryCodec.encode(-0.0))
        #expect(negativeZero.sign == .minus)
    }

    @Test func numbersWidenLikeJSON() throws {
        #expect(try BinaryCodec.decode(Double.self, from: BinaryCodec.encode(7)) == 7)
        #expect(try BinaryCodec.decode(Double.self, from: BinaryCodec.encode(Float(2.5))) == 2.5)
        #expect(try BinaryCodec.decode(Float.self, from: BinaryCodec.encode(2.5)) == 2.5)
        #expect(try BinaryCodec.decode(Int8.self, from: BinaryCodec.encode(UInt64(100))) == 100)
        #expect(try BinaryCodec.decode(UInt.self, from: BinaryCodec.encode(42)) == 42)
    }

    @Test func strings() throws {
        try expectBinaryRoundTrip(["", "a", "héllo", "日本語", "🧑‍🚀 e\u{301}", "\0nul", String(repeating: "long ", count: 100)])
        let bytes = try BinaryCodec.encode(String(repeating: "x", count: 300))
        #expect(Array(bytes.prefix(3)) == [0x07, 0xAC, 0x02])
    }

    @Test func optionals() throws {
        try expectBinaryRoundTrip([1, nil, 3] as [Int?])
        try expectBinaryRoundTrip(["a": nil, "b": "x"] as [String: String?])
        try expectBinaryRoundTrip(Int?.none)
        try expectBinaryRoundTrip(Int?.some(4))
        try expectBinaryRoundTrip(BinaryFixtureOptionals(a: nil, b: 2, c: nil, d: [nil, "x"]))
        try expectBinaryRoundTrip(BinaryFixtureOptionals(a: 1, b: nil, c: .green, d: nil))
    }

    @Test func nestedArraysAndDictionaries() throws {
        try expectBinaryRoundTrip([[1, 2], [], [3]])
        try expectBinaryRoundTrip([[[String]]]([[["a"]], [[]], []]))
        try expectBinaryRoundTrip(["x": [1, 2], "": [], "ünï": [3]])
        try expectBinaryRoundTrip([7: "seven", -1: "minus one", 0: "", Int.max: "max", Int.min: "min"])
        try expectBinaryRoundTrip(["outer": ["inner": [1.5]]])
        try expectBinaryRoundTrip([String: Int]())
        try expectBinaryRoundTrip([BinaryFixtureColor.red: 1, .green: 2])
    }

    @Test func containersOfAHundredAndTwentyEightItemsAndMore() throws {
        // Counts of 128 and more do not fit the one-byte placeholder: the encoder moves the contents.
        let matrix = (0 ..< 200).map { row in (0 ..< (row % 3 == 0 ? 130 : 5)).map { row * 1000 + $0 } }
        try expectBinaryRoundTrip(matrix)
        let dictionary = Dictionary(uniqueKeysWithValues: (0 ..< 300).map { ("key\($0)", [$0, -$0]) })
        try expectBinaryRoundTrip(dictionary)
        try expectBinaryRoundTrip(Array(repeating: BinaryFixtureEvent.add(1), count: 20_000))
    }

    @Test func rawRepresentableAndTopLevelScalars() throws {
        try expectBinaryRoundTrip(BinaryFixtureColor.green)
        try expectBinaryRoundTrip(true)
        try expectBinaryRoundTrip("top")
        try expectBinaryRoundTrip(Int16(-7))
    }

    @Test func deepNesting() throws {
        var tree = BinaryTree.int(1)
        // Three containers a level (case, `_0`, array or dictionary): 160 levels is 480 deep.
        for level in 0 ..< 160 { tree = level.isMultiple(of: 2) ? .array([tree, .string("\(level)")]) : .dict(["k": tree]) }
        try expectBinaryRoundTrip(tree)
    }

    @Test func appendsToABufferAndDecodesSlices() throws {
        var buffer: [UInt8] = [0xFF]
        try BinaryCodec.encode(BinaryFixtureEvent.add(1), into: &buffer)
        let firstEnd = buffer.count
        try BinaryCodec.encode(BinaryFixtureEvent.updateEmail("m"), into: &buffer)
        #expect(buffer.first == 0xFF)
        #expect(try BinaryCodec.decode(BinaryFixtureEvent.self, from: buffer[1 ..< firstEnd]) == .add(1))
        #expect(try BinaryCodec.decode(BinaryFixtureEvent.self, from: buffer[firstEnd...]) == .updateEmail("m"))
        #expect(Array(buffer[1 ..< firstEnd]) == (try BinaryCodec.encode(BinaryFixtureEvent.add(1))))
    }
}

struct BinaryFixtureOptionals: Codable, Equatable {
    var a: Int?
    var b: Double?
    var c: BinaryFixtureColor?
    var d: [String?]?
}

struct BinaryFixtureWide: Codable, Equatable {
    var signed: Int128
    var unsigned: UInt128?
    var small: Int128
}
