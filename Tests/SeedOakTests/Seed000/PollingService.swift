// Seed 000, Oak's "Common Patterns for State Machines": "Timer and Polling Pattern", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
import Foundation
import Grove

enum PollingService: EffectTransducer {
    enum State: NonTerminal {
        case idle
        case polling(interval: TimeInterval, lastUpdate: Date?)
        case paused(interval: TimeInterval, lastUpdate: Date?)
    }
    
    enum Event {
        case startPolling(interval: TimeInterval)
        case stopPolling
        case pausePolling
        case resumePolling
        case tick
        case dataUpdated(Data)
    }
    
    struct Env: Sendable {
        var fetchData: @Sendable () async throws -> Data
    }
    
    static var initialState: State { .idle }
    
    static func update(_ state: inout State, event: Event) -> Effect? {
        switch (state, event) {
        case (.idle, .startPolling(let interval)):
            state = .polling(interval: interval, lastUpdate: nil)
            return pollingEffect(interval: interval)
            
        case (.polling, .stopPolling), (.paused, .stopPolling):
            state = .idle
            return cancelPollingEffect()
            
        case (.polling(let interval, let lastUpdate), .pausePolling):
            state = .paused(interval: interval, lastUpdate: lastUpdate)
            return cancelPollingEffect()
            
        case (.paused(let interval, let lastUpdate), .resumePolling):
            state = .polling(interval: interval, lastUpdate: lastUpdate)
            return pollingEffect(interval: interval)
            
        case (.polling(let interval, _), .dataUpdated(let data)):
            state = .polling(interval: interval, lastUpdate: Date())
            return nil
            
        case (.polling(let interval, let lastUpdate), .tick):
            state = .polling(interval: interval, lastUpdate: lastUpdate)
            return fetchDataEffect()
            
        default:
            return nil
        }
    }
    
    static func pollingEffect(interval: TimeInterval) -> Effect {
        Effect(id: "polling") { env, input in
            while !Task.isCancelled {
                try input.send(.tick)
                try await Task.sleep(for: .seconds(interval))
            }
        }
    }
    
    static func fetchDataEffect() -> Effect {
        Effect { env, input in
            do {
                let data = try await env.fetchData()
                try input.send(.dataUpdated(data))
            } catch {
                // Handle error appropriately
            }
        }
    }
    
    static func cancelPollingEffect() -> Effect {
        Effect.cancel(id: "polling")
    }
}
