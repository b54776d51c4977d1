@_spi(GroveInternal) import GroveWire
import Synchronization

/// The coordinator's current subscriptions, as `observe` messages report them.
final class WatchedTopics: Sendable {
    private let state = Mutex<(version: Int, observation: Observation)>((0, Observation(prefixes: [])))

    func update(_ observation: Observation) {
        state.withLock { $0 = ($0.version + 1, observation) }
    }

    /// A number that changes whenever the subscriptions do, so callers can cache `watches`.
    var version: Int { state.withLock { $0.version } }

    func watches(_ topic: String) -> Bool {
        state.withLock { $0.observation.watches(topic) }
    }
}
