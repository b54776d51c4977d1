/// An ``IOStateMachine`` whose IO effects are io requests, so that a topology can run them on
/// another worker: the feature's instance, where ``IOStateMachine/runIOEffect(_:)`` and its
/// dependencies live, becomes the request's handler there (`IOHandlers.register(feature:)` in
/// GroveRuntime), and the machine, run as ``RemoteIOMachine``, needs no instance at all.
///
/// ```swift
/// extension Profile.IOEffect: IORequest {
///     typealias Response = Profile.IOResult
///     static var name: String { "Profile.IOEffect" }   // the default would be "IOEffect"
/// }
/// extension Profile: RemoteIOStateMachine {
///     static func ioFailed(_ effect: IOEffect, _ failure: IOFailure) -> IOResult { .fetchFailed }
/// }
/// worker.register(RemoteIOMachine<Profile>.self, as: "Profile")   // the machine's worker
/// io.register(feature: Profile(api: .live))                        // the io worker's handlers
/// ```
public protocol RemoteIOStateMachine: IOStateMachine where IOEffect: IORequest, IOEffect.Response == IOResult {
    /// The result an IO effect that produced none becomes: no handler, a lost worker, or
    /// ``IOStateMachine/runIOEffect(_:)`` returning `nil`.
    static func ioFailed(_ effect: IOEffect, _ failure: IOFailure) -> IOResult
}

/// Runs a ``RemoteIOStateMachine`` as a Grove ``Machine`` whose IO effects are `.io` requests,
/// under the same one-effect-in-flight rule as ``IOMachine``: a new state cancels the request in
/// flight, a new effect replaces it.
public enum RemoteIOMachine<F: RemoteIOStateMachine>: Machine {
    public typealias State = F.State
    public typealias Event = IOMachine<F>.Event

    public static var initialState: F.State { F.initialState }

    public static func update(_ state: inout F.State, event: Event) -> MachineEffect<RemoteIOMachine> {
        let (next, effect) = switch event {
        case .input(let input): F.reduceInput(state, input)
        case .ioResult(let result): F.reduceIOResult(state, result)
        }
        if let next { state = next }
        if let effect {
            return .io(id: IOMachine<F>.ioEffectID, effect) { result in
                switch result {
                case .success(let value): .ioResult(value)
                case .failure(let failure): .ioResult(F.ioFailed(effect, failure))
                }
            }
        }
        // As in IOMachine: only an input can leave IO of an earlier state behind.
        guard next != nil, case .input = event else { return .none }
        return .cancel(IOMachine<F>.ioEffectID)
    }

    public static func isTerminal(_ state: F.State) -> Bool { F.isTerminal(state) }

    /// Known from the feature's one request type.
    public static var startsReissuableIO: Bool { F.IOEffect.onInterruption == .reissue }
}
