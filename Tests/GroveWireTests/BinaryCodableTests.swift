import Foundation
@testable import GroveWire
import Testing

// Every shape @BinaryCodable generates code for. The tests hold the generated code to the
// synthesized Codable conformance: the same bytes out, the same values (or errors) in.

@BinaryCodable
enum CodableShapesEvent: Codable, Equatable {
    case increment
    case add(Int)
    case pair(Int8, UInt64)
    case rename(first: String, last: String?)
    case mixed(Double, label: Float, Bool)
    case nested(CodableShapesState)
    case many([String], [String: Int])
    case mode(CodableShapesMode)
    case `default`(level: Int?)
}

@BinaryCodable
struct CodableShapesState: Codable, Equatable {
    var name: String
    var count: Int = 0
    var ratio: Double
    var small: Int16, flags: UInt8
    var wide: UInt32
    var note: String?
    var maybe: Optional<Int64>
    var tags: [String]
    var inner: CodableShapesInner?
    let id: UInt
    var `protocol`: Bool {
        didSet { _ = oldValue }
    }
    var computed: Int { count * 2 }
    static let shared = 0
}

@BinaryCodable
struct CodableShapesInner: Codable, Equatable {
    var level: Int32
    var mode: CodableShapesMode
}

@BinaryCodable
enum CodableShapesMode: String, Codable, Equatable {
    case fast, careful = "slow"
}

@BinaryCodable
enum CodableShapesPriority: Int, Codable, Equatable {
    case low = 1, high = 10
}

@BinaryCodable
struct CodableShapesEmpty: Codable, Equatable {}

typealias CodableShapesMaybe = Int?

/// What a reading of the declaration's text could get wrong: optionals behind a typealias or
/// spelled `Swift.Optional`, qualified and 128-bit raw types, raw identifiers, keyword labels.
@BinaryCodable
struct CodableShapesSpelling: Codable, Equatable {
    var maybe: CodableShapesMaybe
    var qualified: Swift.Optional<String>
    var `my key`: Int
    var `a+b`: Bool
    @usableFromInline var old: Int = 0 // an attribute of the language, not a wrapper
    var wide: CodableShapesWide
    var named: CodableShapesNamed
    var labelled: CodableShapesLabels
}

@BinaryCodable
enum CodableShapesWide: Int128, Codable, Equatable {
    case small = 4, huge = 170141183460469231731687303715884105727
}

@BinaryCodable
enum CodableShapesNamed: Swift.String, Codable, Equatable {
    case a, b = "bee"
}

@BinaryCodable
enum CodableShapesLabels: Codable, Equatable {
    case `default`(`class`: Int, `in`: String?)
}

/// An isolated type: its generated members are nonisolated, as synthesized Codable's are.
@MainActor
@BinaryCodable
struct CodableShapesIsolated: Codable, Equatable, Sendable {
    var a: Int
}

/// A field JSONEncoder writes its own way: WireJSON must hand the value to Foundation.
@BinaryCodable
struct CodableShapesStamped: Codable, Equatable {
    var name: String
    var at: Date
    var blob: Data
}

@BinaryCodable
struct CodableShapesTally: Codable, Equatable {
    var counts: [String: Int]
}

/// Keys renamed in an extension: invisible to the macro, caught by the debug build's check.
@BinaryCodable
struct CodableShapesRenamed: Codable {
    var a: Int
}

extension CodableShapesRenamed {
    enum CodingKeys: String, CodingKey { case a = "A" }
}

/// The same with an optional field: the generated decoder reads Codable's bytes without an
/// error (the key it knows is missing, so nil), which only the debug check catches.
@BinaryCodable
struct CodableShapesRenamedOptional: Codable {
    var a: Int?
}

extension CodableShapesRenamedOptional {
    enum CodingKeys: String, CodingKey { case a = "A" }
}

extension BinaryValueSource {
    mutating func shapesState(depth: Int = 0) -> CodableShapesState {
        CodableShapesState(
            name: string(), count: Int(int()), ratio: double(), small: Int16.random(in: .min ... .max, using: &random),
            flags: UInt8.random(in: 0 ... 255, using: &random), wide: UInt32.random(in: 0 ... .max, using: &random),
            note: Bool.random(using: &random) ? nil : string(), maybe: Bool.random(using: &random) ? nil : int(),
            tags: (0 ..< Int.random(in: 0 ..< 3, using: &random)).map { _ in string() },
            inner: Bool.random(using: &random) ? nil : CodableShapesInner(level: Int32.random(in: .min ... .max, using: &random), mode: mode()),
            id: UInt(random.next() >> 1), protocol: Bool.random(using: &random))
    }

    mutating func mode() -> CodableShapesMode { Bool.random(using: &random) ? .fast : .careful }

    mutating func shapesEvent() -> CodableShapesEvent {
        switch Int.random(in: 0 ..< 9, using: &random) {
        case 0: .increment
        case 1: .add(Int(int()))
        case 2: .pair(Int8.random(in: .min ... .max, using: &random), random.next())
        case 3: .rename(first: string(), last: Bool.random(using: &random) ? nil : string())
        case 4: .mixed(double(), label: Float(Double.random(in: -1e6 ... 1e6, using: &random)), Bool.random(using: &random))
        case 5: .nested(shapesState())
        case 6: .many([string(), string()], [string(): Int(int())])
        case 7: .mode(mode())
        default: .default(level: Bool.random(using: &random) ? nil : Int(int()))
        }
    }
}

/// The Codable path alone, for comparison.
private func throughCodable<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) -> Result<T, BinaryCodingError> {
    Result { () throws(BinaryCodingError) -> T in
        try bytes.withUnsafeBufferPointer { buffer throws(BinaryCodingError) in try BinaryCodec.decodeThroughCodable(T.self, from: buffer) }
    }
}

private func generated<T: BinaryCodable>(_ type: T.Type, _ bytes: [UInt8]) -> T? {
    bytes.withUnsafeBufferPointer { buffer in
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { slot in
            T.decodeGenerated(from: buffer, into: slot.baseAddress!) ? slot.baseAddress!.move() : nil
        }
    }
}

private func codableBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
    var bytes: [UInt8] = []
    try BinaryCodec.encodeThroughCodable(value, into: &bytes)
    return bytes
}

@Suite("@BinaryCodable", .timeLimit(.minutes(2)))
struct BinaryCodableTests {
    @Test("generated encoding writes exactly the bytes Codable writes, and generated decoding reads them back")
    func generatedMatchesCodable() throws {
        var source = BinaryValueSource(seed: 0xB1_4A_2F)
        for _ in 0 ..< 2_000 {
            let event = source.shapesEvent()
            let bytes = try BinaryCodec.encode(event)
            #expect(bytes == (try codableBytes(event)), "\(event)")
            #expect(generated(CodableShapesEvent.self, bytes) == event, "\(event)")
            let state = source.shapesState()
            let stateBytes = try BinaryCodec.encode(state)
            #expect(stateBytes == (try codableBytes(state)), "\(state)")
            #expect(generated(CodableShapesState.self, stateBytes) == state, "\(state)")
        }
        for value in [CodableShapesPriority.low, .high] {
            #expect(try BinaryCodec.encode(value) == (try codableBytes(value)))
            #expect(generated(CodableShapesPriority.self, try BinaryCodec.encode(value)) == value)
        }
        #expect(try BinaryCodec.encode(CodableShapesEmpty()) == (try codableBytes(CodableShapesEmpty())))
        #expect(generated(CodableShapesEmpty.self, try BinaryCodec.encode(CodableShapesEmpty())) == CodableShapesEmpty())
    }

    @Test("optionals behind a typealias, qualified and 128-bit raw types, raw identifiers and keyword labels code as Codable does")
    func spellings() throws {
        let values = [
            CodableShapesSpelling(maybe: nil, qualified: nil, `my key`: 1, `a+b`: true, wide: .huge, named: .a,
                                  labelled: .default(class: 2, in: nil)),
            CodableShapesSpelling(maybe: 5, qualified: "q", `my key`: -1, `a+b`: false, wide: .small, named: .b,
                                  labelled: .default(class: 0, in: "x")),
        ]
        for value in values {
            let bytes = try BinaryCodec.encode(value)
            #expect(bytes == (try codableBytes(value)))
            #expect(generated(CodableShapesSpelling.self, bytes) == value)
        }
    }

    @Test("WireJSON writes generated types byte for byte as JSONEncoder does, Date and Data fields included")
    func jsonThroughGeneratedCoding() throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var source = BinaryValueSource(seed: 0x15_0E)
        // Both, or neither, succeed (JSON has no infinities).
        func same(_ value: some Encodable) -> Bool {
            (try? WireJSON.encode(value)) == (try? foundation.encode(value)).map { Array($0) }
        }
        for _ in 0 ..< 300 {
            let event = source.shapesEvent()
            #expect(same(event), "\(event)")
            let state = source.shapesState()
            #expect(same(state), "\(state)")
        }
        let stamped = CodableShapesStamped(name: "n", at: Date(timeIntervalSince1970: 1_795_000_000), blob: Data([1, 2, 3]))
        #expect(try WireJSON.encode(stamped) == Array(try foundation.encode(stamped)))
        #expect(throws: BinaryCodingError.self) { try BinaryCodec.encode(stamped, refusing: WireJSON.encodesItsOwnWay) }
    }

    @Test("a main-actor type codes as Codable does")
    @MainActor
    func isolatedAndUntyped() throws {
        let value = CodableShapesIsolated(a: 7)
        let bytes = try BinaryCodec.encode(value)
        #expect(bytes == (try codableBytes(value)))
        #expect(generated(CodableShapesIsolated.self, bytes) == value)
    }

    #if DEBUG
    @Test("a type whose Codable coding is not the synthesized one stops a debug build at its first encoding or decoding")
    func debugCheckCatchesHiddenCodingKeys() async {
        await #expect(processExitsWith: .failure) {
            _ = try? BinaryCodec.encode(CodableShapesRenamed(a: 1))
        }
        await #expect(processExitsWith: .failure) {
            var bytes: [UInt8] = []
            try? BinaryCodec.encodeThroughCodable(CodableShapesRenamedOptional(a: 1), into: &bytes)
            _ = try? BinaryCodec.decode(CodableShapesRenamedOptional.self, from: bytes)
        }
    }

    @Test("the debug check passes types with dictionaries, whose order differs between equal values")
    func debugCheckIgnoresDictionaryOrder() throws {
        // CodableShapesTally is used only here: its first encoding and decoding are checked.
        let value = CodableShapesTally(counts: Dictionary(uniqueKeysWithValues: (0 ..< 64).map { ("key \($0)", $0) }))
        let bytes = try BinaryCodec.encode(value)
        #expect(try BinaryCodec.decode(CodableShapesTally.self, from: bytes) == value)
    }
    #endif

    @Test("damaged bytes decode to what Codable decodes them to, value or error")
    func damagedBytesAgreeWithCodable() throws {
        var source = BinaryValueSource(seed: 0xDA_4A_6E)
        var generatedAccepted = 0
        for round in 0 ..< 3_000 {
            var bytes = round % 2 == 0 ? try BinaryCodec.encode(source.shapesEvent()) : try BinaryCodec.encode(source.shapesState())
            switch Int.random(in: 0 ..< 4, using: &source.random) {
            case 0: bytes[Int.random(in: 0 ..< bytes.count, using: &source.random)] = UInt8.random(in: 0 ... 255, using: &source.random)
            case 1: bytes.removeLast(Int.random(in: 1 ... bytes.count, using: &source.random))
            case 2: bytes.insert(UInt8.random(in: 0 ... 12, using: &source.random), at: Int.random(in: 0 ... bytes.count, using: &source.random))
            default: bytes[Int.random(in: 0 ..< bytes.count, using: &source.random)] ^= 1 << UInt8.random(in: 0 ..< 8, using: &source.random)
            }
            if round % 2 == 0 {
                try expectAgreement(CodableShapesEvent.self, bytes, &generatedAccepted)
            } else {
                try expectAgreement(CodableShapesState.self, bytes, &generatedAccepted)
            }
        }
        // Some damage leaves a valid value (a changed digit or letter): those went the generated way.
        #expect(generatedAccepted > 100)
    }

    private func expectAgreement<T: BinaryCodable & Equatable>(_ type: T.Type, _ bytes: [UInt8], _ accepted: inout Int) throws {
        let codable = throughCodable(T.self, bytes)
        let decoded = Result { () throws(BinaryCodingError) -> T in try BinaryCodec.decode(T.self, from: bytes) }
        switch (codable, decoded) {
        case (.success(let expected), .success(let value)):
            // Compared by encoding: damage can make a NaN, which is not equal to itself.
            #expect(try BinaryCodec.encode(value) == (try BinaryCodec.encode(expected)), "\(bytes)")
        case (.failure(let expected), .failure(let error)):
            #expect(error.code == expected.code && error.path == expected.path, "\(bytes): \(error) vs \(expected)")
        default:
            Issue.record("Codable gave \(codable), BinaryCodec gave \(decoded) for \(bytes)")
        }
        if let fast = generated(T.self, bytes) {
            accepted += 1
            if case .success(let expected) = codable {
                #expect(try BinaryCodec.encode(fast) == (try BinaryCodec.encode(expected)), "\(bytes)")
            } else {
                Issue.record("generated code accepted \(bytes) as \(fast); Codable gives \(codable)")
            }
        }
    }

    @Test("a case without values, extra keys, keys in another order and unknown keys read as Codable reads them")
    func unusualButValidInput() throws {
        // {"increment": {"x": 1}}: Codable ignores what the case's container holds.
        let increment: [UInt8] = [0x09, 0x01, 0x12] + Array("increment".utf8) + [0x09, 0x01, 0x02, UInt8(ascii: "x"), 0x03, 0x02]
        #expect(throughCodable(CodableShapesEvent.self, increment) == .success(.increment))
        #expect(generated(CodableShapesEvent.self, increment) == .increment)
        // {"add": {"y": true, "_0": 5}}
        let add: [UInt8] = [0x09, 0x01, 0x06] + Array("add".utf8) + [0x09, 0x02, 0x02, UInt8(ascii: "y"), 0x02, 0x04] + Array("_0".utf8) + [0x03, 0x0A]
        #expect(generated(CodableShapesEvent.self, add) == .add(5))
        #expect(throughCodable(CodableShapesEvent.self, add) == .success(.add(5)))
        // JSON in any key order reaches the generated code through the transcoder.
        let json = #"{"wide":7,"count":3,"tags":[],"ratio":0.5,"name":"n","small":-3,"flags":200,"id":9,"protocol":true,"maybe":null,"extra":[1,2]}"#
        let expected = try JSONDecoder().decode(CodableShapesState.self, from: Data(json.utf8))
        #expect(WireJSON.decodeQuickly(CodableShapesState.self, from: Array(json.utf8)) == expected)
    }

    @Test("errors name the path Codable names, whichever way the value was tried first")
    func errorsComeFromCodable() throws {
        // {"add": {"_0": "five"}}
        let bytes: [UInt8] = [0x09, 0x01, 0x06] + Array("add".utf8) + [0x09, 0x01, 0x04] + Array("_0".utf8) + [0x07, 0x04] + Array("five".utf8)
        #expect(throws: BinaryCodingError.self) { try BinaryCodec.decode(CodableShapesEvent.self, from: bytes) }
        do {
            _ = try BinaryCodec.decode(CodableShapesEvent.self, from: bytes)
        } catch {
            #expect(error.code == .typeMismatch)
            #expect(error.path == "$.add._0")
        }
    }
}
