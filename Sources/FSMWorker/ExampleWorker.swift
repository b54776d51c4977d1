import Foundation
import Grove
import GroveExamples
import GroveRuntime
import GroveWire
import GroveWorker
import Logging

/// The example machines and in-memory io handlers the shipped `fsm-worker` offers.
enum ExampleWorker {
    /// - Parameters:
    ///   - ioDelay: How long every io request takes, so that cancellation and worker loss can be
    ///     seen in flight (`--io-delay-ms`).
    ///   - cancelGate: A file whose existence a cancelled io handler waits for before its task
    ///     ends (`--io-cancel-gate`, for tests).
    static func configuration(ioDelay: Duration = .zero, cancelGate: String? = nil) -> WorkerConfiguration {
        var worker = WorkerConfiguration()
        worker.register(AuthFlow.self)
        worker.register(AuthFlowChart.self)
        worker.register(DataLoader.self)
        worker.register(PollingService.self)
        worker.register(BufferedConnection.self)
        worker.register(UserForm.self)
        worker.register(OakTransducer<LoginFlow>.self, as: "LoginFlow")
        worker.register(AppNavigator.self)
        worker.register(Tea<Search>.self, as: "Search", env: .inMemory(catalog))
        worker.register(Tea<DebouncedSearch>.self, as: "DebouncedSearch")
        worker.register(StaticStateMachine<LoadingStateMachine>.self, as: "LoadingStateMachine")
        worker.register(AwaitingStateMachine<AwaitingLoadingStateMachine>.self, as: "AwaitingLoadingStateMachine")
        worker.register(RemoteIOMachine<SearchFeature>.self, as: "SearchFeature")
        worker.register(IOMachine<RetryingFeature>.self, as: "RetryingFeature",
                        env: RetryingFeature.flaky(document: "the third time lucky"))
        worker.register(Tea<LocationTracker>.self, as: "LocationTracker", env: .replaying(LocationTracker.demoFixes))
        worker.register(Tea<AppFeature>.self, as: "AppFeature", env: .live)
        worker.register(Tea<UserFeature>.self, as: "UserFeature", env: AppEnvironment.live.api)
        worker.register(IOMachine<PurchaseFeature>.self, as: "PurchaseFeature", env: .demo)
        worker.register(IOMachine<UserPostsFeature>.self, as: "UserPostsFeature", env: .demo)
        worker.register(IOMachine<CacheFeature>.self, as: "CacheFeature", env: .demo)
        worker.register(IOMachine<AuthenticateFeature>.self, as: "AuthenticateFeature", env: AuthenticateFeature(api: .demo))
        worker.register(Oak<PollingLoop>.self, as: "PollingLoop", env: PollingLoop.demo)
        worker.register(Tea<NetworkFeature>.self, as: "NetworkFeature")
        // Seed 002's free reducer itself, registered with a Store's arguments.
        worker.register("NetworkReducer", initialState: NetworkState(), reduce: networkReducer)
        worker.register(Tea<RetryableFetch>.self, as: "RetryableFetch")
        worker.register(Tea<SessionFeature>.self, as: "SessionFeature")
        worker.register(Counter.self)
        worker.register(PlainCounter.self)
        // Described for `--describe` (fsm-check --worker, and the live view's graphs): the
        // machines of the default topology and the dialect ones whose samples GroveExamples has.
        worker.checkable(AuthFlow.self)
        worker.checkable(AuthFlowChart.self)
        worker.checkable(DataLoader.self)
        worker.checkable(PollingService.self)
        worker.checkable(BufferedConnection.self)
        worker.checkable(UserForm.self)
        worker.checkable(AppNavigator.self)
        worker.checkable(LoginFlow.self, as: "LoginFlow")
        worker.checkable(Search.self, as: "Search")
        var io = ExampleHandlers.inMemory()
        io.register(feature: SearchFeature.inMemory(catalog.map(\.title)))
        worker.io = delayed(io, by: ioDelay, cancelGate: cancelGate)
        return worker
    }

    static let catalog = [SearchResult(id: "1", title: "Oak"), SearchResult(id: "2", title: "Oakmoss"),
                          SearchResult(id: "3", title: "Rowan")]

    static func delayed(_ inner: IOHandlers, by delay: Duration, cancelGate: String? = nil) -> IOHandlers {
        guard delay > .zero else { return inner }
        var handlers = IOHandlers()
        func wrap<R: IORequest>(_ type: R.Type) {
            handlers.register(R.self) { request in
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    if let cancelGate { await hold(until: cancelGate, request: R.name) }
                    throw error
                }
                return try await inner.perform(request).get()
            }
        }
        wrap(FetchItems.self)
        wrap(ValidateForm.self)
        wrap(SubmitForm.self)
        wrap(Authenticate.self)
        wrap(VerifyTwoFactor.self)
        wrap(FetchData.self)
        wrap(SearchFeature.IOEffect.self)
        return handlers
    }

    /// Keeps a cancelled handler's task from ending until the file `gate` exists.
    private static func hold(until gate: String, request: String) async {
        let log = Logger(label: "grove.example-io")
        log.notice("io handler cancelled; holding its task until \(gate) exists", metadata: ["request": "\(request)"])
        // A task of its own: the handler's is cancelled, so its sleeps would not wait.
        await Task.detached {
            while !FileManager.default.fileExists(atPath: gate) { try? await Task.sleep(for: .milliseconds(5)) }
        }.value
        log.notice("io handler released; its task ends now", metadata: ["request": "\(request)"])
    }
}

/// A trivial machine for load tests: counts events. Its event and state have generated binary
/// coding (`@BinaryCodable`); ``PlainCounter`` is the same machine through `Codable` alone.
///
/// The count saturates: an `add` or an `increment` that would go past `Int.max` (or below
/// `Int.min`) leaves it there, and the reply shows it, instead of trapping, which would take
/// the worker and every machine on it down (any client with `send` on a counter could). A
/// counter that reads `9223372036854775807` has hit its ceiling; `reset` starts it over.
enum Counter: Machine {
    @BinaryCodable
    enum Event: Codable, Sendable {
        case increment
        case add(Int)
        case reset
        /// Counts as one increment; the text is ignored. Load tests size their events with it.
        case note(String)
    }
    @BinaryCodable
    struct State: Codable, Sendable { var count: Int = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .increment: state.count = state.count.saturatingAdding(1)
        case .add(let amount): state.count = state.count.saturatingAdding(amount)
        case .reset: state.count = 0
        case .note: state.count = state.count.saturatingAdding(1)
        }
        return .none
    }
}

/// ``Counter`` without `@BinaryCodable`: the same events and states, coded through `Codable`,
/// so that load tests can show what the generated coding saves (`fsm-load --machine plain`).
/// Saturates as ``Counter`` does.
enum PlainCounter: Machine {
    enum Event: Codable, Sendable {
        case increment
        case add(Int)
        case reset
        case note(String)
    }
    struct State: Codable, Sendable { var count = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .increment, .note: state.count = state.count.saturatingAdding(1)
        case .add(let amount): state.count = state.count.saturatingAdding(amount)
        case .reset: state.count = 0
        }
        return .none
    }
}

extension Int {
    /// `self + amount`, held at `Int.max` or `Int.min` instead of overflowing (which traps).
    func saturatingAdding(_ amount: Int) -> Int {
        let (sum, overflowed) = addingReportingOverflow(amount)
        guard overflowed else { return sum }
        return amount > 0 ? .max : .min
    }
}
