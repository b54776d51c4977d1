import Grove
import GroveRuntime
import GroveTesting
import Testing

/// A phone line, for gen_statem's three timeouts: dialing gives up after 5 s unless answered
/// (a state timeout; `redial` arms it again), and a call hangs up after 30 s without a word
/// (an event timeout). Its keys are its cases: `.dialing(attempt:)` is one state.
enum PhoneLine: StateScoped {
    enum State: Equatable, Sendable, Codable { case idle, dialing(attempt: Int), connected(words: Int) }
    enum Event: Equatable, Sendable, Codable { case dial, redial, noAnswer, answer, say, silence, stray }
    static var initialState: State { .idle }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .dial):
            state = .dialing(attempt: 1)
            return .stateTimeout(after: .seconds(5), send: .noAnswer)
        case (.dialing(let attempt), .redial):
            state = .dialing(attempt: attempt + 1)
            return .stateTimeout(after: .seconds(5), send: .noAnswer)
        case (.dialing, .noAnswer):
            state = .idle
            return .none
        case (.dialing, .answer):
            state = .connected(words: 0)
            return .eventTimeout(after: .seconds(30), send: .silence)
        case (.connected(let words), .say):
            state = .connected(words: words + 1)
            return .eventTimeout(after: .seconds(30), send: .silence)
        case (.connected, .silence):
            state = .idle
            return .none
        case (.idle, .redial), (.idle, .noAnswer), (.idle, .answer), (.idle, .say), (.idle, .silence), (.idle, .stray),
             (.dialing, .dial), (.dialing, .say), (.dialing, .silence), (.dialing, .stray),
             (.connected, .dial), (.connected, .redial), (.connected, .noAnswer), (.connected, .answer), (.connected, .stray):
            return .unhandled
        }
    }
}

/// A door whose opening and closing are one state, "moving", by a key it derives: the 10 s
/// timeout armed when it starts to open still runs when it turns round and closes.
enum Door: StateScoped {
    enum State: Equatable, Sendable { case closed, opening, closing, open }
    enum Event: Equatable, Sendable { case open, reverse, stuck }
    static var initialState: State { .closed }
    static func stateKey(_ state: State) -> String {
        switch state {
        case .closed: "closed"
        case .opening, .closing: "moving"
        case .open: "open"
        }
    }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.closed, .open):
            state = .opening
            return .stateTimeout(after: .seconds(10), send: .stuck)
        case (.opening, .reverse):
            state = .closing
            return .none
        case (.opening, .stuck), (.closing, .stuck):
            state = .closed
            return .none
        case (.closed, .reverse), (.closed, .stuck), (.opening, .open), (.closing, .open), (.closing, .reverse),
             (.open, .open), (.open, .reverse), (.open, .stuck):
            return .unhandled
        }
    }
}

/// A relay whose transitions out of `.idle` change the state's key, so the step wraps their
/// effects with the cancel of the state timeout: `.start` sends `.wipe` (a `.cancelAll`) and
/// `.note` inline, `.arm` starts a named timer.
enum Relay: StateScoped {
    enum State: Equatable, Sendable { case idle, busy(notes: Int) }
    enum Event: Equatable, Sendable { case start, arm, wipe, note, tick }
    static var initialState: State { .idle }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .start):
            state = .busy(notes: 0)
            return .events([.wipe, .note])
        case (.idle, .arm):
            state = .busy(notes: 0)
            return .after(.seconds(60), id: "tick", send: .tick)
        case (.busy, .wipe):
            return .cancelAll
        case (.busy(let notes), .note):
            state = .busy(notes: notes + 1)
            return .none
        case (.busy, .tick):
            state = .idle
            return .none
        case (.idle, .wipe), (.idle, .note), (.idle, .tick), (.busy, .start), (.busy, .arm):
            return .unhandled
        }
    }
}

@Suite("Timeouts tied to the state", .timeLimit(.minutes(2)))
struct TimeoutTests {
    @Test("A state timeout fires when the machine stays in the state")
    func stateTimeoutFiresWhenStaying() async {
        let store = TestStore(PhoneLine.self)
        await store.send(.dial) { $0 = .dialing(attempt: 1) }
        await store.advance(by: .seconds(5))
        await store.receive(.noAnswer) { $0 = .idle }
        await store.finish()
    }

    @Test("A state timeout does not fire once the machine left the state")
    func stateTimeoutCancelledOnLeaving() async {
        let store = TestStore(PhoneLine.self)
        await store.send(.dial) { $0 = .dialing(attempt: 1) }
        await store.send(.answer) { $0 = .connected(words: 0) }
        let running = await store.host.inFlightEffects
        #expect(!running.contains(.stateTimeout), "leaving dialing cancelled its state timeout")
        #expect(running.contains(.eventTimeout))
        await store.advance(by: .seconds(5))
        await store.advance(by: .seconds(25))
        await store.receive(.silence) { $0 = .idle }
        await store.finish()
    }

    @Test("Arming the state timeout again in the same state replaces it")
    func stateTimeoutRearmedReplaces() async {
        let store = TestStore(PhoneLine.self)
        await store.send(.dial) { $0 = .dialing(attempt: 1) }
        await store.advance(by: .seconds(4))
        await store.send(.redial) { $0 = .dialing(attempt: 2) }
        await store.advance(by: .seconds(4))
        #expect(store.clock.pendingTimerCount == 1, "the first timeout was replaced, not kept beside the new one")
        await store.advance(by: .seconds(1))
        await store.receive(.noAnswer) { $0 = .idle }
        await store.finish()
    }

    @Test("Any event cancels the event timeout, one the machine does not handle too; a new one is armed by the transition")
    func eventTimeoutCancelledByAnyEvent() async {
        let store = TestStore(PhoneLine.self)
        await store.send(.dial) { $0 = .dialing(attempt: 1) }
        await store.send(.answer) { $0 = .connected(words: 0) }
        await store.advance(by: .seconds(20))
        await store.send(.say) { $0 = .connected(words: 1) }
        await store.advance(by: .seconds(20))
        await store.sendUnhandled(.stray)
        #expect(await store.host.inFlightEffects.isEmpty, "the unhandled event cancelled the event timeout")
        await store.advance(by: .seconds(60))
        await store.finish()
    }

    @Test("An event timeout fires when no event comes")
    func eventTimeoutFiresWhenQuiet() async {
        let store = TestStore(PhoneLine.self)
        await store.send(.dial) { $0 = .dialing(attempt: 1) }
        await store.send(.answer) { $0 = .connected(words: 0) }
        await store.advance(by: .seconds(30))
        await store.receive(.silence) { $0 = .idle }
        await store.finish()
    }

    @Test("Two cases one key counts as one state keep the state timeout")
    func derivedKeyKeepsTheTimeout() async {
        let store = TestStore(Door.self)
        await store.send(.open) { $0 = .opening }
        await store.advance(by: .seconds(6))
        await store.send(.reverse) { $0 = .closing }
        await store.advance(by: .seconds(4))
        await store.receive(.stuck) { $0 = .closed }
        await store.finish()
    }

    @Test("Leaving the state runs the transition's effect as it would run alone: its inline events survive a cancelAll among them")
    func leavingKeepsInlineEventsAfterCancelAll() async {
        let store = TestStore(Relay.self)
        await store.send(.start) { $0 = .busy(notes: 0) }
        await store.receive(.wipe)
        await store.receive(.note) { $0 = .busy(notes: 1) }
        await store.finish()
    }

    @Test("Leaving the state puts nothing in flight but the transition's own work")
    func leavingAddsNoGroupInFlight() async {
        let store = TestStore(Relay.self)
        await store.send(.arm) { $0 = .busy(notes: 0) }
        #expect(await store.host.inFlightEffects == ["tick"], "no id of a wrapper beside the timer")
        await store.advance(by: .seconds(60))
        await store.receive(.tick) { $0 = .idle }
        await store.finish()
    }
}
