import Grove
import Synchronization

/// The structure of a Grove effect, for comparing what a dialect adapter produced.
enum DialectShape: Equatable {
    case none
    case unhandled
    case events(count: Int)
    case output
    case work(id: EffectID?, kind: String, catches: Bool)
    case timer(id: EffectID?)
    case io(id: EffectID?)
    case cancel(EffectID)
    case cancelAll
    case sequence(id: EffectID?, [DialectShape])
    case merge(id: EffectID?, [DialectShape])
    case postpone
    case stateChanged([DialectShape], postponing: Bool)
}

extension MachineEffect {
    var dialectShape: DialectShape {
        switch kind {
        case .none: .none
        case .unhandled: .unhandled
        case .events(let events): .events(count: events.count)
        case .output: .output
        case .work(let work):
            if case .map = work.onError {
                .work(id: work.id, kind: work.kind.rawValue, catches: true)
            } else {
                .work(id: work.id, kind: work.kind.rawValue, catches: false)
            }
        case .timer(let id, _, _): .timer(id: id)
        case .io(let id, _): .io(id: id)
        case .cancel(let id): .cancel(id)
        case .cancelAll: .cancelAll
        case .sequence(let id, let effects): .sequence(id: id, effects.map(\.dialectShape))
        case .merge(let id, let effects): .merge(id: id, effects.map(\.dialectShape))
        case .postpone: .postpone
        case .stateChanged(let effects, let postponing): .stateChanged(effects.map(\.dialectShape), postponing: postponing)
        }
    }

    /// Runs the async work this effect describes, directly (no host), and returns the events it
    /// sent, or the event its error policy made of a thrown error.
    /// - Returns: `nil` when the effect is not work.
    func runWork(env: M.Env) async -> [M.Event]? {
        guard case .work(let work) = kind else { return nil }
        let sent = Recorded<M.Event>()
        do {
            try await work.run(env, Send { sent.append($0) })
        } catch {
            if case .map(let transform) = work.onError { sent.append(transform(error)) }
        }
        return sent.values
    }

    /// The children of a sequence or merge; empty for anything else.
    var children: [MachineEffect] {
        switch kind {
        case .sequence(_, let effects), .merge(_, let effects): effects
        default: []
        }
    }
}

/// Values appended from any task.
final class Recorded<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
}

/// An error thrown by test work.
struct DialectTestFailure: Error, CustomStringConvertible {
    var description: String { "boom" }
}
