/// A machine whose state timeouts end when it leaves the state that armed them, as
/// `gen_statem`'s `state_timeout` does.
///
/// "The state" is what ``stateKey(_:)`` says: by default the case of an enum state (`.loading`
/// for `.loading(page: 2)`), so a transition that only changes a payload stays in the state.
/// A machine whose states are finer or coarser than its cases derives a key of its own:
///
/// ```swift
/// enum Door: StateScoped {
///     enum State: Equatable { case closed, opening, open(since: Int), closing }
///     enum Event { case open, opened, close, closeNow, closed }
///     static var initialState: State { .closed }
///     // "moving" is one state: the timeout armed on opening still runs while closing.
///     static func stateKey(_ state: State) -> String {
///         switch state {
///         case .opening, .closing: "moving"
///         case .closed: "closed"
///         case .open: "open"
///         }
///     }
///     static func update(_ state: inout State, event: Event) -> Effect {
///         switch (state, event) {
///         case (.closed, .open):
///             state = .opening
///             return .stateTimeout(after: .seconds(10), send: .closeNow)
///         // ...
///         default: return .unhandled
///         }
///     }
/// }
/// ```
///
/// The host runs ``step(_:event:)``: `update`, then, when the key changed, the cancel of the
/// state timeout ahead of the transition's effect, so that a state timeout the transition arms
/// for its new state is the one left. The two travel as an anonymous merge that hosts take
/// apart at the top level, so the effect runs exactly as it would on its own: no group in
/// flight for the merge, and its inline events are not dropped by a `.cancelAll` one of them
/// runs. An `.unhandled` event changes nothing, so it never cancels. Working out the default key reflects the state (`Mirror`) twice per event; a
/// machine on a hot path writes ``stateKey(_:)`` as a `switch`.
public protocol StateScoped: Machine {
    /// What tells two states apart for state timeouts: states with equal keys are one state.
    associatedtype StateKey: Hashable = String

    /// The key of `state`. Defaults to the case name of an enum state; a state that is not an
    /// enum then has one key for all its values, so give it a key of its own.
    static func stateKey(_ state: State) -> StateKey
}

extension StateScoped where StateKey == String {
    public static func stateKey(_ state: State) -> String { enumCaseName(of: state) }
}

extension StateScoped {
    /// `update`, with the cancel of the state timeout first when the state's key changed.
    @inlinable
    public static func step(_ state: inout State, event: Event) -> Grove.MachineEffect<Self> {
        let before = stateKey(state)
        let effect = update(&state, event: event)
        if effect.isUnhandled || stateKey(state) == before { return effect }
        if case .none = effect.kind { return .cancel(.stateTimeout) }
        return .merge([.cancel(.stateTimeout), effect])
    }
}

/// The case name of an enum value (`loading` for `.loading(page: 2)`); for other values, the
/// text before the first parenthesis of their description (the type's name for a struct).
@usableFromInline
func enumCaseName(of value: Any) -> String {
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .enum, let label = mirror.children.first?.label { return label }
    let description = String(describing: value)
    return description.split(separator: "(", maxSplits: 1).first.map(String.init) ?? description
}
