// Seed 000, Oak's "Common Patterns for State Machines": "Authentication Flow Pattern", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
import Grove

enum AuthFlow: EffectTransducer {
    enum State: Terminable {
        case unauthenticated
        case enteringCredentials(email: String, password: String)
        case authenticating(email: String, password: String)
        case requiresTwoFactor(token: String, email: String)
        case enteringTwoFactor(token: String, email: String, code: String)
        case verifyingTwoFactor(token: String, email: String, code: String)
        case authenticated(User)
        case authenticationFailed(Error, canRetry: Bool)
        case locked
        
        var isTerminal: Bool {
            switch self {
            case .authenticated, .locked: return true
            default: return false
            }
        }
    }
    
    enum Event {
        case startLogin
        case updateEmail(String)
        case updatePassword(String)
        case login
        case authenticationSucceeded(User)
        case authenticationFailed(Error)
        case twoFactorRequired(token: String)
        case updateTwoFactorCode(String)
        case submitTwoFactor
        case twoFactorVerified(User)
        case twoFactorFailed(Error)
        case retry
        case logout
        case accountLocked
    }
    
    struct Env: Sendable {
        var authenticate: @Sendable (String, String) async throws -> AuthResult
        var verifyTwoFactor: @Sendable (String, String) async throws -> User
        var maxAttempts: Int
    }
    
    enum AuthResult {
        case success(User)
        case requiresTwoFactor(token: String)
    }
    
    static var initialState: State { .unauthenticated }
    
    static func update(_ state: inout State, event: Event) -> Effect? {
        switch (state, event) {
        case (.unauthenticated, .startLogin):
            state = .enteringCredentials(email: "", password: "")
            return nil
            
        case (.enteringCredentials(_, let password), .updateEmail(let email)):
            state = .enteringCredentials(email: email, password: password)
            return nil
            
        case (.enteringCredentials(let email, _), .updatePassword(let password)):
            state = .enteringCredentials(email: email, password: password)
            return nil
            
        case (.enteringCredentials(let email, let password), .login):
            state = .authenticating(email: email, password: password)
            return authenticateEffect(email: email, password: password)
            
        case (.authenticating, .authenticationSucceeded(let user)):
            state = .authenticated(user)
            return nil
            
        case (.authenticating, .twoFactorRequired(let token)):
            state = .requiresTwoFactor(token: token, email: extractEmail(from: state))
            return nil
            
        case (.authenticating, .authenticationFailed(let error)):
            let canRetry = !error.isAccountLocked
            if error.isAccountLocked {
                state = .locked
            } else {
                state = .authenticationFailed(error, canRetry: canRetry)
            }
            return nil
            
        case (.requiresTwoFactor(let token, let email), .updateTwoFactorCode(let code)):
            state = .enteringTwoFactor(token: token, email: email, code: code)
            return nil
            
        case (.enteringTwoFactor(let token, let email, let code), .submitTwoFactor):
            state = .verifyingTwoFactor(token: token, email: email, code: code)
            return verifyTwoFactorEffect(token: token, code: code)
            
        case (.verifyingTwoFactor, .twoFactorVerified(let user)):
            state = .authenticated(user)
            return nil
            
        case (.verifyingTwoFactor, .twoFactorFailed(let error)):
            let token = extractToken(from: state)
            let email = extractEmail(from: state)
            state = .requiresTwoFactor(token: token, email: email)
            return nil
            
        case (.authenticationFailed(_, true), .retry):
            state = .enteringCredentials(email: "", password: "")
            return nil
            
        case (.authenticated, .logout):
            state = .unauthenticated
            return nil
            
        default:
            return nil
        }
    }
    
    static func authenticateEffect(email: String, password: String) -> Effect {
        Effect { env, input in
            do {
                let result = try await env.authenticate(email, password)
                switch result {
                case .success(let user):
                    try input.send(.authenticationSucceeded(user))
                case .requiresTwoFactor(let token):
                    // Changed: the seed wrote `.twoFactorRequired(token)`, but the case is declared
                    // `twoFactorRequired(token: String)`; Swift requires the label.
                    try input.send(.twoFactorRequired(token: token))
                }
            } catch {
                try input.send(.authenticationFailed(error))
            }
        }
    }
    
    static func verifyTwoFactorEffect(token: String, code: String) -> Effect {
        Effect { env, input in
            do {
                let user = try await env.verifyTwoFactor(token, code)
                try input.send(.twoFactorVerified(user))
            } catch {
                try input.send(.twoFactorFailed(error))
            }
        }
    }
}
