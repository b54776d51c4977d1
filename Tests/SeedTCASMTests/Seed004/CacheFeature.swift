// Seed 004, TCA-SM: "5. Decision Logic in Reducers", the "Correct" half as written inside a
// feature of the reader's. Its `case` has no `switch` (added, marked). The "Wrong" half is the
// seed's counter-example of logic in IO and is not compiled: its `cache` is not declared and its
// `case` also has no `switch`.
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

struct CacheFeature: StateMachine {
    struct State: Equatable {
        var phase: Phase
        var cacheValid: Bool
        var cachedData: String

        enum Phase: Equatable { case idle, loading, loaded(String) }

        static func loaded(_ data: String) -> State { State(phase: .loaded(data), cacheValid: true, cachedData: data) }
        static var loading: State { State(phase: .loading, cacheValid: false, cachedData: "") }
    }
    enum Input { case load }
    enum IOEffect: Equatable { case fetchFreshData }
    enum IOResult { case dataFetched(String) }

    let fetch: @Sendable () async -> String

    static var initialState: State { State(phase: .idle, cacheValid: false, cachedData: "") }

    // Seed text
    // Correct: Logic in reducer
    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch input { // not in the seed: its `case` has no `switch`
        case .load:
            if state.cacheValid {
                return nextState(.loaded(state.cachedData))  // ✅ Pure decision
            } else {
                return transition(.loading, effect: .fetchFreshData)
            }
        } // not in the seed: closes the switch
    }
    // End of seed text

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch ioResult {
        case .dataFetched(let data): return nextState(.loaded(data))
        }
    }

    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? { .dataFetched(await fetch()) }
}
