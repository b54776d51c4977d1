// The code of README's tour, kept compiling and passing here. Change both together.
import Testing
import Grove
import GroveRuntime
import GroveTesting

// README tour: begin
struct Lookup: IORequest, Hashable {
    typealias Response = [String]
    var query: String
}

enum Search: Machine {
    struct State: Equatable, Sendable, Codable {
        var query = ""
        var results: [String] = []
        var error: String?
    }

    enum Event: Equatable, Sendable, Codable {
        case typed(String)
        case debounced
        case found([String])
        case failed(String)
        case cleared
    }

    static var initialState: State { State() }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .typed(let text):
            state.query = text
            // Same id: each keystroke replaces the pending timer.
            return .after(.milliseconds(300), id: "debounce", send: .debounced)
        case .debounced:
            // Same id: a newer lookup cancels the one in flight; its result can never arrive.
            return .io(id: "lookup", Lookup(query: state.query)) { result in
                switch result {
                case .success(let hits): .found(hits)
                case .failure(let failure): .failed(failure.message)
                }
            }
        case .found(let hits):
            state.results = hits
            state.error = nil
            return .none
        case .failed(let message):
            state.error = message
            return .none
        case .cleared:
            state = State()
            return .merge([.cancel("debounce"), .cancel("lookup")])
        }
    }
}
// README tour: end

@Suite("README tour", .timeLimit(.minutes(2)))
struct ReadmeTourTests {
    private var handlers: IOHandlers {
        var handlers = IOHandlers()
        handlers.register(Lookup.self) { request in ["\(request.query) 1", "\(request.query) 2"] }
        return handlers
    }

    @Test("The tour's search machine debounces, looks up and clears")
    func tourMachineWorks() async {
        let store = TestStore(Search.self, io: handlers)
        await store.send(.typed("gro")) { $0.query = "gro" }
        await store.advance(by: .milliseconds(200))
        await store.send(.typed("grove")) { $0.query = "grove" }
        await store.advance(by: .milliseconds(300))
        await store.receive(.debounced)
        await store.receive(.found(["grove 1", "grove 2"])) { $0.results = ["grove 1", "grove 2"] }
        await store.send(.cleared) { $0 = Search.State() }
        await store.finish()
    }

    @Test("The tour's pure effect check holds")
    func tourShapeCheck() {
        var state = Search.State(query: "grove")
        #expect(Search.update(&state, event: .debounced).shape == .io(id: "lookup", Lookup(query: "grove")))
        #expect(Search.update(&state, event: .debounced).shape != .io(id: "lookup", Lookup(query: "oak")))
    }

    @Test("The tour's host example runs")
    func tourHostRuns() async throws {
        // README tour: host begin
        let host = MachineHost(Search.self, io: handlers)
        host.start()
        try host.send(.typed("grove"))
        let state = try await host.sendAndWait(.debounced)
        print(state.query)                     // "grove"; the lookup is now in flight
        for await state in await host.states() where !state.results.isEmpty {
            print(state.results)               // ["grove 1", "grove 2"]
            break
        }
        // README tour: host end
        #expect(await host.state.results == ["grove 1", "grove 2"])
        await host.stop()
    }
}
