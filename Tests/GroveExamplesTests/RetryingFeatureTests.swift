import Grove
import GroveExamples
import GroveRuntime
import Testing

@Suite("RetryingFeature (TCA-SM dialect)", .timeLimit(.minutes(2)))
struct RetryingFeatureTests {
    /// A fetch the test answers by hand.
    struct FetchCall: IORequest {
        typealias Response = String
    }

    private typealias Feature = RetryingFeature

    private func host(_ calls: PendingCalls<FetchCall>, log: ExampleLog<IOMachine<Feature>.Event> = ExampleLog())
        -> MachineHost<IOMachine<Feature>> {
        let host = MachineHost(IOMachine<Feature>.self, env: Feature { try await calls.handle(FetchCall()) },
                               options: recordingOptions(log))
        host.start()
        return host
    }

    // MARK: Pure reducers

    @Test("start fetches; a failure retries while retries are left, then gives up")
    func retryDecisions() {
        #expect(Feature.reduceInput(.idle, .start) == Feature.transition(.active(retryCount: 0), effect: .request))
        #expect(Feature.reduceIOResult(.active(retryCount: 0), .requestFailed("x"))
            == Feature.transition(.active(retryCount: 1), effect: .retryRequest))
        #expect(Feature.reduceIOResult(.active(retryCount: 2), .requestFailed("x"))
            == Feature.transition(.active(retryCount: 3), effect: .retryRequest))
        #expect(Feature.reduceIOResult(.active(retryCount: 3), .requestFailed("x"))
            == Feature.nextState(.failed(message: "x", retryCount: 3)))
        #expect(Feature.reduceIOResult(.active(retryCount: 1), .requestSucceeded("doc")) == Feature.nextState(.loaded("doc")))
        #expect(Feature.reduceInput(.failed(message: "x", retryCount: 3), .start)
            == Feature.transition(.active(retryCount: 0), effect: .request))
    }

    @Test("cancel moves to idle, which cancels the IO in flight; results outside active are undefined")
    func cancelAndUndefined() {
        #expect(Feature.reduceInput(.active(retryCount: 1), .cancel) == Feature.nextState(.idle))
        #expect(Feature.reduceInput(.idle, .cancel) == Feature.undefined)
        #expect(Feature.reduceIOResult(.idle, .requestSucceeded("late")) == Feature.undefined)
    }

    // MARK: Running in a host

    @Test("two failures then a success: loaded after three attempts")
    func recoversAfterRetries() async throws {
        let calls = PendingCalls<FetchCall>()
        let host = host(calls)
        try host.send(.input(.start))
        try await #require(await calls.next()).fail(IOFailure(.handlerFailed, "timeout"))
        try await #require(await calls.next()).fail(IOFailure(.handlerFailed, "timeout"))
        try await #require(await calls.next()).succeed("document")
        #expect(await awaitState(of: host) { $0 == .loaded("document") } != nil)
        #expect(calls.count == 3)
        #expect(await host.inFlightEffects.isEmpty)
        await host.stop()
    }

    @Test("four failures exhaust the three retries: failed with the last message")
    func exhaustsRetries() async throws {
        let calls = PendingCalls<FetchCall>()
        let host = host(calls)
        try host.send(.input(.start))
        for attempt in 1...4 {
            try await #require(await calls.next()).fail(IOFailure(.handlerFailed, "attempt \(attempt) failed"))
        }
        let state = try #require(await awaitState(of: host) { if case .failed = $0 { true } else { false } })
        #expect(state == .failed(message: "handler-failed: attempt 4 failed", retryCount: 3))
        #expect(await host.inFlightEffects.isEmpty)
        #expect(calls.count == 4)

        // Starting again from failed resets the count.
        #expect(try await host.sendAndWait(.input(.start)) == .active(retryCount: 0))
        try await #require(await calls.next()).succeed("document")
        #expect(await awaitState(of: host) { $0 == .loaded("document") } != nil)
        await host.stop()
    }

    @Test("cancel stops the fetch in flight, and its late result never arrives")
    func cancelInFlight() async throws {
        let calls = PendingCalls<FetchCall>()
        let log = ExampleLog<IOMachine<Feature>.Event>()
        let host = host(calls, log: log)
        _ = try await host.sendAndWait(.input(.start))
        let call = try #require(await calls.next())
        #expect(try await host.sendAndWait(.input(.cancel)) == .idle)
        #expect(await call.cancellation())
        #expect(await host.inFlightEffects.isEmpty)

        await call.succeed("late")
        _ = try await host.sendAndWait(.input(.start))
        try await #require(await calls.next()).succeed("fresh")
        #expect(await awaitState(of: host) { $0 == .loaded("fresh") } != nil)
        #expect(!log.values.contains(.ioResult(.requestSucceeded("late"))))
        await host.stop()
    }
}
