import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

/// Seed 002's `retryable` effect, as written, in the reader's `RetryableFetch`. Its attempts are
/// `retryDelay` (50 ms) apart in real time: the seed sleeps with `Task.sleep`.
@Suite("RetryableFetch", .timeLimit(.minutes(2)))
struct RetryableFetchTests {
    @Test("failed attempts are retried inside the one effect; the third attempt's document arrives")
    func retriesUntilTheDocumentArrives() async {
        let store = TestStore(Tea<RetryableFetch>.self)
        await store.send(.fetch(failingAttempts: 2)) { $0.isLoading = true }
        await store.sendUnhandled(.fetch(failingAttempts: 0))     // one fetch at a time
        await store.receive(.fetched("fetched on attempt 3")) {
            $0.isLoading = false
            $0.document = "fetched on attempt 3"
        }
        await store.sendUnhandled(.fetched("late"))
        await store.send(.fetch(failingAttempts: 3)) { $0.isLoading = true }
        await store.receive(.fetched("fetched on attempt 4")) {
            $0.isLoading = false
            $0.document = "fetched on attempt 4"
        }
        await store.finish()
    }

    @Test("out of retries, retryable throws the last error, which stops the machine")
    func givesUpAfterMaxRetries() async throws {
        let host = MachineHost(Tea<RetryableFetch>.self)
        host.start()
        _ = try await host.sendAndWait(.fetch(failingAttempts: RetryableFetch.maxRetries + 1))
        do {
            let termination = try await host.run()
            Issue.record("the machine should fail, but ended with \(termination)")
        } catch {
            #expect(error.code == .effectFailed)
            #expect("\(error)".contains("attempt 4 failed"), "\(error)")
        }
    }

    @Test("a negative number of failing attempts is unhandled")
    func negativeAttempts() {
        let (state, effect) = RetryableFetch.reduce(RetryableFetch.initialState, .fetch(failingAttempts: -1))
        guard case .unhandled = effect else {
            Issue.record("expected unhandled, got \(effect)")
            return
        }
        #expect(state == RetryableFetch.initialState)
    }
}
