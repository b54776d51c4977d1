@_spi(GroveInternal) import GroveWire
import Synchronization

/// The coordinator's current subscriptions, as `observe` messages report them: whether a host
/// starts publishing its state changes.
final class WatchedTopics: Sendable {
    private let observation = Mutex(Observation(prefixes: []))
    /// Whether anything is watched at all, read without the lock: asked per event of a resting
    /// instance (``WorkerRuntime/deliverIfInTable(_:flags:correlation:address:)``), where the lock was a visible share.
    private let watchesAny = Atomic<Bool>(false)

    func update(_ observation: Observation) {
        self.observation.withLock {
            $0 = observation
            watchesAny.store(!observation.prefixes.isEmpty, ordering: .releasing)
        }
    }

    /// Whether any topic is watched at all.
    var watchesAnything: Bool { watchesAny.load(ordering: .acquiring) }

    /// The watched topic prefixes.
    var prefixes: [String] { observation.withLock { $0.prefixes } }

    func watches(_ topic: String) -> Bool {
        observation.withLock { $0.watches(topic) }
    }

    /// Whether `state:<address>` is watched: with no watcher subscribed (the common case, asked
    /// once per instance made), without building the topic.
    func watches(stateOf address: String) -> Bool {
        guard watchesAny.load(ordering: .acquiring) else { return false }
        return observation.withLock { $0.prefixes.isEmpty ? false : $0.watches("state:" + address) }
    }

    /// Whether `effect:<address>` is watched, the same way.
    func watches(effectsOf address: String) -> Bool {
        guard watchesAny.load(ordering: .acquiring) else { return false }
        return observation.withLock { $0.prefixes.isEmpty ? false : $0.watches("effect:" + address) }
    }
}
