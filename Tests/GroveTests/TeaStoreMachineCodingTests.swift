import Foundation
import Grove
import Testing

/// A reducer's hosted state crosses processes as the user's state alone, and comes back only
/// with its reducer bound (what a worker's `register(_:initialState:reduce:)` does on restore).
@Suite(.timeLimit(.minutes(2)))
struct TeaStoreMachineCodingTests {
    struct Count: Codable, Equatable, Sendable { var value = 0 }
    enum Step: Codable, Equatable, Sendable { case add(Int) }
    typealias Hosted = TeaStoreMachine<Count, Step>

    static let reduce: Hosted.Reducer = { state, step in
        switch step {
        case .add(let amount): (Count(value: state.value + amount), .none)
        }
    }

    @Test func theStateEncodesAsTheUsersStateAlone() throws {
        let state = Hosted.State(current: Count(value: 3), reduce: Self.reduce)
        #expect(String(decoding: try JSONEncoder().encode(state), as: UTF8.self) == #"{"value":3}"#)
    }

    @Test func itDecodesWithItsReducerBoundAndReducesOn() throws {
        let json = Data(#"{"value":3}"#.utf8)
        var state = try TeaReducerBinding.bound(to: Self.reduce) { try JSONDecoder().decode(Hosted.State.self, from: json) }
        #expect(state.current == Count(value: 3))
        _ = Hosted.update(&state, event: .add(4))
        #expect(state.current == Count(value: 7))
    }

    @Test func withoutItsReducerItRefusesToDecodeAndSaysWhere() {
        let json = Data(#"{"value":3}"#.utf8)
        #expect {
            try JSONDecoder().decode(Hosted.State.self, from: json)
        } throws: { error in
            "\(error)".contains("TeaReducerBinding.bound(to:_:)")
        }
    }
}
