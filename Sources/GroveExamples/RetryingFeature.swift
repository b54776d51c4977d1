public import Grove
import Synchronization

/// Fetches a document and retries a failed fetch up to three times before giving up: TCA-SM's
/// retry pattern, written as an ``IOStateMachine``.
///
/// The decision to retry is in the pure reducer; ``runIOEffect(_:)`` only performs the fetch with
/// the injected ``fetch`` and reports success or failure as data.
///
/// ```swift
/// let feature = MachineHost(IOMachine<RetryingFeature>.self, env: RetryingFeature { try await api.document() })
/// feature.start()
/// try feature.send(.input(.start))
/// ```
public struct RetryingFeature: IOStateMachine {
    /// Where the fetch is. `retryCount` counts retries after the first attempt.
    public enum State: Codable, Sendable, Equatable {
        /// Nothing requested yet, or cancelled.
        case idle
        /// A fetch is in flight.
        case active(retryCount: Int)
        /// The fetch succeeded.
        case loaded(String)
        /// Every attempt failed; `message` is the last failure.
        case failed(message: String, retryCount: Int)
    }

    /// What the user does.
    public enum Input: Codable, Sendable, Equatable {
        /// Fetch, from `idle` or after giving up.
        case start
        /// Stop fetching; the fetch in flight is cancelled.
        case cancel
    }

    /// The IO the feature performs.
    public enum IOEffect: Codable, Sendable, Hashable {
        /// The first attempt.
        case request
        /// A retry after a failure.
        case retryRequest
    }

    /// What the IO reports.
    public enum IOResult: Codable, Sendable, Equatable {
        /// The fetch returned the document.
        case requestSucceeded(String)
        /// The fetch failed.
        case requestFailed(String)
    }

    /// How many retries follow a failed first attempt before the feature gives up.
    public static let maxRetries = 3

    /// Fetches the document; the dependency the feature's instance carries.
    public let fetch: @Sendable () async throws -> String

    /// A feature fetching with `fetch`.
    public init(fetch: @escaping @Sendable () async throws -> String) { self.fetch = fetch }

    public static var initialState: State { .idle }

    public static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.idle, .start), (.failed, .start):
            transition(.active(retryCount: 0), effect: .request)
        case (.active, .cancel):
            // The fetch in flight is cancelled with the state that started it.
            nextState(.idle)
        case (.active, .start), (.loaded, .start), (.idle, .cancel), (.loaded, .cancel), (.failed, .cancel):
            undefined
        }
    }

    public static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.active, .requestSucceeded(let document)):
            nextState(.loaded(document))
        case (.active(let count), .requestFailed(let message)):
            count < maxRetries
                ? transition(.active(retryCount: count + 1), effect: .retryRequest)
                : nextState(.failed(message: message, retryCount: count))
        case (.idle, _), (.loaded, _), (.failed, _):
            // No fetch in flight: a result here is a stale one.
            undefined
        }
    }

    public func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        switch ioEffect {
        case .request, .retryRequest:
            do {
                return .requestSucceeded(try await fetch())
            } catch {
                return .requestFailed("\(error)")
            }
        }
    }
}

extension RetryingFeature {
    /// A feature whose document service fails two calls, then answers one, in turn: on a fresh
    /// service, `start` fails, retries twice and loads `document`. The calls are counted across
    /// every instance the feature serves. `fsm-worker` hosts it so that retries can be watched.
    /// - Parameter document: What the third call of every three returns.
    public static func flaky(document: String) -> RetryingFeature {
        let calls = Calls()
        return RetryingFeature {
            let call = calls.next()
            guard call % 3 == 2 else { throw ServiceUnavailable(call: call) }
            return document
        }
    }

    /// Counts the calls of a ``flaky(document:)`` service.
    private final class Calls: Sendable {
        private let count = Atomic<Int>(0)
        func next() -> Int { count.add(1, ordering: .relaxed).oldValue }
    }

    /// Why a ``flaky(document:)`` call failed.
    struct ServiceUnavailable: Error, CustomStringConvertible {
        var call: Int
        var description: String { "the document service is unavailable (call \(call + 1))" }
    }
}
