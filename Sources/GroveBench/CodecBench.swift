import Foundation
import GroveWire

/// `grove-bench --codec`: JSON (Foundation) against GroveWire's binary codec, encoding and
/// decoding the values that cross processes most: a small event and a small state.
enum CodecBench {
    enum Event: Codable, Equatable {
        case increment
        case add(Int)
        case updateEmail(String)
        case start(interval: Double)
    }

    struct State: Codable, Equatable {
        var step: String
        var email: String
        var failedAttempts: Int
        var maxAttempts: Int
        var lastUpdate: Int64?
    }

    /// `Event` and `State` with generated binary coding: the same bytes, without `Codable`'s
    /// containers (WireJSON's decoding goes through it too; its encoding and Foundation's do not).
    @BinaryCodable
    enum GeneratedEvent: Codable, Equatable {
        case increment
        case add(Int)
        case updateEmail(String)
        case start(interval: Double)
    }

    @BinaryCodable
    struct GeneratedState: Codable, Equatable {
        var step: String
        var email: String
        var failedAttempts: Int
        var maxAttempts: Int
        var lastUpdate: Int64?
    }

    struct Row {
        var value: String
        var jsonEncode: Double
        var binaryEncode: Double
        var jsonDecode: Double
        var binaryDecode: Double
        /// GroveWire's own JSON: `WireJSON.encode` and `WireJSON.decodeQuickly` (through the binary codec).
        var wireEncode: Double
        var wireDecode: Double
    }

    static func run(iterations: Int, runs: Int) throws -> [Row] {
        let events: [Event] = [.increment, .add(41), .updateEmail("ada@example.com"), .start(interval: 1.5)]
        let state = State(step: "authenticating", email: "ada@example.com", failedAttempts: 1, maxAttempts: 3,
                          lastUpdate: 1_795_387_856_885_469_394)
        let generatedEvents: [GeneratedEvent] = [.increment, .add(41), .updateEmail("ada@example.com"), .start(interval: 1.5)]
        let generatedState = GeneratedState(step: state.step, email: state.email, failedAttempts: state.failedAttempts,
                                            maxAttempts: state.maxAttempts, lastUpdate: state.lastUpdate)
        return [
            try measure("event (4 cases, mixed)", events, iterations: iterations, runs: runs),
            try measure("event, @BinaryCodable", generatedEvents, iterations: iterations, runs: runs),
            try measure("state (struct, 5 fields)", [state], iterations: iterations, runs: runs),
            try measure("state, @BinaryCodable", [generatedState], iterations: iterations, runs: runs),
        ]
    }

    static func measure<T: Codable & Equatable>(_ name: String, _ values: [T], iterations: Int, runs: Int) throws -> Row {
        let jsonEncoder = JSONEncoder()
        let jsonDecoder = JSONDecoder()
        let jsonBytes = try values.map { try jsonEncoder.encode($0) }
        let binaryBytes = try values.map { try BinaryCodec.encode($0) }
        for (index, value) in values.enumerated() {
            guard try BinaryCodec.decode(T.self, from: binaryBytes[index]) == value,
                  try jsonDecoder.decode(T.self, from: jsonBytes[index]) == value else {
                throw CodecBenchError(message: "\(name): a value did not round-trip")
            }
            let sorted = JSONEncoder()
            sorted.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard try WireJSON.encode(value) == Array(try sorted.encode(value)),
                  WireJSON.decodeQuickly(T.self, from: Array(jsonBytes[index])) == value else {
                throw CodecBenchError(message: "\(name): WireJSON does not agree with Foundation")
            }
        }
        let jsonArrays = jsonBytes.map { Array($0) }
        var rates: [[Double]] = Array(repeating: [], count: 6)
        for _ in 0..<runs {
            rates[0].append(try time(iterations) { i in blackHole(try jsonEncoder.encode(values[i % values.count])) })
            rates[1].append(try time(iterations) { i in blackHole(try BinaryCodec.encode(values[i % values.count])) })
            rates[2].append(try time(iterations) { i in blackHole(try jsonDecoder.decode(T.self, from: jsonBytes[i % values.count])) })
            rates[3].append(try time(iterations) { i in blackHole(try BinaryCodec.decode(T.self, from: binaryBytes[i % values.count])) })
            rates[4].append(try time(iterations) { i in blackHole(try WireJSON.encode(values[i % values.count])) })
            rates[5].append(try time(iterations) { i in blackHole(WireJSON.decodeQuickly(T.self, from: jsonArrays[i % values.count])) })
        }
        return Row(value: name, jsonEncode: median(rates[0]), binaryEncode: median(rates[1]),
                   jsonDecode: median(rates[2]), binaryDecode: median(rates[3]),
                   wireEncode: median(rates[4]), wireDecode: median(rates[5]))
    }

    static func time(_ iterations: Int, _ body: (Int) throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        for index in 0..<iterations { try body(index) }
        return rate(iterations, ContinuousClock.now - start)
    }

    static func table(_ rows: [Row], iterations: Int, runs: Int) -> String {
        var lines = ["codec: medians of \(runs) rounds, \(iterations) values each (M values/s; ratios to Foundation's JSON)",
                     "JSON = JSONEncoder/JSONDecoder; WireJSON = GroveWire's JSON (through the binary codec where it can); binary = BinaryCodec"]
        for row in rows {
            func part(_ what: String, _ json: Double, _ wire: Double, _ binary: Double) -> String {
                "\(what) JSON \(format(json / 1e6, 3)), WireJSON \(format(wire / 1e6, 3)) (\(format(wire / json, 1))x), "
                    + "binary \(format(binary / 1e6, 3)) (\(format(binary / json, 1))x)"
            }
            lines.append("\(row.value): " + part("encode", row.jsonEncode, row.wireEncode, row.binaryEncode) + "; "
                + part("decode", row.jsonDecode, row.wireDecode, row.binaryDecode))
        }
        return lines.joined(separator: "\n")
    }
}

struct CodecBenchError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
