import Grove
import Testing

/// An effect-free turnstile, written as an Oak `Transducer`.
private enum Turnstile: Transducer {
    enum State: Equatable, Sendable, Terminable {
        case locked, unlocked, broken
        var isTerminal: Bool { self == .broken }
    }

    enum Event: Sendable {
        case coin, push, smash
    }

    static var initialState: State { .locked }

    static func update(_ state: inout State, event: Event) -> Void {
        switch (state, event) {
        case (.locked, .coin): state = .unlocked
        case (.unlocked, .push): state = .locked
        case (_, .smash): state = .broken
        default: break
        }
    }
}

@Suite("Oak Transducer dialect", .timeLimit(.minutes(2)))
struct TransducerDialectTests {
    @Test("OakTransducer runs update and returns no effect")
    func updateHasNoEffect() {
        var state = OakTransducer<Turnstile>.initialState
        #expect(state == .locked)
        #expect(OakTransducer<Turnstile>.update(&state, event: .coin).isNone)
        #expect(state == .unlocked)
    }

    @Test("an ignored pair keeps the state and is handled, as in Oak")
    func ignoredPairIsHandled() {
        var state = Turnstile.State.locked
        let effect = OakTransducer<Turnstile>.update(&state, event: .push)
        #expect(state == .locked)
        #expect(effect.isNone)
        #expect(!effect.isUnhandled)
    }

    @Test("terminal states come from Terminable")
    func terminal() {
        var state = Turnstile.State.unlocked
        _ = OakTransducer<Turnstile>.update(&state, event: .smash)
        #expect(OakTransducer<Turnstile>.isTerminal(state))
        #expect(!OakTransducer<Turnstile>.isTerminal(.locked))
    }
}
