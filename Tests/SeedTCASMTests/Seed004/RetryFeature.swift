// Seed 004, TCA-SM: "Retry Logic", as written inside a feature of the reader's, between
// `// Seed text` and `// End of seed text`. The seed's `switch` has one case, which Swift refuses
// as not exhaustive (the `State` it builds has `failed` too); the reader's other pairs are added
// inside it (marked). The request itself is the reader's `respond`.
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

struct RetryFeature: StateMachine {
    enum State {
        case idle
        case active(retryCount: Int)
        case succeeded(retryCount: Int)
        case failed(Error, retryCount: Int)
    }
    enum Input { case start }
    enum IOEffect: Equatable { case request, retryRequest }
    enum IOResult { case requestFailed(Error), requestSucceeded }

    /// Answers each request or retry; the test counts and scripts them.
    let respond: @Sendable (IOEffect) async -> IOResult

    static var initialState: State { .idle }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.idle, .start): return transition(.active(retryCount: 0), effect: .request)
        default: return undefined
        }
    }

    // Seed text
    static func reduceIOResult(_ state: State, _ result: IOResult) -> Transition {
        switch (state, result) {
        case (.active(let count), .requestFailed(let error)):
            if count < 3 {
                return transition(.active(retryCount: count + 1), effect: .retryRequest)
            } else {
                return nextState(.failed(error, retryCount: count))
            }
        // Not in the seed, whose switch has one case and so does not compile: the reader's other pairs.
        case (.active(let count), .requestSucceeded):
            return nextState(.succeeded(retryCount: count))
        default:
            return undefined
        }
    }
    // End of seed text

    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? { await respond(ioEffect) }

    static func isTerminal(_ state: State) -> Bool {
        switch state {
        case .succeeded, .failed: true
        case .idle, .active: false
        }
    }
}
