// Seed 000, Oak's "Common Patterns for State Machines": "Timer and Polling Pattern", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/. One seam,
// each line marked `// Seam`, so that TestStore drives it without waiting: the loop sleeps with the
// environment's `sleep` and an update's time comes from its `now`, both real by default. The time
// travels with the update (`dataUpdated(data, at:)`): `update` cannot see the environment, and
// the seed's `Date()` there made the transition depend on when it ran.
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
        case dataUpdated(Data, at: Date) // Seam: the seed has `dataUpdated(Data)`
    }
    
    struct Env: Sendable {
        var fetchData: @Sendable () async throws -> Data
        var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) } // Seam
        var now: @Sendable () -> Date = { Date() } // Seam
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
            
        case (.polling(let interval, _), .dataUpdated(_, let updatedAt)): // Seam: the seed binds `let data`
            state = .polling(interval: interval, lastUpdate: updatedAt) // Seam: the seed reads `Date()`
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
                try await env.sleep(.seconds(interval)) // Seam: the seed calls `Task.sleep(for:)`
            }
        }
    }
    
    static func fetchDataEffect() -> Effect {
        Effect { env, input in
            do {
                let data = try await env.fetchData()
                try input.send(.dataUpdated(data, at: env.now())) // Seam: the seed sends `.dataUpdated(data)`
            } catch {
                // Handle error appropriately
            }
        }
    }
    
    static func cancelPollingEffect() -> Effect {
        Effect.cancel(id: "polling")
    }
}
