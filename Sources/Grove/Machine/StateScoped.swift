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
/// The host runs ``step(_:event:)``: `update`, then, when the key changed, a
/// `stateChanged` effect the host runs as: the cancel of the state timeout, then the exit
/// effect of the state left (``exit(_:)``), the transition's own effect and the enter effect of
/// the state entered (``enter(_:)``), in that order, each as if the transition had returned it
/// alone (XState's order: exit, transition actions, entry; `gen_statem` runs the transition's
/// actions, then its state-enter call), then the events the machine postponed
/// (``MachineEffect/postpone``) delivered again. So a state timeout the transition or the enter
/// effect arms for the new state is the one left. An `.unhandled` event changes nothing, so it
/// never cancels, exits or enters. Working out the default key reflects the state (`Mirror`)
/// twice per event; a machine on a hot path writes ``stateKey(_:)`` as a `switch`.
///
/// The initial state's ``enter(_:)`` runs when a host starts the machine fresh
/// (``Machine/startEffect(_:)``), not when it restores one from a snapshot: what that enter
/// started is in the snapshot already.
public protocol StateScoped: Machine {
    /// What tells two states apart for state timeouts: states with equal keys are one state.
    associatedtype StateKey: Hashable = String

    /// The key of `state`. Defaults to the case name of an enum state; a state that is not an
    /// enum then has one key for all its values, so give it a key of its own.
    static func stateKey(_ state: State) -> StateKey

    /// What runs on entering `state` from a state of another key, whatever the event, and when
    /// the machine starts in it (XState's entry actions, `gen_statem`'s `state_enter`).
    /// Defaults to `.none`.
    static func enter(_ state: State) -> Effect

    /// What runs on leaving `state` for a state of another key, whatever the event (XState's
    /// exit actions). Defaults to `.none`. Called with the state before every event (the state
    /// is not kept to call it later, which would copy it on each event), its effect used only
    /// when the key changes: keep it cheap to build.
    static func exit(_ state: State) -> Effect
}

extension StateScoped where StateKey == String {
    public static func stateKey(_ state: State) -> String { enumCaseName(of: state) }
}

extension StateScoped {
    @inlinable
    public static func enter(_ state: State) -> Grove.MachineEffect<Self> { .none }

    @inlinable
    public static func exit(_ state: State) -> Grove.MachineEffect<Self> { .none }

    /// The enter effect of the initial state.
    @inlinable
    public static func startEffect(_ state: State) -> Grove.MachineEffect<Self> { enter(state) }

    /// `update`; when the state's key changed, its effect between the exit effect of the state
    /// left and the enter effect of the state entered, with the cancel of the state timeout
    /// first and the postponed events after (see ``StateScoped``).
    @inlinable
    public static func step(_ state: inout State, event: Event) -> Grove.MachineEffect<Self> {
        let before = stateKey(state)
        let leaving = exit(state)
        let effect = update(&state, event: event)
        if effect.isUnhandled || stateKey(state) == before { return effect }
        let entering = enter(state)
        var effects: [Grove.MachineEffect<Self>] = []
        if !leaving.isNoneKind { effects.append(leaving) }
        let postponing = effect.isPostponeKind
        if !postponing, !effect.isNoneKind { effects.append(effect) }
        if !entering.isNoneKind { effects.append(entering) }
        return Grove.MachineEffect(kind: .stateChanged(effects, postponing: postponing))
    }
}

extension MachineEffect {
    @inlinable
    var isNoneKind: Bool {
        if case .none = kind { return true }
        return false
    }

    @inlinable
    var isPostponeKind: Bool {
        if case .postpone = kind { return true }
        return false
    }
}

/// The key every value of a state that is not an enum shares (`StateScoped`'s default): not a
/// Swift name, so no case name equals it.
@usableFromInline
let nonEnumStateKey = "*"

/// The default state key: the case name of an enum value (`loading` for `.loading(page: 2)`);
/// for an optional, `nil` for none and the key of the wrapped value otherwise; for every other
/// value (a number, a string, a struct, a tuple) one key, ``nonEnumStateKey``, so it never
/// leaves its state. A case without a payload has no child to name it: its description names
/// it (the case name, unless the enum gives itself a description).
@usableFromInline
func enumCaseName(of value: Any) -> String {
    let mirror = Mirror(reflecting: value)
    switch mirror.displayStyle {
    case .enum:
        if let label = mirror.children.first?.label { return label }
        return String(describing: value)
    case .optional:
        guard let wrapped = mirror.children.first?.value else { return "nil" }
        return enumCaseName(of: wrapped)
    case .struct, .class, .tuple, .collection, .dictionary, .set, .foreignReference, nil:
        return nonEnumStateKey
    @unknown default:
        return nonEnumStateKey
    }
}
