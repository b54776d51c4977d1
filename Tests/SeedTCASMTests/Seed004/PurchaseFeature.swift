// Seed 004, TCA-SM: "Resource Validation", a `case` fragment, as written inside a feature of the
// reader's. One change: the seed's key paths read `\\.points` (a doubled backslash, markdown's
// escaping); Swift's is `\.points`.
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

struct PurchaseFeature: StateMachine {
    struct State: Equatable {
        var points: Int
        var showInsufficientPointsAlert = false
        var purchases = 0
    }
    enum Input { case purchase }
    enum IOEffect: Equatable { case completePurchase }
    enum IOResult { case purchaseCompleted }

    static let cost = 30
    static var initialState: State { State(points: 50) }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch input {
        // Seed text
        case .purchase:
            if state.points < cost {
                return nextState(withVar(state, \.showInsufficientPointsAlert, true))
            } else {
                return transition(
                    withVar(state, \.points, state.points - cost),
                    effect: .completePurchase
                )
            }
        // End of seed text
        }
    }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch ioResult {
        case .purchaseCompleted: return nextState(withVar(state, \.purchases, state.purchases + 1))
        }
    }

    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? { .purchaseCompleted }
}
