import Grove
import Testing

/// A SwiftTea-style program exercising every effect constructor.
private enum Shop: TeaProgram {
    struct State: Equatable, Sendable {
        var count = 0
        var log: [String] = []
        var closed = false
    }

    enum Action: Equatable, Sendable {
        case add
        case fetch(String)
        case fetched(String)
        case failed(String)
        case cancelFetch
        case startFeed
        case item(String)
        case boot
        case close
        case ignored
    }

    struct Environment: Sendable {
        var price: @Sendable (String) async throws -> String
        var feed: @Sendable () -> AsyncStream<String>
    }

    static var initialState: State { State() }

    static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        var next = state
        switch action {
        case .add:
            next.count += 1
            return (next, .none)
        case .fetch(let name):
            return (state, .cancellable({ env in .fetched(try await env.price(name)) }, "fetch",
                                        catch: { .failed("\($0)") }))
        case .fetched(let price), .failed(let price), .item(let price):
            next.log.append(price)
            return (next, .none)
        case .cancelFetch:
            return (state, .cancel("fetch"))
        case .startFeed:
            return (state, .stream({ env in env.feed().map(Action.item) }, id: "feed"))
        case .boot:
            return (state, .sequence([.task { _ in .add }, .merge([.task { _ in .add }, .cancel("fetch")])]))
        case .close:
            next.closed = true
            return (next, .none)
        case .ignored:
            next.count = -1  // must be discarded: the effect says unhandled
            return (next, .unhandled)
        }
    }

    static func isTerminal(_ state: State) -> Bool { state.closed }
}

/// A program without an environment, using the argument-less closure overloads.
private enum Ticker: TeaProgram {
    typealias State = [Int]
    enum Action: Equatable, Sendable { case start, tick(Int), load, loaded(Int) }
    static var initialState: [Int] { [] }

    static func reduce(_ state: [Int], _ action: Action) -> ([Int], Effect) {
        switch action {
        case .start:
            (state, .stream({ AsyncStream { continuation in
                continuation.yield(.tick(1))
                continuation.yield(.tick(2))
                continuation.finish()
            } }, id: "ticks"))
        case .tick(let value), .loaded(let value):
            (state + [value], .none)
        case .load:
            (state, .cancellable({ .loaded(7) }, "load"))
        }
    }
}

@Suite("Tea dialect", .timeLimit(.minutes(2)))
struct TeaDialectTests {
    private let env = Shop.Environment(price: { name in
        guard name != "broken" else { throw DialectTestFailure() }
        return "\(name): 3"
    }, feed: {
        AsyncStream { continuation in
            continuation.yield("a")
            continuation.yield("b")
            continuation.finish()
        }
    })

    @Test("the adapter commits the reducer's state and runs no work for .none")
    func stateCommitted() {
        var state = Tea<Shop>.initialState
        let effect = Tea<Shop>.update(&state, event: .add)
        #expect(state.count == 1)
        #expect(effect.isNone)
    }

    @Test("an unhandled effect discards the state the reducer returned")
    func unhandledKeepsState() {
        var state = Shop.State(count: 4)
        let effect = Tea<Shop>.update(&state, event: .ignored)
        #expect(effect.isUnhandled)
        #expect(state.count == 4)
    }

    @Test("cancellable becomes a task under the id, and its closure receives the environment")
    func cancellableIsNamedTask() async throws {
        var state = Shop.State()
        let effect = Tea<Shop>.update(&state, event: .fetch("tea"))
        #expect(effect.dialectShape == .work(id: "fetch", kind: "task", catches: true))
        #expect(await effect.runWork(env: env) == [.fetched("tea: 3")])
    }

    @Test("catch: turns a thrown error into an action")
    func catchMapsErrors() async {
        var state = Shop.State()
        let effect = Tea<Shop>.update(&state, event: .fetch("broken"))
        #expect(await effect.runWork(env: env) == [.failed("boom")])
    }

    @Test("a task without catch: leaves the error to the machine's rule (no catch of its own)")
    func taskWithoutCatchFails() {
        let effect: TeaEffect<Shop.Action, Shop.Environment> = .task { env in .fetched(try await env.price("x")) }
        #expect(effect.machineEffect(for: Tea<Shop>.self).dialectShape == .work(id: nil, kind: "task", catches: false))
    }

    @Test("cancel, and pattern matching on the effect as SwiftTea tests did")
    func cancelMatches() throws {
        let (_, effect) = Shop.reduce(Shop.State(), .cancelFetch)
        guard case .cancel(let id) = effect else {
            Issue.record("expected a cancel effect, got \(effect)")
            return
        }
        #expect(id == "fetch")
        var state = Shop.State()
        #expect(Tea<Shop>.update(&state, event: .cancelFetch).dialectShape == .cancel("fetch"))
    }

    @Test("a stream built from the environment delivers every element under its id")
    func streamDelivers() async {
        var state = Shop.State()
        let effect = Tea<Shop>.update(&state, event: .startFeed)
        #expect(effect.dialectShape == .work(id: "feed", kind: "stream", catches: false))
        #expect(await effect.runWork(env: env) == [.item("a"), .item("b")])
    }

    @Test("sequence and merge keep their structure and order")
    func sequenceAndMerge() {
        var state = Shop.State()
        let effect = Tea<Shop>.update(&state, event: .boot)
        #expect(effect.dialectShape == .sequence(id: nil, [
            .work(id: nil, kind: "task", catches: false),
            .merge(id: nil, [.work(id: nil, kind: "task", catches: false), .cancel("fetch")]),
        ]))
    }

    @Test("map wraps the actions of tasks, streams and catch handlers and keeps ids")
    func mapLiftsActions() async {
        enum Parent: Equatable, Sendable { case child(Shop.Action) }
        let (_, fetch) = Shop.reduce(Shop.State(), .fetch("broken"))
        let lifted = fetch.map(Parent.child)
        guard case .cancellable(_, let id) = lifted else {
            Issue.record("map changed the kind of effect: \(lifted)")
            return
        }
        #expect(id == "fetch")

        enum Host: Machine {
            typealias State = Int
            typealias Event = Parent
            typealias Env = Shop.Environment
            static var initialState: Int { 0 }
            static func update(_ state: inout Int, event: Parent) -> Effect { .none }
        }
        #expect(await lifted.machineEffect(for: Host.self).runWork(env: env) == [.child(.failed("boom"))])

        let (_, feed) = Shop.reduce(Shop.State(), .startFeed)
        #expect(await feed.map(Parent.child).machineEffect(for: Host.self).runWork(env: env)
            == [.child(.item("a")), .child(.item("b"))])
    }

    @Test("pullback runs a child's effect in the parent's environment")
    func pullbackExtractsEnvironment() async {
        struct Outer: Sendable { var shop: Shop.Environment }
        enum Host: Machine {
            typealias State = Int
            typealias Event = Shop.Action
            typealias Env = Outer
            static var initialState: Int { 0 }
            static func update(_ state: inout Int, event: Shop.Action) -> Effect { .none }
        }
        let (_, fetch) = Shop.reduce(Shop.State(), .fetch("oolong"))
        let effect = fetch.pullback { (outer: Outer) in outer.shop }.machineEffect(for: Host.self)
        #expect(await effect.runWork(env: Outer(shop: env)) == [.fetched("oolong: 3")])
    }

    @Test("programs without an environment write closures without an argument")
    func voidEnvironmentOverloads() async {
        var state = Ticker.initialState
        let stream = Tea<Ticker>.update(&state, event: .start)
        #expect(await stream.runWork(env: ()) == [.tick(1), .tick(2)])
        let load = Tea<Ticker>.update(&state, event: .load)
        #expect(load.dialectShape == .work(id: "load", kind: "task", catches: false))
        #expect(await load.runWork(env: ()) == [.loaded(7)])
    }

    @Test("isTerminal is the program's, and false by default")
    func terminal() {
        #expect(Tea<Shop>.isTerminal(Shop.State(closed: true)))
        #expect(!Tea<Shop>.isTerminal(Shop.State()))
        #expect(!Tea<Ticker>.isTerminal([1]))
    }
}

/// `.after` and `.io` in a SwiftTea-style program lower to Grove's timer and io effects, so a
/// program's io can be placed on another worker.
@Suite("Tea dialect: timers and io", .timeLimit(.minutes(2)))
struct TeaTimerAndIOTests {
    struct Lookup: IORequest {
        typealias Response = String
        var key: String
    }

    enum Lookups: TeaProgram {
        enum Action: Sendable, Equatable { case lookUp(String), found(String), failed(String), remind, reminded }
        static var initialState: [String] { [] }
        static func reduce(_ state: [String], _ action: Action) -> ([String], Effect) {
            switch action {
            case .lookUp(let key):
                return (state, .io(id: "lookup", Lookup(key: key)) { result in
                    switch result {
                    case .success(let value): .found(value)
                    case .failure(let failure): .failed(failure.code.rawValue)
                    }
                })
            case .remind: return (state, .after(.seconds(5), send: .reminded))
            case .found(let value), .failed(let value): return (state + [value], .none)
            case .reminded: return (state + ["reminded"], .none)
            }
        }
    }

    @Test("io becomes a Grove io effect under its id, and map keeps it io")
    func ioLowers() {
        var state = Tea<Lookups>.initialState
        let effect = Tea<Lookups>.update(&state, event: .lookUp("a"))
        #expect(effect.dialectShape == .io(id: "lookup"))
        guard case .io(let work, let id) = Lookups.reduce([], .lookUp("a")).1.map({ [$0] }) else {
            Issue.record("map should keep an io effect io")
            return
        }
        #expect(work.name == "Lookup" && id == "lookup")
    }

    struct Refetch: IORequest {
        typealias Response = String
        static var onInterruption: IOInterruption { .reissue }
    }

    enum Refetches: TeaProgram {
        enum Action: Sendable, Equatable { case fetch(reissued: Bool), done }
        static var initialState: Int { 0 }
        static var startsReissuableIO: Bool { true }
        static func reduce(_ state: Int, _ action: Action) -> (Int, Effect) {
            switch action {
            case .fetch(let reissued):
                let effect: Effect = reissued ? .io(id: "refetch", Refetch()) { _ in .done } : .io(id: "lookup", Lookup(key: "k")) { _ in .done }
                // Through map and pullback, as a parent reducer would run it.
                return (state, effect.map { $0 }.pullback { (_: Void) in () })
            case .done: return (state + 1, .none)
            }
        }
    }

    @Test("io carries what its request type declares for a restart, through map and pullback")
    func ioCarriesItsInterruptionPolicy() {
        func policy(reissued: Bool) -> IOInterruption? {
            var state = Tea<Refetches>.initialState
            guard case .io(_, let call) = Tea<Refetches>.update(&state, event: .fetch(reissued: reissued)).kind else { return nil }
            return call.onInterruption
        }
        #expect(policy(reissued: true) == .reissue)
        #expect(policy(reissued: false) == .fail)
    }

    @Test("Tea passes on whether its program starts re-issuable io; false unless declared")
    func teaForwardsItsReissueDeclaration() {
        #expect(Tea<Refetches>.startsReissuableIO)
        #expect(!Tea<Lookups>.startsReissuableIO)
    }

    @Test("after becomes a Grove timer; map transforms the action it sends")
    func afterLowers() {
        var state = Tea<Lookups>.initialState
        #expect(Tea<Lookups>.update(&state, event: .remind).dialectShape == .timer(id: nil))
        guard case .after(let delay, nil, let sent) = Lookups.reduce([], .remind).1.map({ [$0] }) else {
            Issue.record("map should keep a timer a timer")
            return
        }
        #expect(delay == .seconds(5) && sent == [.reminded])
    }
}
