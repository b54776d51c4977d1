import Foundation
import Grove
import GroveRuntime
import GroveWire

extension Hosted {
    func setEffectsWatched(_ watched: Bool) {
        effectPublisher.withLock { task in
            if watched, task == nil {
                let host = host
                task = link.loop.spawn { await self.publish(effects: await host.effects()) }
            } else if !watched, let running = task {
                running.cancel() // ends the stream's iteration; the host drops the observer
                task = nil
            }
        }
    }

    /// Sends each start and end of work as an `effect` for the coordinator to publish, but io
    /// calls placed on another worker: the coordinator publishes those itself, from the calls
    /// it forwards.
    private func publish(effects: AsyncStream<EffectChange>) async {
        for await change in effects {
            guard let event = Self.event(change, address: address, worker: link.worker, remoteIO: remoteIO) else { continue }
            link.publish(.effect, address: address, payload: event)
        }
    }

    /// The `effect` payload for `change`; nil for an io call the coordinator publishes.
    static func event(_ change: EffectChange, address: String, worker: String, remoteIO: Set<String>) -> LocalEffectEvent? {
        if let request = change.request, remoteIO.contains(request) { return nil }
        // An effect id is a string, an integer or a reserved name: always JSON.
        guard let id = try? JSONValue(parsing: Data(WireJSON.encode(change.id))) else { return nil }
        return LocalEffectEvent(address: address, worker: worker, effect: id, kind: kind(change.kind), phase: phase(change.phase),
                                deadlineNs: change.deadline.map { Self.nanoseconds($0) }, request: change.request)
    }

    static func nanoseconds(_ time: Timestamp) -> Int64 {
        let (seconds, attoseconds) = time.sinceEpoch.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }

    static func kind(_ kind: EffectChange.Kind) -> LocalEffectEvent.Kind {
        switch kind {
        case .timer: .timer
        case .operation: .operation
        case .task: .task
        case .stream: .stream
        case .io: .io
        }
    }

    static func phase(_ phase: EffectChange.Phase) -> LocalEffectEvent.Phase {
        switch phase {
        case .started: .started
        case .fired: .fired
        case .finished: .finished
        case .failed: .failed
        case .cancelled: .cancelled
        case .replaced: .replaced
        case .ended: .ended
        case .passivated: .passivated
        }
    }
}
