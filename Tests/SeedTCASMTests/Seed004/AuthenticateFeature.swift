// Seed 004, TCA-SM: "1. Effect Abstraction", as written inside a feature of the reader's. The
// seed's text is between `// Seed text` and `// End of seed text`; its `runIOEffect` has a `case`
// without a `switch`, the one addition (marked). `api` is the reader's.
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

struct AuthenticateFeature: StateMachine {
    enum State: Equatable { case signedOut, authenticating, signedIn(Profile), failed }
    enum Input { case signIn(String, String) }
    enum IOResult: Equatable { case authenticated(Profile), authFailed }

    let api: AuthAPI

    static var initialState: State { .signedOut }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.signedOut, .signIn(let user, let pass)), (.failed, .signIn(let user, let pass)):
            return transition(.authenticating, effect: .authenticate(username: user, password: pass))
        default:
            return undefined
        }
    }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.authenticating, .authenticated(let profile)): return nextState(.signedIn(profile))
        case (.authenticating, .authFailed): return nextState(.failed)
        default: return undefined
        }
    }

    // Seed text
    enum IOEffect {
        case authenticate(username: String, password: String)
        // Not: authenticateStep1, authenticateStep2, etc.
    }

    func runIOEffect(_ effect: IOEffect) async -> IOResult? {
        switch effect { // not in the seed: its `case` has no `switch`, which Swift requires
        case .authenticate(let user, let pass):
            // Complex orchestration hidden behind simple interface
            guard let token = await api.login(user, pass) else {
                return .authFailed
            }
            guard let profile = await api.fetchProfile(token) else {
                return .authFailed
            }
            return .authenticated(profile)
        } // not in the seed: closes the switch
    }
    // End of seed text
}
