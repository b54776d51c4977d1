public import Grove
import Foundation

/// What an effect will do, as a value tests can compare: the pure side of testing a machine.
///
/// ```swift
/// var state = DataLoader.State.loaded([])
/// let effect = DataLoader.update(&state, event: .reload)
/// #expect(effect.shape == .io(id: "fetch-items", FetchItems(forceRefresh: true)))
/// ```
/// Closures (operations, tasks, streams) cannot be compared, so they appear by kind and id only.
public indirect enum EffectShape<M: Machine>: Sendable {
    case none
    case unhandled
    case events([M.Event])
    case output(M.Output)
    case operation(id: EffectID?)
    case task(id: EffectID?)
    case stream(id: EffectID?)
    case timer(id: EffectID?, delay: Duration, event: M.Event)
    /// An io request, with its handler name and the request value.
    case io(id: EffectID?, name: String, request: any IORequest)
    case cancel(EffectID)
    case cancelAll
    case sequence(id: EffectID?, [EffectShape])
    case merge(id: EffectID?, [EffectShape])
    /// ``MachineEffect/postpone``.
    case postpone
    /// What a ``StateScoped`` machine's `step` returns when the state's key changed: the state
    /// timeout cancelled, then these (exit, transition, enter effects that are not `.none`) as
    /// top-level effects; `postponing` when the transition's own effect was `.postpone`.
    case stateChanged([EffectShape], postponing: Bool)

    /// An io shape for comparisons: `effect.shape == .io(id: "fetch", FetchItems(page: 1))`.
    public static func io<R: IORequest>(id: EffectID?, _ request: R) -> EffectShape {
        .io(id: id, name: R.name, request: request)
    }

    /// The request of an io shape, if it is one of type `R`.
    public func request<R: IORequest>(as type: R.Type) -> R? {
        if case .io(_, _, let request) = self { return request as? R }
        return nil
    }

    /// The leaves in order, with sequences and merges flattened and `.none` left out.
    public var flattened: [EffectShape] {
        switch self {
        case .none: []
        case .sequence(_, let children), .merge(_, let children): children.flatMap(\.flattened)
        case .stateChanged(let children, let postponing):
            [.cancel(.stateTimeout)] + children.flatMap(\.flattened) + (postponing ? [.postpone] : [])
        case .unhandled, .events, .output, .operation, .task, .stream, .timer, .io, .cancel, .cancelAll, .postpone: [self]
        }
    }
}

extension MachineEffect {
    /// This effect as a comparable value.
    public var shape: EffectShape<M> {
        switch kind {
        case .none: .none
        case .unhandled: .unhandled
        case .events(let events): .events(events)
        case .output(let output): .output(output)
        case .work(let work):
            switch work.kind {
            case .operation: .operation(id: work.id)
            case .task: .task(id: work.id)
            case .stream: .stream(id: work.id)
            }
        case .timer(let id, let delay, let event): .timer(id: id, delay: delay, event: event)
        case .io(let id, let call): .io(id: id, name: call.requestName, request: call.request)
        case .cancel(let id): .cancel(id)
        case .cancelAll: .cancelAll
        case .sequence(let id, let effects): .sequence(id: id, effects.map(\.shape))
        case .merge(let id, let effects): .merge(id: id, effects.map(\.shape))
        case .postpone: .postpone
        case .stateChanged(let effects, let postponing): .stateChanged(effects.map(\.shape), postponing: postponing)
        }
    }
}

extension EffectShape: Equatable where M.Event: Equatable, M.Output: Equatable {
    /// io requests compare by name and by value (`Hashable` equality, or else their JSON encoding).
    public static func == (lhs: EffectShape, rhs: EffectShape) -> Bool {
        // By the left side's case (a switch over both sides is too large for the compiler to
        // prove exhaustive), so that a new case must say how it compares.
        switch lhs {
        case .none: if case .none = rhs { return true }
        case .unhandled: if case .unhandled = rhs { return true }
        case .cancelAll: if case .cancelAll = rhs { return true }
        case .events(let a): if case .events(let b) = rhs { return a == b }
        case .output(let a): if case .output(let b) = rhs { return a == b }
        case .operation(let a): if case .operation(let b) = rhs { return a == b }
        case .task(let a): if case .task(let b) = rhs { return a == b }
        case .stream(let a): if case .stream(let b) = rhs { return a == b }
        case .timer(let a, let d1, let e1):
            if case .timer(let b, let d2, let e2) = rhs { return a == b && d1 == d2 && e1 == e2 }
        case .io(let a, let n1, let r1):
            if case .io(let b, let n2, let r2) = rhs { return a == b && n1 == n2 && sameRequest(r1, r2) }
        case .cancel(let a): if case .cancel(let b) = rhs { return a == b }
        case .sequence(let a, let c1): if case .sequence(let b, let c2) = rhs { return a == b && c1 == c2 }
        case .merge(let a, let c1): if case .merge(let b, let c2) = rhs { return a == b && c1 == c2 }
        case .postpone: if case .postpone = rhs { return true }
        case .stateChanged(let c1, let p1): if case .stateChanged(let c2, let p2) = rhs { return c1 == c2 && p1 == p2 }
        }
        return false  // different cases
    }

    /// Hashable requests compare by value; others by their JSON encoding (keys sorted), so two
    /// requests are equal exactly when they would cross a process boundary as the same bytes.
    private static func sameRequest(_ lhs: any IORequest, _ rhs: any IORequest) -> Bool {
        if let left = lhs as? any Hashable, let right = rhs as? any Hashable {
            return AnyHashable(left) == AnyHashable(right)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard type(of: lhs) == type(of: rhs),
              let left = try? encoder.encode(lhs), let right = try? encoder.encode(rhs) else { return false }
        return left == right
    }
}
