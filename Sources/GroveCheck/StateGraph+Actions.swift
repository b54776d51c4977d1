import Grove

extension StateGraph {
    /// What a state case does besides its transitions, as UML and XState's visualizer write it
    /// in the state: its enter actions (`entry / state timeout 5s sends dialTimedOut`), its exit
    /// actions, and the events it postpones (`send / defer`).
    public struct StateActions: Sendable, Codable, Hashable {
        /// The state's case name.
        public var state: String
        /// What ``StateScoped/enter(_:)`` does in the states of this case, one action a line, in
        /// the order first found.
        public var entry: [String]
        /// What ``StateScoped/exit(_:)`` does, likewise.
        public var exit: [String]
        /// The event cases the machine postpones in this state (``MachineEffect/postpone``).
        public var postponed: [String]

        /// The lines drawn in the state: `entry / …`, `exit / …`, `event / defer`.
        public var lines: [String] {
            entry.map { "entry / \($0)" } + exit.map { "exit / \($0)" } + postponed.map { "\($0) / defer" }
        }
    }
}

extension StateGraph {
    /// A state nested in another (XState's hierarchical states): drawn inside its parent.
    public struct Nesting: Sendable, Codable, Hashable {
        /// The nested state's name, as the graph draws it.
        public var state: String
        /// The state it is directly inside.
        public var parent: String
    }
}

/// A state's enter and exit actions as text, for a machine that has them (a ``StateScoped``
/// one); `nil` for one that has none. A dialect adapter is not `StateScoped`, and its states have
/// no enter or exit to show.
func stateActions<M: Machine>(_ machine: M.Type, label: @escaping (M.Event) -> String) -> ((M.State) -> (entry: [String], exit: [String]))? {
    guard let scoped = machine as? any StateScoped.Type else { return nil }
    func actions<S: StateScoped>(_: S.Type) -> (M.State) -> (entry: [String], exit: [String]) {
        // S is M, seen through the protocol: the casts always succeed.
        let name: (S.Event) -> String = { event in (event as? M.Event).map(label) ?? caseName(of: event) }
        return { state in
            guard let state = state as? S.State else { return ([], []) }
            return (actionLines(S.enter(state), label: name), actionLines(S.exit(state), label: name))
        }
    }
    return actions(scoped)
}

/// An effect as actions for people, one a line: `state timeout 5s sends dialTimedOut`,
/// `cancel poll`, `task fetch`, `io FetchUser`, `raise retry`, `output loggedIn`; merges and
/// sequences by their parts, `.none` as nothing.
func actionLines<M: Machine>(_ effect: MachineEffect<M>, label: (M.Event) -> String) -> [String] {
    switch effect.kind {
    case .none, .unhandled: []
    case .events(let events): events.map { "raise \(label($0))" }
    case .output(let output): ["output \(caseName(of: output))"]
    case .work(let work): [work.kind.rawValue + (work.id.map { " \($0)" } ?? "")]
    case .timer(let id, let delay, let event): ["\(timerKind(id)) \(text(delay)) sends \(label(event))"]
    case .io(_, let call): ["io \(call.requestName)"]
    case .cancel(let id): ["cancel \(id == .stateTimeout || id == .eventTimeout ? timerKind(id) : id.description)"]
    case .cancelAll: ["cancel all"]
    case .sequence(_, let effects), .merge(_, let effects): effects.flatMap { actionLines($0, label: label) }
    case .postpone: ["postpone"]
    case .stateChanged(let effects, _): effects.flatMap { actionLines($0, label: label) }
    }
}

/// How reports name a timer by its id: `state timeout`, `event timeout`, `timer poll`, `timer`.
func timerKind(_ id: EffectID?) -> String {
    switch id {
    case .stateTimeout?: "state timeout"
    case .eventTimeout?: "event timeout"
    case let id?: "timer \(id)"
    case nil: "timer"
    }
}

/// A delay as people write it: `5s`, `250ms`, `1.5s`.
func text(_ delay: Duration) -> String {
    let (seconds, attoseconds) = delay.components
    if attoseconds == 0 { return "\(seconds)s" }
    let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
    if milliseconds < 1000, milliseconds == milliseconds.rounded() { return "\(Int(milliseconds))ms" }
    return "\(Double(seconds) + Double(attoseconds) / 1e18)s"
}
