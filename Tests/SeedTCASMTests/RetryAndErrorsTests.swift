import Dependencies
import Foundation
import Grove
@testable import SeedTCASMFeatures
import GroveRuntime
import GroveTestSupport
import Synchronization
import Testing

/// Seed 004's "Retry Logic", "Deterministic Error Handling" and "Why Static vs Instance Methods",
/// as the document describes them.
@Suite("Seed 004: retries, errors as results, static and instance", .timeLimit(.minutes(2)))
struct RetryAndErrorsTests {
    struct Refused: Error, Equatable { var attempt: Int }

    /// Counts the requests a feature makes; fails the first `failures` of them.
    final class Backend: Sendable {
        private let attempts = Mutex<[RetryFeature.IOEffect]>([])
        let failures: Int

        init(failures: Int) { self.failures = failures }

        var made: [RetryFeature.IOEffect] { attempts.withLock { $0 } }

        func respond(_ effect: RetryFeature.IOEffect) -> RetryFeature.IOResult {
            let attempt = attempts.withLock { attempts in
                attempts.append(effect)
                return attempts.count
            }
            return attempt <= failures ? .requestFailed(Refused(attempt: attempt)) : .requestSucceeded
        }
    }

    @Test("Retry Logic: a failure below three retries retries; the third retry's failure fails")
    func retryReducer() {
        let retried = RetryFeature.reduceIOResult(.active(retryCount: 2), .requestFailed(Refused(attempt: 3)))
        guard case .active(retryCount: 3) = retried.0 else {
            Issue.record("expected active(retryCount: 3), got \(String(describing: retried.0))")
            return
        }
        #expect(retried.1 == .retryRequest)

        let failed = RetryFeature.reduceIOResult(.active(retryCount: 3), .requestFailed(Refused(attempt: 4)))
        guard case .failed(let error, retryCount: 3) = failed.0 else {
            Issue.record("expected failed(_, retryCount: 3), got \(String(describing: failed.0))")
            return
        }
        #expect(error as? Refused == Refused(attempt: 4), "the last error is kept")
        #expect(failed.1 == nil)
    }

    @Test("Retry Logic on a host: a request and three retries, then failed with the last error")
    func retriesRunOut() async throws {
        let backend = Backend(failures: .max)
        let host = MachineHost(IOMachine<RetryFeature>.self, env: RetryFeature { backend.respond($0) })
        try host.send(.input(.start))
        let termination = try await host.run()
        guard case .failed(let error, retryCount: 3) = termination.finalState else {
            Issue.record("expected failed(_, retryCount: 3), got \(termination.finalState)")
            return
        }
        #expect(error as? Refused == Refused(attempt: 4))
        #expect(backend.made == [.request, .retryRequest, .retryRequest, .retryRequest])
    }

    @Test("Retry Logic on a host: a request that succeeds on its second retry")
    func retrySucceeds() async throws {
        let backend = Backend(failures: 2)
        let host = MachineHost(IOMachine<RetryFeature>.self, env: RetryFeature { backend.respond($0) })
        try host.send(.input(.start))
        let termination = try await host.run()
        guard case .succeeded(retryCount: 2) = termination.finalState else {
            Issue.record("expected succeeded(retryCount: 2), got \(termination.finalState)")
            return
        }
        #expect(backend.made == [.request, .retryRequest, .retryRequest])
    }

    @Test("Deterministic Error Handling: errors arrive as results, the same result gives the same state")
    func errorsAreResults() async throws {
        let loads = Mutex(0)
        let api = ProfileAPI(
            fetch: { () async throws(NetworkError) -> Data in
                let attempt = loads.withLock { count in
                    count += 1
                    return count
                }
                if attempt == 1 { throw NetworkError.offline }
                return Data("ada".utf8)
            },
            save: { _ async throws(DatabaseError) in throw DatabaseError.diskFull })
        let host = MachineHost(IOMachine<ErrorHandlingFeature>.self, env: ErrorHandlingFeature(api: api))
        host.start()
        try host.send(.input(.load))
        #expect(await host.firstState(within: .seconds(10)) { $0 == .loadFailed(.offline) } != nil)
        try host.send(.input(.load))     // the machine is still running: the error was a result
        #expect(await host.firstState(within: .seconds(10)) { $0 == .loaded(Data("ada".utf8)) } != nil)
        try host.send(.input(.save))
        #expect(await host.firstState(within: .seconds(10)) { $0 == .saveFailed(Data("ada".utf8), .diskFull) } != nil)
        await host.stop()

        let failure = ErrorHandlingFeature.IOResult.dataLoaded(.failure(.status(503)))
        let first = ErrorHandlingFeature.reduceIOResult(.loading, failure)
        #expect(first == (.loadFailed(.status(503)), nil))
        #expect(ErrorHandlingFeature.reduceIOResult(.loading, failure) == first)
    }

    @Test("Deterministic Error Handling: a runIOEffect that throws does not conform; without throws it does")
    func throwingRunIOEffectDoesNotConform() async throws {
        // One swiftc run for both features (a second would double a heavy process): the
        // compiler must refuse the throwing one and only it.
        func feature(_ name: String, _ effects: String) -> String {
            """
            struct \(name): IOStateMachine {
                enum State: Sendable { case idle }
                enum Input: Sendable { case load }
                enum IOEffect: Sendable { case fetch }
                enum IOResult: Sendable { case fetched }
                static var initialState: State { .idle }
                static func reduceInput(_ state: State, _ input: Input) -> Transition { (nil, .fetch) }
                static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition { (nil, nil) }
                func runIOEffect(_ effect: IOEffect) \(effects) -> IOResult? { .fetched }
            }
            """
        }
        let result = try await typeCheck("import Grove\n" + feature("Plain", "async") + "\n" + feature("Throwing", "async throws"))
        #expect(result.status != 0, "a feature whose runIOEffect throws compiled")
        #expect(result.output.contains("type 'Throwing' does not conform"), "\(result.output)")
        #expect(!result.output.contains("'Plain'"), "the feature without throws should compile: \(result.output)")
    }

    @Test("Why Static vs Instance: the reducer needs no instance, IO uses the instance's service")
    func staticAndInstance() async throws {
        struct Stub: APIService {
            func fetchData() async -> MyFeature.IOResult? { .dataFetched("from the service") }
        }
        struct Fixed: LocationManager {
            var lastFix: String? { "52.5,13.4" }
        }
        #expect(MyFeature.reduceInput(.idle, .load) == (.loading, .fetchData))

        let feature = withDependencies { $0.locationManager = Fixed() } operation: { MyFeature(apiService: Stub()) }
        #expect(feature.locationManager.lastFix == "52.5,13.4", "the instance holds the dependency")
        let host = MachineHost(IOMachine<MyFeature>.self, env: feature)
        host.start()
        try host.send(.input(.load))
        #expect(await host.firstState(within: .seconds(10)) { $0 == .loaded("from the service") } != nil)
        await host.stop()
    }
}
