// Seed 000, Oak's "Common Patterns for State Machines": "Loading Data Pattern", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
import Grove

enum DataLoader: EffectTransducer {
    enum State: NonTerminal {
        case idle
        case loading
        case loaded([DataItem])
        case error(Error, canRetry: Bool)
    }
    
    enum Event {
        case load
        case reload
        case dataReceived([DataItem])
        case loadFailed(Error)
        case retry
        case dismiss
    }
    
    struct Env: Sendable {
        var dataService: @Sendable () async throws -> [DataItem]
        var connectivity: @Sendable () -> Bool
    }
    
    static var initialState: State { .idle }
    
    static func update(_ state: inout State, event: Event) -> Effect? {
        switch (state, event) {
        case (.idle, .load), (.error, .retry):
            state = .loading
            return loadDataEffect()
            
        case (.loaded, .reload):
            state = .loading
            return loadDataEffect()
            
        case (.loading, .dataReceived(let items)):
            state = .loaded(items)
            return nil
            
        case (.loading, .loadFailed(let error)):
            let canRetry = error.isRetryable
            state = .error(error, canRetry: canRetry)
            return nil
            
        case (.error, .dismiss):
            state = .idle
            return nil
            
        default:
            return nil
        }
    }
    
    static func loadDataEffect() -> Effect {
        Effect(id: "loadData") { env, input in
            do {
                let items = try await env.dataService()
                try input.send(.dataReceived(items))
            } catch {
                try input.send(.loadFailed(error))
            }
        }
    }
}

extension Error {
    var isRetryable: Bool {
        // Implement retry logic based on error type
        return true
    }
}
