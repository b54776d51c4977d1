// Seed 000, Oak's "Common Patterns for State Machines": "Navigation Coordinator Pattern", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
import Grove

enum AppNavigator: EffectTransducer {
    enum Route: Hashable {
        case home
        case profile(User)
        case settings
        case login
        case detail(Item)
    }
    
    enum State: NonTerminal {
        case navigating(stack: [Route], modal: Route?)
    }
    
    enum Event {
        case navigate(Route)
        case push(Route)
        case pop
        case presentModal(Route)
        case dismissModal
        case reset
    }
    
    static var initialState: State {
        .navigating(stack: [.home], modal: nil)
    }
    
    static func update(_ state: inout State, event: Event) -> Effect? {
        switch (state, event) {
        case (.navigating(_, let modal), .navigate(let route)):
            state = .navigating(stack: [route], modal: modal)
            return nil
            
        case (.navigating(var stack, let modal), .push(let route)):
            stack.append(route)
            state = .navigating(stack: stack, modal: modal)
            return nil
            
        case (.navigating(var stack, let modal), .pop):
            if stack.count > 1 {
                stack.removeLast()
            }
            state = .navigating(stack: stack, modal: modal)
            return nil
            
        case (.navigating(let stack, _), .presentModal(let route)):
            state = .navigating(stack: stack, modal: route)
            return nil
            
        case (.navigating(let stack, _), .dismissModal):
            state = .navigating(stack: stack, modal: nil)
            return nil
            
        case (.navigating, .reset):
            state = .navigating(stack: [.home], modal: nil)
            return nil
            
        default:
            return nil
        }
    }
}
