import Foundation
import Grove
import GroveExamples
import GroveWorker

/// Machines for Grove's own end-to-end tests, registered only with `fsm-worker
/// --with-test-machines` (a hidden flag): a topology for the shipped worker cannot reach them
/// by accident.
enum TestMachines {
    static func register(in configuration: inout WorkerConfiguration) {
        configuration.register(CrashTestCounter.self)
        configuration.register(AwaitingStateMachine<GatedAdder>.self, as: "GatedAdder")
        configuration.register(AnswerDeadline.self)
        configuration.register(Turnstile.self)
        configuration.register(QuickAuthFlowChart.self)
    }
}

/// ``AuthFlowChart``'s statechart with a second factor due in 8 s instead of five minutes: the
/// tests of a level timeout that fires after its worker was killed and restarted
/// (`AuthFlowChartRestartTests`).
enum QuickAuthFlowChart: SignInChart {
    typealias State = AuthFlow.State
    typealias Event = AuthFlow.Event
    typealias Output = AuthFlow.Output
    static let answerDeadline: Duration = .seconds(30)
    static let codeDeadline: Duration = .seconds(8)
}

/// A counter with an event that traps its worker: a poison event, for the tests of quarantine.
enum CrashTestCounter: Machine {
    enum Event: Codable, Sendable {
        case add(Int)
        /// Traps the worker process (fatalError) in `update`.
        case crashWorkerForTesting
    }
    struct State: Codable, Sendable { var count = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .add(let amount):
            state.count += amount
        case .crashWorkerForTesting:
            fatalError("crashWorkerForTesting: this test machine traps its worker on purpose")
        }
        return .none
    }
}

/// A StateMachinePackage program whose transition awaits until a file exists: the tests of an
/// awaiting transition in flight when its worker is killed.
enum GatedAdder: AwaitingStateMachineProgram {
    enum Event: Codable, Sendable {
        /// Adds `amount` once the file at `gate` exists.
        case add(amount: Int, gate: String)
    }

    static var stateMachine: StateMachine<Int, Event> {
        StateMachine(initial: 0) { total, event async in
            switch event {
            case .add(let amount, let gate):
                while !FileManager.default.fileExists(atPath: gate) {
                    // A stopped host cancels the transition: it then commits nothing.
                    do { try await Task.sleep(for: .milliseconds(10)) } catch { return .sameState() }
                }
                return .newState(total + amount)
            }
        }
    }
}

/// A question with a state timeout, for the tests of state timeouts across a worker's restart:
/// `arm` waits for an answer for `ms` milliseconds, then `expired`. `probe` arms a named timer
/// that ends in `probed`, so a test tells by their order in `seen` which of two timers fired
/// first, without reading a clock. `expired` is handled in every phase, so a state timeout that
/// outlived its state would show in `seen`. `quiet` arms an event timeout that sends `expired`
/// unless another event comes first.
enum AnswerDeadline: StateScoped {
    enum Phase: String, Codable, Sendable { case idle, waiting, answered, expired }
    struct State: Codable, Sendable {
        var phase: Phase = .idle
        /// `expired` and `probed`, in the order they came.
        var seen: [String] = []
    }
    enum Event: Codable, Sendable {
        case arm(ms: Int)
        case answer
        case expired
        case probe(ms: Int)
        case probed
        case quiet(ms: Int)
    }
    static var initialState: State { State() }
    static func stateKey(_ state: State) -> Phase { state.phase }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state.phase, event) {
        case (.idle, .arm(let ms)):
            state.phase = .waiting
            return .stateTimeout(after: .milliseconds(ms), send: .expired)
        case (.waiting, .answer):
            state.phase = .answered
            return .none
        case (_, .expired):
            state.phase = .expired
            state.seen.append("expired")
            return .none
        case (_, .probe(let ms)):
            return .after(.milliseconds(ms), id: "probe", send: .probed)
        case (_, .probed):
            state.seen.append("probed")
            return .none
        case (_, .quiet(let ms)):
            return .eventTimeout(after: .milliseconds(ms), send: .expired)
        case (.waiting, .arm), (.answered, .arm), (.expired, .arm), (.idle, .answer), (.answered, .answer), (.expired, .answer):
            return .unhandled
        }
    }
}

/// A gate that keeps riders waiting while it is locked: `pass` postpones until `unlock`, which
/// lets the waiting riders through in the order they came. For the tests of postponed events
/// across a worker's restart.
enum Turnstile: StateScoped {
    struct State: Codable, Sendable {
        var locked = true
        /// The riders through the gate, in order.
        var passed: [String] = []
    }
    enum Event: Codable, Sendable {
        case pass(rider: String)
        case unlock
        case lock
    }
    static var initialState: State { State() }
    static func stateKey(_ state: State) -> Bool { state.locked }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state.locked, event) {
        case (true, .pass):
            return .postpone
        case (false, .pass(let rider)):
            state.passed.append(rider)
            return .none
        case (true, .unlock):
            state.locked = false
            return .none
        case (false, .lock):
            state.locked = true
            return .none
        case (true, .lock), (false, .unlock):
            return .unhandled
        }
    }
}
