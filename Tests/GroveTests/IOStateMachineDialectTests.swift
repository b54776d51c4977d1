import Foundation
import Grove
import Testing

/// TCA-SM style: static reducers, dependencies on the instance.
private struct Upload: IOStateMachine {
    enum State: Equatable, Sendable { case idle, uploading(String), done(String), gaveUp }
    enum Input: Equatable, Sendable, Codable { case upload(String), cancel, poke }
    enum IOEffect: Equatable, Sendable { case send(String) }
    enum IOResult: Equatable, Sendable, Codable { case sent(String), skipped }

    let server: @Sendable (String) async -> String?

    static var initialState: State { .idle }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.idle, .upload(let name)): transition(.uploading(name), effect: .send(name))
        case (.uploading, .upload(let name)): run(.send(name))
        case (.uploading, .cancel): nextState(.idle)
        case (_, .poke): identity
        default: undefined
        }
    }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.uploading, .sent(let receipt)): nextState(.done(receipt))
        case (.uploading, .skipped): nextState(.gaveUp)
        default: undefined
        }
    }

    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        switch ioEffect {
        case .send(let name): await server(name).map(IOResult.sent)
        }
    }

    static func isTerminal(_ state: State) -> Bool { state == .gaveUp }
}

@Suite("TCA-SM dialect", .timeLimit(.minutes(2)))
struct IOStateMachineDialectTests {
    private let feature = Upload { name in "receipt-\(name)" }

    @Test("reducers are testable as values: TCA-SM's tuple, undefined and identity both (nil, nil)")
    func transitionsAreValues() {
        #expect(Upload.reduceInput(.idle, .upload("a")) == Upload.transition(.uploading("a"), effect: .send("a")))
        #expect(Upload.reduceInput(.idle, .upload("a")).0 == .uploading("a"))
        #expect(Upload.reduceInput(.idle, .upload("a")).1 == .send("a"))
        #expect(Upload.undefined == Upload.identity)
        #expect(Upload.identity == (nil, nil))
        #expect(Upload.withVar(Upload.State.idle, \.self, .gaveUp) == .gaveUp)
    }

    @Test("an input with an effect moves the state and starts the IO under the one fixed id")
    func inputStartsIO() async {
        var state = IOMachine<Upload>.initialState
        let effect = IOMachine<Upload>.update(&state, event: .input(.upload("a")))
        #expect(state == .uploading("a"))
        #expect(effect.dialectShape == .work(id: IOMachine<Upload>.ioEffectID, kind: "task", catches: false))
        #expect(await effect.runWork(env: feature) == [.ioResult(.sent("receipt-a"))])
    }

    @Test("run(_:) starts new IO under the same id without changing the state, replacing the old")
    func runReplaces() {
        var state = Upload.State.uploading("a")
        let effect = IOMachine<Upload>.update(&state, event: .input(.upload("b")))
        #expect(state == .uploading("a"))
        #expect(effect.dialectShape == .work(id: IOMachine<Upload>.ioEffectID, kind: "task", catches: false))
    }

    @Test("an IO result goes to reduceIOResult")
    func resultReduced() {
        var state = Upload.State.uploading("a")
        #expect(IOMachine<Upload>.update(&state, event: .ioResult(.sent("r"))).isNone)
        #expect(state == .done("r"))
    }

    @Test("undefined, like identity, keeps the state and leaves IO in flight alone")
    func undefinedKeepsState() {
        var state = Upload.State.done("r")
        #expect(IOMachine<Upload>.update(&state, event: .input(.upload("x"))).isNone)
        #expect(IOMachine<Upload>.update(&state, event: .ioResult(.sent("late"))).isNone)
        #expect(IOMachine<Upload>.update(&state, event: .input(.poke)).isNone)
        #expect(state == .done("r"))
    }

    @Test("a new state cancels the IO in flight: cancellation implicit in state transitions")
    func cancellingTransition() {
        var state = Upload.State.uploading("a")
        #expect(IOMachine<Upload>.update(&state, event: .input(.cancel)).dialectShape == .cancel(IOMachine<Upload>.ioEffectID))
        #expect(state == .idle)
    }

    @Test("runIOEffect returning nil sends no result")
    func nilResult() async {
        var state = IOMachine<Upload>.initialState
        let effect = IOMachine<Upload>.update(&state, event: .input(.upload("a")))
        #expect(await effect.runWork(env: Upload { _ in nil }) == [])
    }

    @Test("events are Codable when inputs and results are, and terminal states end the run")
    func codableAndTerminal() throws {
        let events: [IOMachine<Upload>.Event] = [.input(.upload("a")), .ioResult(.skipped)]
        let decoded = try JSONDecoder().decode([IOMachine<Upload>.Event].self, from: JSONEncoder().encode(events))
        #expect(decoded == events)
        #expect(IOMachine<Upload>.isTerminal(.gaveUp))
        #expect(!IOMachine<Upload>.isTerminal(.idle))
    }
}
