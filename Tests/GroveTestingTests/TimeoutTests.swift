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
/// timeout armed when it starts to open still runs when it turns round and closes. Open, it
/// closes itself after 30 s (a state timeout armed by the transition that leaves "moving").
enum Door: StateScoped {
    enum State: Equatable, Sendable { case closed, opening, closing, open }
    enum Event: Equatable, Sendable { case open, reverse, stuck, arrive, autoClose }
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
        case (.opening, .stuck), (.closing, .stuck), (.closing, .arrive), (.open, .autoClose):
            state = .closed
            return .none
        case (.opening, .arrive):
            state = .open
            return .stateTimeout(after: .seconds(30), send: .autoClose)
        case (.closed, .reverse), (.closed, .stuck), (.closed, .arrive), (.closed, .autoClose),
             (.opening, .open), (.opening, .autoClose), (.closing, .open), (.closing, .reverse), (.closing, .autoClose),
             (.open, .open), (.open, .reverse), (.open, .stuck), (.open, .arrive):
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

/// A sweeper whose `go` starts a named timer, then leaves `idle` by one of three transitions
/// that drop everything and arm a state timeout, written in different orders.
enum Sweeper: StateScoped {
    enum State: Equatable, Sendable { case idle, armed, swept }
    enum Event: Equatable, Sendable { case go, cancelThenArm, armThenCancel, cancelThenArmInSequence, old, late }
    static var initialState: State { .idle }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .go):
            state = .armed
            return .after(.seconds(60), id: "old", send: .old)
        case (.armed, .cancelThenArm):
            state = .swept
            return .merge([.cancelAll, .stateTimeout(after: .seconds(5), send: .late)])
        case (.armed, .armThenCancel):
            state = .swept
            return .merge([.stateTimeout(after: .seconds(5), send: .late), .cancelAll])
        case (.armed, .cancelThenArmInSequence):
            state = .swept
            return .sequence([.cancelAll, .stateTimeout(after: .seconds(5), send: .late)])
        case (.swept, .late), (.armed, .old):
            state = .idle
            return .none
        case (.idle, _), (.armed, .go), (.armed, .late), (.swept, _):
            return .unhandled
        }
    }
}

/// A counter whose state is a number: every value is one state, so its state timeout survives
/// counting.
enum NumberState: StateScoped {
    typealias State = Int
    enum Event: Equatable, Sendable { case count, timeUp }
    static var initialState: Int { 0 }
    static func update(_ state: inout Int, event: Event) -> Effect {
        switch event {
        case .count:
            state += 1
            return state == 1 ? .stateTimeout(after: .seconds(5), send: .timeUp) : .none
        case .timeUp:
            state = -1
            return .none
        }
    }
}

enum TextState: StateScoped {
    typealias State = String
    typealias Event = Never
    static var initialState: String { "" }
    static func update(_ state: inout String, event: Never) -> Effect { switch event {} }
}

enum PairState: StateScoped {
    typealias State = (Int, Int)
    typealias Event = Never
    static var initialState: (Int, Int) { (0, 0) }
    static func update(_ state: inout (Int, Int), event: Never) -> Effect { switch event {} }
}

enum OptionalState: StateScoped {
    typealias State = PhoneLine.State?
    typealias Event = Never
    static var initialState: PhoneLine.State? { nil }
    static func update(_ state: inout PhoneLine.State?, event: Never) -> Effect { switch event {} }
}

/// A state timeout as a step of a sequence: leaving the state cancels it, which ends the step,
/// so the sequence goes on to the next.
enum Reminder: StateScoped {
    enum State: Equatable, Sendable { case waiting, done }
    enum Event: Equatable, Sendable { case start, finish, remind, followUp }
    static var initialState: State { .done }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.done, .start):
            state = .waiting
            return .sequence([.stateTimeout(after: .seconds(5), send: .remind), .events([.followUp])])
        case (.waiting, .finish), (.waiting, .remind):
            state = .done
            return .none
        case (.done, .followUp), (.waiting, .followUp):
            return .none
        case (.done, .finish), (.done, .remind), (.waiting, .start):
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
    @Test("Leaving a state of a derived key (moving) for another cancels its state timeout")
    func leavingADerivedKeyCancels() async {
        let store = TestStore(Door.self)
        await store.send(.open) { $0 = .opening }
        await store.advance(by: .seconds(6))
        await store.send(.reverse) { $0 = .closing }
        await store.send(.arrive) { $0 = .closed }
        #expect(await store.host.inFlightEffects.isEmpty, "closed is another state than moving")
        await store.advance(by: .seconds(10))
        await store.finish()
    }

    @Test("Leaving with one pending and arming one for the new state in the same transition keeps the new one only")
    func leaveAndRearmInOneTransition() async {
        let store = TestStore(Door.self)
        await store.send(.open) { $0 = .opening }
        await store.advance(by: .seconds(6))
        await store.send(.arrive) { $0 = .open }
        #expect(store.clock.pendingTimerCount == 1)
        await store.advance(by: .seconds(4))
        await store.advance(by: .seconds(25))
        await store.advance(by: .seconds(1))
        await store.receive(.autoClose) { $0 = .closed }
        await store.finish()
    }

    @Test("`.merge([.cancelAll, .stateTimeout])` drops everything, then arms the new state's timeout")
    func cancelAllThenArm() async {
        let store = TestStore(Sweeper.self)
        await store.send(.go) { $0 = .armed }
        await store.send(.cancelThenArm) { $0 = .swept }
        let running = await store.host.inFlightEffects
        #expect(running.contains(.stateTimeout), "the timeout after the cancelAll is armed")
        #expect(!running.contains("old"))
        await store.advance(by: .seconds(5))
        await store.receive(.late) { $0 = .idle }
        await store.advance(by: .seconds(60))
        await store.finish()
    }

    @Test("`.sequence([.cancelAll, .stateTimeout])` goes on after the cancelAll too")
    func cancelAllThenArmInSequence() async {
        let store = TestStore(Sweeper.self)
        await store.send(.go) { $0 = .armed }
        await store.send(.cancelThenArmInSequence) { $0 = .swept }
        await store.advance(by: .seconds(5))
        await store.receive(.late) { $0 = .idle }
        await store.advance(by: .seconds(60))
        await store.finish()
    }

    @Test("`.merge([.stateTimeout, .cancelAll])` cancels the timeout started before it: children start in order")
    func armThenCancelAll() async {
        let store = TestStore(Sweeper.self)
        await store.send(.go) { $0 = .armed }
        await store.send(.armThenCancel) { $0 = .swept }
        #expect(await store.host.inFlightEffects.isEmpty)
        await store.advance(by: .seconds(60))
        await store.finish()
    }

    @Test("A state that is not an enum is one state: numbers, strings and tuples have one key for all values")
    func nonEnumStatesHaveOneKey() async {
        #expect(NumberState.stateKey(0) == NumberState.stateKey(1))
        #expect(TextState.stateKey("a") == TextState.stateKey("b(c)"))
        #expect(PairState.stateKey((1, 2)) == PairState.stateKey((3, 4)))
        let store = TestStore(NumberState.self)
        await store.send(.count) { $0 = 1 }
        await store.send(.count) { $0 = 2 }
        await store.advance(by: .seconds(5))
        await store.receive(.timeUp) { $0 = -1 }
        await store.finish()
    }

    @Test("An optional state's key is nil's, or the wrapped value's")
    func optionalStateKeys() {
        #expect(OptionalState.stateKey(.dialing(attempt: 1)) == OptionalState.stateKey(.dialing(attempt: 2)))
        #expect(OptionalState.stateKey(.dialing(attempt: 1)) != OptionalState.stateKey(.idle))
        #expect(OptionalState.stateKey(nil) != OptionalState.stateKey(.idle))
    }

    @Test("A state timeout that is a sequence step ends when the state is left, and the sequence goes on")
    func stateTimeoutInSequenceEndsOnLeaving() async {
        let store = TestStore(Reminder.self)
        await store.send(.start) { $0 = .waiting }
        await store.send(.finish) { $0 = .done }
        await store.receive(.followUp)
        await store.advance(by: .seconds(5))
        await store.finish()
    }

    #if DEBUG
    @Test("`.after` refuses the ids Grove reserves, naming the constructor to write instead")
    func afterRefusesReservedIds() async {
        let state = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MachineEffect<PhoneLine>.after(.seconds(1), id: .stateTimeout, send: .noAnswer)
        }
        let stateText = String(decoding: state?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stateText.contains("reserves for <state-timeout>: write `.stateTimeout(after:send:)`"), "\(stateText)")
        let event = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MachineEffect<PhoneLine>.after(.seconds(1), id: .eventTimeout, send: .noAnswer)
        }
        let eventText = String(decoding: event?.standardErrorContent ?? [], as: UTF8.self)
        #expect(eventText.contains("write `.eventTimeout(after:send:)`"), "\(eventText)")
    }
    #endif
}
