public import Grove

/// Loads data, from its cache when the cache is valid: TCA-SM's "Decision Logic in Reducers"
/// (seed 004), written as an ``IOStateMachine`` with Codable types so that it runs on a worker.
///
/// Whether to use the cache is decided in the pure reducer, from the state, as the seed's
/// "Correct" half does; ``runIOEffect(_:)`` only fetches.
///
/// ```swift
/// let loader = MachineHost(IOMachine<CacheFeature>.self, env: CacheFeature { try await api.latest() })
/// loader.start()
/// try loader.send(.input(.load))   // fetches; the next load answers from the cache
/// ```
public struct CacheFeature: IOStateMachine {
    /// The phase, and the cache beside it.
    public struct State: Codable, Sendable, Equatable {
        /// Where loading is.
        public var phase: Phase
        /// `true` when ``cachedData`` may be shown without fetching.
        public var cacheValid: Bool
        /// The last data fetched.
        public var cachedData: String

        public init(phase: Phase = .idle, cacheValid: Bool = false, cachedData: String = "") {
            self.phase = phase
            self.cacheValid = cacheValid
            self.cachedData = cachedData
        }

        /// Where loading is.
        public enum Phase: Codable, Sendable, Equatable {
            /// Nothing shown yet.
            case idle
            /// Fetching fresh data.
            case loading
            /// Showing data, fresh or cached.
            case loaded(String)
            /// The fetch failed.
            case failed(String)
        }

        /// Showing `data`, which is now the valid cache: the seed's `.loaded(_:)`.
        public static func loaded(_ data: String) -> State { State(phase: .loaded(data), cacheValid: true, cachedData: data) }
    }

    /// What the user does.
    public enum Input: Codable, Sendable, Equatable {
        /// Show the data: from the cache when it is valid, fetched otherwise.
        case load
        /// The cache is stale: the next load fetches.
        case invalidateCache
    }

    /// The IO the feature performs.
    public enum IOEffect: Codable, Sendable, Hashable {
        /// Fetch the data, bypassing the cache.
        case fetchFreshData
    }

    /// What the IO reports.
    public enum IOResult: Codable, Sendable, Equatable {
        /// The data fetched.
        case dataFetched(String)
        /// Why the fetch failed.
        case fetchFailed(String)
    }

    /// Fetches fresh data; the dependency the feature's instance carries.
    public let fetch: @Sendable () async throws -> String

    /// A feature fetching with `fetch`.
    public init(fetch: @escaping @Sendable () async throws -> String) { self.fetch = fetch }

    /// A feature whose fetch returns the same headlines: what `fsm-worker` hosts.
    public static let demo = CacheFeature { "the latest headlines" }

    public static var initialState: State { State() }

    public static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch input {
        case .load:
            guard state.phase != .loading else { return undefined }
            // Seed 004's "Correct: Logic in reducer".
            if state.cacheValid {
                return nextState(.loaded(state.cachedData))  // ✅ Pure decision
            } else {
                return transition(withVar(state, \.phase, .loading), effect: .fetchFreshData)
            }
        case .invalidateCache:
            guard state.cacheValid else { return undefined }
            return nextState(withVar(state, \.cacheValid, false))
        }
    }

    public static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        guard state.phase == .loading else { return undefined }
        switch ioResult {
        case .dataFetched(let data): return nextState(.loaded(data))
        case .fetchFailed(let message): return nextState(withVar(state, \.phase, .failed(message)))
        }
    }

    public func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        switch ioEffect {
        case .fetchFreshData:
            do {
                return .dataFetched(try await fetch())
            } catch {
                return .fetchFailed("\(error)")
            }
        }
    }
}
