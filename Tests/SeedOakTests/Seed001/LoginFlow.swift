// Seed 001, Oak's "Understanding Finite State Machines": "Oak's FSM Implementation", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
import Grove

enum LoginFlow: Transducer {
    // Explicit state definition
    enum State: Terminable {
        case start
        case enteringCredentials(email: String, password: String)
        case authenticating(email: String, password: String)
        case authenticated(User)
        case failed(Error)
        case completed
        
        var isTerminal: Bool {
            if case .completed = self { return true }
            return false
        }
    }
    
    // All possible events
    enum Event {
        case startLogin
        case updateEmail(String)
        case updatePassword(String)
        case submitCredentials
        case authenticationSucceeded(User)
        case authenticationFailed(Error)
        case loginComplete
    }
    
    // Pure transition function
    static func update(_ state: inout State, event: Event) -> Void {
        switch (state, event) {
        case (.start, .startLogin):
            state = .enteringCredentials(email: "", password: "")
            
        case (.enteringCredentials(_, let password), .updateEmail(let email)):
            state = .enteringCredentials(email: email, password: password)
            
        case (.enteringCredentials(let email, _), .updatePassword(let password)):
            state = .enteringCredentials(email: email, password: password)
            
        case (.enteringCredentials(let email, let password), .submitCredentials):
            state = .authenticating(email: email, password: password)
            
        case (.authenticating, .authenticationSucceeded(let user)):
            state = .authenticated(user)
            
        case (.authenticating, .authenticationFailed(let error)):
            state = .failed(error)
            
        case (.authenticated, .loginComplete):
            state = .completed
            
        case (.failed, .startLogin):
            state = .enteringCredentials(email: "", password: "")
            
        default:
            // Invalid transitions are explicitly ignored
            break
        }
    }
}
