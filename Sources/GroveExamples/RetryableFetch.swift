public import Foundation
public import Grove
import Synchronization

/// Fetches a document with the seed's `retryable` effect: up to ``maxRetries`` retries,
/// ``retryDelay`` apart, inside one effect. The reader's program around seed 002's "Retry Logic",
/// as a ``TeaProgram`` so that it runs on a worker.
///
/// The demo service fails the first `failingAttempts` attempts of a fetch, so retries can be
/// watched: with 3 or fewer the document arrives, naming the attempt that fetched it. With more,
/// every attempt fails and, as the seed writes it, `retryable` throws the last error; errors are
/// events, not stops (docs/DIALECTS.md), so ``failureEvent(_:)`` turns it into `failed` and the
/// machine goes on.
///
/// ```swift
/// let fetch = MachineHost(Tea<RetryableFetch>.self)
/// fetch.start()
/// try fetch.send(.fetch(failingAttempts: 2))   // then .fetched("fetched on attempt 3")
/// ```
public enum RetryableFetch: TeaProgram {
    /// Whether a fetch is in flight, and what the last one fetched.
    public struct State: Codable, Sendable, Equatable {
        /// `true` from `fetch` until the document arrives.
        public var isLoading = false
        /// The last document fetched.
        public var document: String?
        /// Why the last fetch gave up, until the next one starts.
        public var failure: String?

        public init(isLoading: Bool = false, document: String? = nil, failure: String? = nil) {
            self.isLoading = isLoading
            self.document = document
            self.failure = failure
        }
    }

    /// The request, and the document the retried fetch returns.
    public enum Action: Codable, Sendable, Equatable {
        /// Fetch from a demo service whose first `failingAttempts` attempts fail.
        case fetch(failingAttempts: Int)
        /// The fetch succeeded, on some attempt.
        case fetched(String)
        /// Every attempt failed: the last error, as text.
        case failed(String)
    }

    /// Retries after the first attempt.
    public static let maxRetries = 3
    /// Seconds between attempts.
    public static let retryDelay: TimeInterval = 0.05

    public static var initialState: State { State() }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        var next = state
        switch action {
        case .fetch(let failingAttempts):
            guard !state.isLoading, failingAttempts >= 0 else { return (state, .unhandled) }
            next.isLoading = true
            next.failure = nil
            let service = FlakyService(failingAttempts: failingAttempts)
            let request = RetryableRequest(operation: { try service.fetch() }, maxRetries: maxRetries, delay: retryDelay)
            return (next, .retryable(request, transform: { .fetched($0) }))

        case .fetched(let document):
            guard state.isLoading else { return (state, .unhandled) }
            next.isLoading = false
            next.document = document
            return (next, .none)

        case .failed(let message):
            guard state.isLoading else { return (state, .unhandled) }
            next.isLoading = false
            next.failure = message
            return (next, .none)
        }
    }

    /// The error `retryable` throws when it runs out of retries, as the action `failed`.
    public static func failureEvent(_ failure: EffectFailure) -> Action? {
        .failed(failure.message)
    }
}

/// The demo service of one fetch: its first `failingAttempts` calls fail.
private final class FlakyService: Sendable {
    private let attempts = Atomic<Int>(0)
    private let failingAttempts: Int

    init(failingAttempts: Int) { self.failingAttempts = failingAttempts }

    func fetch() throws -> String {
        let attempt = attempts.add(1, ordering: .relaxed).newValue
        guard attempt > failingAttempts else { throw AttemptFailed(attempt: attempt) }
        return "fetched on attempt \(attempt)"
    }
}

/// Why an attempt of the demo service failed.
struct AttemptFailed: Error, CustomStringConvertible {
    var attempt: Int
    var description: String { "attempt \(attempt) failed" }
}
