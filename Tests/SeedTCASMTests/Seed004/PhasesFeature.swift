// Seed 004, TCA-SM: "3. Multi-Step Operations as State Phases", as written, as the state of a
// feature of the reader's that walks the phases with one IO effect each. `Token`, `User` and
// `Post` are the reader's.
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

struct PhasesFeature: StateMachine {
    // Seed text
    enum State {
        case ready
        case authenticating
        case fetchingUser(token: Token)
        case fetchingPosts(user: User, token: Token)
        case complete(user: User, posts: [Post])
        case failed(Error)
    }
    // End of seed text

    enum Input { case start }
    enum IOEffect: Hashable { case authenticate, fetchUser(Token), fetchPosts(User) }
    enum IOResult { case token(Token), user(User), posts([Post]), failure(Error) }

    let backend: [IOEffect: IOResult]

    static var initialState: State { .ready }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.ready, .start): return transition(.authenticating, effect: .authenticate)
        default: return undefined
        }
    }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.authenticating, .token(let token)):
            return transition(.fetchingUser(token: token), effect: .fetchUser(token))
        case (.fetchingUser(let token), .user(let user)):
            return transition(.fetchingPosts(user: user, token: token), effect: .fetchPosts(user))
        case (.fetchingPosts(let user, _), .posts(let posts)):
            return nextState(.complete(user: user, posts: posts))
        case (_, .failure(let error)):
            return nextState(.failed(error))
        default:
            return undefined
        }
    }

    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? { backend[ioEffect] }

    static func isTerminal(_ state: State) -> Bool {
        switch state {
        case .complete, .failed: true
        case .ready, .authenticating, .fetchingUser, .fetchingPosts: false
        }
    }
}
