@testable import GroveWorker
import Grove
import GroveWire
import Testing

/// A machine whose events hold values of several types, to refuse each the wrong way.
enum ValueMachine: Machine {
    enum Event: Codable, Sendable {
        case add(Int)
        case set(level: Int8)
        case rename(String)
        case increment
    }
    struct State: Codable, Sendable { var total = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect { .none }
}

/// Why a JSON event is refused, as a client reads it: found by an attacker's review of issue 34,
/// `{"add":{"_0":9223372036854775808}}` was "'add' is not a case", since Foundation reports a
/// number that does not fit as invalid JSON at the top. The refusal names the case, the path
/// and what is wrong with the value.
@Suite("Event decoding refusals", .timeLimit(.minutes(2)))
struct EventDecodingTests {
    static func refusal(_ json: String) throws -> WireError {
        do {
            _ = try Hosted<ValueMachine>.decodeEvent(Array(json.utf8)[...], address: "values/a")
        } catch {
            return error
        }
        Issue.record("\(json) decoded")
        throw WireError(.undecodableEvent, "decoded")
    }

    @Test(arguments: [
        (#"{"add":{"_0":9223372036854775808}}"#, "$.add._0", "9223372036854775808 does not fit in Int"),
        (#"{"add":{"_0":-9223372036854775809}}"#, "$.add._0", "does not fit"),
        (#"{"set":{"level":300}}"#, "$.set.level", "300 does not fit in Int8"),
        (#"{"add":{"_0":1.5}}"#, "$.add._0", "expected Int, a whole number within its range"),
        (#"{"add":{"_0":99999999999999999999}}"#, "$.add._0", "expected Int, a whole number within its range"),
    ])
    func aNumberThatDoesNotFitItsTypeIsSaidSo(json: String, path: String, finding: String) throws {
        let error = try Self.refusal(json)
        #expect(error.code == .undecodableEvent)
        #expect(error.path == path)
        let place = String(path.dropFirst(2))
        let name = String(place.prefix { $0 != "." })
        #expect(error.message.hasPrefix("'\(name)' has a value that does not fit its type at \(place): "), "\(error.message)")
        #expect(error.message.contains(finding), "\(error.message)")
        #expect(!error.message.contains("is not a case"), "\(error.message)")
        #expect(error.address == "values/a")
    }

    @Test(arguments: [
        (#"{"add":{"_0":"7"}}"#, "$.add._0", "expected Int"),
        (#"{"rename":{"_0":3}}"#, "$.rename._0", "expected String"),
        (#"{"add":{"_0":[1]}}"#, "$.add._0", "Int"),
    ])
    func aValueOfTheWrongTypeIsSaidSo(json: String, path: String, finding: String) throws {
        let error = try Self.refusal(json)
        #expect(error.code == .undecodableEvent)
        #expect(error.path == path)
        let place = String(path.dropFirst(2))
        let name = String(place.prefix { $0 != "." })
        #expect(error.message.hasPrefix("'\(name)' has "), "\(error.message)")
        #expect(error.message.contains("wrong type at \(place)"), "\(error.message)")
        #expect(error.message.contains(finding), "\(error.message)")
        #expect(!error.message.contains("is not a case"), "\(error.message)")
    }

    @Test func anUnknownCaseIsStillNamedSo() throws {
        let error = try Self.refusal(#"{"subtract":{"_0":1}}"#)
        #expect(error.path == "$")
        #expect(error.message.hasPrefix("'subtract' is not a case of ValueMachine.Event"), "\(error.message)")
    }

    @Test func missingValuesAreStillNamedSo() throws {
        let error = try Self.refusal(#"{"add":{}}"#)
        #expect(error.message.hasPrefix("'add' needs its values"), "\(error.message)")
    }

    @Test func aFittingValueDecodes() throws {
        guard case .add(let value) = try Hosted<ValueMachine>.decodeEvent(Array(#"{"add":{"_0":9223372036854775807}}"#.utf8)[...],
                                                                            address: "values/a") else {
            Issue.record("not an add")
            return
        }
        #expect(value == Int.max)
    }

    /// Outside events too: a topology or a payload decoded by `WireJSON` names the path.
    @Test func wireJSONLocatesANumberOutOfRangeInAnyValue() {
        struct Limits: Decodable { var sizes: [Int] }
        let error = #expect(throws: WireError.self) {
            try WireJSON.decode(Limits.self, from: Array(#"{"sizes":[1,2,99999999999999999999]}"#.utf8), what: "the limits")
        }
        #expect(error?.path == "$.sizes[2]")
        #expect(error?.message.contains("the limits has a value that does not fit its type at sizes[2]: expected Int") == true, "\(error?.message ?? "")")
    }
}
