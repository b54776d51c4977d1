import Grove
import Testing

/// Oak's loading pattern, written as the seed wrote it.
private enum Loader: EffectTransducer {
    enum State: Equatable, Sendable, NonTerminal {
        case idle, loading, loaded([String]), error(String)
    }

    enum Event: Equatable, Sendable {
        case load, dataReceived([String]), loadFailed(String), stop, bogus
    }

    struct Env: Sendable {
        var dataService: @Sendable () async throws -> [String]
    }

    static var initialState: State { .idle }

    static func update(_ state: inout State, event: Event) -> Effect? {
        switch (state, event) {
        case (.idle, .load):
            state = .loading
            return loadDataEffect()
        case (.loading, .dataReceived(let items)):
            state = .loaded(items)
            return nil
        case (.loading, .loadFailed(let message)):
            state = .error(message)
            return nil
        case (.loading, .stop):
            state = .idle
            return Effect.cancel(id: "loadData")
        case (_, .bogus):
            return .unhandled
        default:
            return nil
        }
    }

    static func loadDataEffect() -> Effect {
        Effect(id: "loadData") { env, input in
            do {
                let items = try await env.dataService()
                try input.send(.dataReceived(items))
            } catch {
                try input.send(.loadFailed("\(error)"))
            }
        }
    }
}

/// A transducer with a terminal state and no environment.
private enum Door: EffectTransducer {
    enum State: Terminable, Sendable {
        case open, closed, locked
        var isTerminal: Bool { self == .locked }
    }
    enum Event: Sendable { case close, lock }
    static var initialState: State { .open }
    static func update(_ state: inout State, event: Event) -> Effect? {
        switch event {
        case .close: state = .closed
        case .lock: state = .locked
        }
        return nil
    }
}

@Suite("Oak dialect", .timeLimit(.minutes(2)))
struct OakDialectTests {
    @Test("nil from update is no effect, and the state change is kept")
    func nilIsNone() {
        var state = Loader.State.loading
        let effect = Oak<Loader>.update(&state, event: .dataReceived(["a"]))
        #expect(effect.isNone)
        #expect(state == .loaded(["a"]))
    }

    @Test("Effect(id:operation:) is a named operation whose input sends events")
    func operationSends() async {
        var state = Oak<Loader>.initialState
        let effect = Oak<Loader>.update(&state, event: .load)
        #expect(state == .loading)
        #expect(effect.dialectShape == .work(id: "loadData", kind: "operation", catches: false))
        let ok = Loader.Env(dataService: { ["x", "y"] })
        #expect(await effect.runWork(env: ok) == [.dataReceived(["x", "y"])])
        let failing = Loader.Env(dataService: { throw DialectTestFailure() })
        #expect(await effect.runWork(env: failing) == [.loadFailed("boom")])
    }

    @Test("Effect.cancel(id:) cancels the named operation")
    func cancelByID() {
        var state = Loader.State.loading
        #expect(Oak<Loader>.update(&state, event: .stop).dialectShape == .cancel("loadData"))
        #expect(state == .idle)
    }

    @Test("returning .unhandled reaches the host as unhandled, unlike nil")
    func unhandledPassesThrough() {
        var state = Loader.State.idle
        #expect(Oak<Loader>.update(&state, event: .bogus).isUnhandled)
        #expect(Oak<Loader>.update(&state, event: .dataReceived([])).isNone)
        #expect(state == .idle)
    }

    @Test("termination follows the state's Terminable conformance")
    func terminalFromState() {
        var state = Oak<Door>.initialState
        _ = Oak<Door>.update(&state, event: .close)
        #expect(!Oak<Door>.isTerminal(state))
        _ = Oak<Door>.update(&state, event: .lock)
        #expect(Oak<Door>.isTerminal(state))
        #expect(!Oak<Loader>.isTerminal(.loading))
    }
}
