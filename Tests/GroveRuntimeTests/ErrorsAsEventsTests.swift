import Grove
import GroveRuntime
import GroveTesting
import Testing

/// Issue 36 item 4: an error thrown by a machine's work is an event, not a stop. With a
/// `failureEvent(_:)` the machine hears it; without one the host logs it and the machine runs on;
/// `onError: .fail` still stops it, for a machine that wants OTP's "let it crash".
@Suite("Errors are events", .timeLimit(.minutes(2)))
struct ErrorsAsEventsTests {
    struct Offline: Error, CustomStringConvertible {
        var description: String { "offline" }
    }

    /// A fetcher whose work throws `Offline`; its `failureEvent` turns that error into `failed`
    /// and declines every other one.
    enum Fetcher: Machine {
        struct State: Equatable, Sendable { var log: [String] = [] }
        enum Event: Equatable, Sendable {
            case fetch(fails: Bool), fetched(String), failed(String, id: String)
            case feed(elements: Int), note(String), crash
        }
        struct Odd: Error {}
        static var initialState: State { State() }

        static func update(_ state: inout State, event: Event) -> Effect {
            switch event {
            case .fetch(let fails):
                return .task(id: "fetch") { _ in
                    if fails { throw Offline() }
                    return .fetched("data")
                }
            case .feed(let elements):
                return .stream(id: "feed") { _ in
                    AsyncThrowingStream<Event, any Error> { continuation in
                        for index in 0..<elements { continuation.yield(.note("\(index)")) }
                        continuation.finish(throwing: Offline())
                    }
                }
            case .crash:
                return .task(id: "crash") { _ in throw Odd() }
            case .fetched(let text), .note(let text):
                state.log.append(text)
                return .none
            case .failed(let message, let id):
                state.log.append("\(id): \(message)")
                return .none
            }
        }

        static func failureEvent(_ failure: EffectFailure) -> Event? {
            guard failure.error is Offline else { return nil }
            return .failed(failure.message, id: "\(failure.id)")
        }
    }

    /// The same work with no failure event: every error is logged.
    enum Silent: Machine {
        typealias State = [String]
        enum Event: Equatable, Sendable { case fetch, mapped, stopping, note(String) }
        static var initialState: [String] { [] }

        static func update(_ state: inout [String], event: Event) -> Effect {
            switch event {
            case .fetch:
                return .task(id: "fetch") { _ in throw Offline() }
            case .mapped:
                return .task(id: "mapped", onError: .map { .note("mapped \($0)") }) { _ in throw Offline() }
            case .stopping:
                return .task(id: "stopping", onError: .fail) { _ in throw Offline() }
            case .note(let text):
                state.append(text)
                return .none
            }
        }
    }

    @Test("a thrown error becomes the machine's failure event, with the work's id and the typed error")
    func errorBecomesEvent() async {
        let store = TestStore(Fetcher.self, env: ())
        await store.send(.fetch(fails: true))
        await store.receive(.failed("offline", id: "fetch")) { $0.log = ["fetch: offline"] }
        await store.send(.fetch(fails: false))
        await store.receive(.fetched("data")) { $0.log.append("data") }
        await store.finish()
    }

    @Test("a stream that throws delivers what it yielded, then its failure event")
    func streamErrorAfterElements() async {
        let store = TestStore(Fetcher.self, env: ())
        await store.send(.feed(elements: 2))
        await store.receive(.note("0")) { $0.log = ["0"] }
        await store.receive(.note("1")) { $0.log.append("1") }
        await store.receive(.failed("offline", id: "feed")) { $0.log.append("feed: offline") }
        await store.finish()
    }

    @Test("an error the failure event declines is logged, and the machine runs on")
    func declinedErrorIsLogged() async throws {
        let store = TestStore(Fetcher.self, env: ())
        await store.send(.crash)
        let error = await store.receiveFailure("crash")
        #expect(error is Fetcher.Odd)
        await store.send(.fetch(fails: false))
        await store.receive(.fetched("data")) { $0.log = ["data"] }
        await store.finish()
    }

    @Test("without a failure event the host reports effectFailed and the machine keeps running")
    func noFailureEventKeepsRunning() async throws {
        let failed = Gate()
        let options = HostOptions<Silent>(address: "silent") { diagnostic in
            if case .effectFailed(let id, _) = diagnostic { failed.open("\(id)") }
        }
        let host = MachineHost(Silent.self, options: options)
        host.start()
        try host.send(.fetch)
        #expect(await failed.wait("fetch", within: .seconds(10)))
        #expect(try await host.sendAndWait(.note("still here")) == ["still here"])
        #expect(await !host.hasEnded)
        await host.stop()
    }

    @Test("TestStore fails a test that leaves an effect's error unasserted, naming what to do")
    func unassertedFailureIsReported() async {
        let issues = Gate.Box<[String]>([])
        let store = TestStore(Silent.self, env: (), reportIssue: { message, _ in issues.mutate { $0.append(message) } })
        await store.send(.fetch)
        await store.finish()
        #expect(issues.value.count == 1)
        #expect(issues.value.first?.contains("fetch threw offline") == true, "\(issues.value)")
        #expect(issues.value.first?.contains("failureEvent") == true)
    }

    @Test("an effect's own onError wins over the machine's rule: .map becomes its event, .fail stops")
    func effectPolicyWins() async throws {
        let store = TestStore(Silent.self, env: ())
        await store.send(.mapped)
        await store.receive(.note("mapped offline")) { $0 = ["mapped offline"] }
        await store.finish()

        let host = MachineHost(Silent.self)
        try host.send(.stopping)
        let error = await #expect(throws: HostError.self) { _ = try await host.run() }
        #expect(error?.code == .effectFailed)
    }
}

/// The dialects follow the same rule: Oak's `Effect` without `onError:` and SwiftTea's effects
/// without `catch:` hand the error to the transducer's or program's `failureEvent`, or log it.
@Suite("Errors are events in the dialects", .timeLimit(.minutes(2)))
struct DialectErrorsAsEventsTests {
    enum Loader: EffectTransducer {
        enum State: Equatable, Sendable, NonTerminal { case idle, loading, failed(String) }
        enum Event: Equatable, Sendable { case load, failed(String) }
        static var initialState: State { .idle }

        static func update(_ state: inout State, event: Event) -> Effect? {
            switch event {
            case .load:
                state = .loading
                return Effect(id: "load") { _, _ in throw ErrorsAsEventsTests.Offline() }
            case .failed(let message):
                state = .failed(message)
                return nil
            }
        }

        static func failureEvent(_ failure: EffectFailure) -> Event? { .failed(failure.message) }
    }

    enum Shop: TeaProgram {
        enum Action: Equatable, Sendable { case buy, bought, failed(String) }
        static var initialState: [String] { [] }

        static func reduce(_ state: [String], _ action: Action) -> ([String], Effect) {
            switch action {
            case .buy: (state, .task { throw ErrorsAsEventsTests.Offline() })
            case .bought: (state + ["bought"], .none)
            case .failed(let message): (state + [message], .none)
            }
        }

        static func failureEvent(_ failure: EffectFailure) -> Action? { .failed(failure.message) }
    }

    enum Plain: TeaProgram {
        enum Action: Equatable, Sendable { case buy, note }
        static var initialState: Int { 0 }
        static func reduce(_ state: Int, _ action: Action) -> (Int, Effect) {
            switch action {
            case .buy: (state, .task { throw ErrorsAsEventsTests.Offline() })
            case .note: (state + 1, .none)
            }
        }
    }

    @Test("Oak: an Effect without onError: that throws becomes the transducer's failure event")
    func oak() async {
        let store = TestStore(Oak<Loader>.self, env: ())
        await store.send(.load) { $0 = .loading }
        await store.receive(.failed("offline")) { $0 = .failed("offline") }
        await store.finish()
    }

    @Test("SwiftTea: a task without catch: becomes the program's failure event")
    func tea() async {
        let store = TestStore(Tea<Shop>.self, env: ())
        await store.send(.buy)
        await store.receive(.failed("offline")) { $0 = ["offline"] }
        await store.finish()
    }

    @Test("SwiftTea without a failure event: the error is logged and the program runs on")
    func teaWithout() async {
        let store = TestStore(Tea<Plain>.self, env: ())
        await store.send(.buy)
        let error = await store.receiveFailure()
        #expect(error is ErrorsAsEventsTests.Offline)
        await store.send(.note) { $0 = 1 }
        await store.finish()
    }
}
