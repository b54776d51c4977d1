import Foundation
@testable import Grove
import Testing

/// An effect id crosses processes as JSON (a `cancel` payload): a name or a generated number,
/// and anything else is refused with what an id is.
@Suite(.timeLimit(.minutes(2)))
struct EffectIDCodingTests {
    func decode(_ json: String) throws -> EffectID {
        try JSONDecoder().decode(EffectID.self, from: Data(json.utf8))
    }

    @Test func namesAndNumbersRoundTrip() throws {
        #expect(try decode(#""fetch""#) == EffectID("fetch"))
        #expect(try decode("7") == EffectID.generated(7))
        for id in [EffectID("poll-fetch"), .generated(42)] {
            #expect(try JSONDecoder().decode(EffectID.self, from: JSONEncoder().encode(id)) == id)
        }
    }

    @Test(arguments: ["1.5", "-1", #"{"a":1}"#, "[1]", "true"])
    func anythingElseSaysWhatAnIdIs(json: String) {
        do {
            _ = try decode(json)
            Issue.record("\(json) decoded")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.debugDescription.contains("an effect id is a string"), "\(context.debugDescription)")
        } catch {
            Issue.record("\(json): \(error)")
        }
    }
}

/// The ids Grove reserves for the timeouts it names are a third space: an object in JSON,
/// never equal to a user's string, and refused when the name is one Grove does not know.
@Suite(.timeLimit(.minutes(2)))
struct ReservedEffectIDCodingTests {
    @Test func reservedIdsRoundTripAsObjects() throws {
        #expect(String(decoding: try JSONEncoder().encode(EffectID.stateTimeout), as: UTF8.self) == #"{"reserved":"state-timeout"}"#)
        for id in [EffectID.stateTimeout, .eventTimeout] {
            #expect(try JSONDecoder().decode(EffectID.self, from: JSONEncoder().encode(id)) == id)
        }
        #expect(try JSONDecoder().decode(EffectID.self, from: Data(#""state-timeout""#.utf8)) == EffectID("state-timeout"))
        #expect(EffectID("state-timeout") != .stateTimeout)
    }

    @Test func anUnknownReservedNameIsRefused() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(EffectID.self, from: Data(#"{"reserved":"lunch"}"#.utf8))
        }
    }
}
