// Seed 004, TCA-SM: "2. State-Driven Cancellation", as written inside a feature of the reader's,
// between `// Seed text` and `// End of seed text`. The seed's `switch` has one case; the reader's
// other pairs are added inside it (marked).
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

struct SearchFeature: StateMachine {
    enum State: Equatable { case idle, loading(query: String), loaded([String]) }
    enum Input { case search(String), clear }
    enum IOEffect: Equatable { case search(String) }
    enum IOResult { case results([String]) }

    let search: @Sendable (String) async -> [String]

    static var initialState: State { .idle }

    // Seed text
    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.loading, .search(let newQuery)):
            // Previous search implicitly cancelled by state change
            return transition(.loading(query: newQuery), effect: .search(newQuery))
        // Not in the seed, whose switch has one case and so does not compile: the reader's other pairs.
        case (_, .search(let query)):
            return transition(.loading(query: query), effect: .search(query))
        case (.loading, .clear):
            // Implicit too: leaving `loading` cancels the search.
            return nextState(.idle)
        default:
            return undefined
        }
    }
    // End of seed text

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.loading, .results(let results)): return nextState(.loaded(results))
        default: return undefined
        }
    }

    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        switch ioEffect {
        case .search(let query): return .results(await search(query))
        }
    }
}
