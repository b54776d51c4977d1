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

    @Test("out of retries, retryable throws the last error, which becomes failed; the machine goes on")
    func givesUpAfterMaxRetries() async {
        let store = TestStore(Tea<RetryableFetch>.self)
        await store.send(.fetch(failingAttempts: RetryableFetch.maxRetries + 1)) { $0.isLoading = true }
        await store.receive(.failed("attempt 4 failed")) {
            $0.isLoading = false
            $0.failure = "attempt 4 failed"
        }
        await store.send(.fetch(failingAttempts: 0)) {
            $0.isLoading = true
            $0.failure = nil
        }
        await store.receive(.fetched("fetched on attempt 1")) {
            $0.isLoading = false
            $0.document = "fetched on attempt 1"
        }
        await store.finish()
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
