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

/// The enter and exit actions, as text, of one state as drawn (a state case, or a level of a
/// ``Statechart``).
typealias NodeActions = (state: String, entry: [String], exit: [String])

/// A state's enter and exit actions as text, for a machine that has them; `nil` for one that
/// has none. A ``StateScoped`` machine's are its state's, drawn as `node` names the state; a
/// ``Statechart``'s are each active level's (``Statechart/enter(_:state:)``, which it calls
/// instead of the flat hooks), a level drawn by its name (`twoFactor`) and a state's only leaf
/// as `node` names the state. A dialect adapter is not `StateScoped`, and its states have no
/// enter or exit to show.
func stateActions<M: Machine>(_ machine: M.Type, node: @escaping (M.State) -> String, label: @escaping (M.Event) -> String)
    -> ((M.State) -> [NodeActions])?
{
    // S is M, seen through the protocol: the casts always succeed.
    func chart<S: Statechart>(_: S.Type) -> (M.State) -> [NodeActions] {
        let name: (S.Event) -> String = { event in (event as? M.Event).map(label) ?? caseName(of: event) }
        return { state in
            guard let chartState = state as? S.State else { return [] }
            let leaves = S.leaves(of: chartState)
            return S.activeNodes(chartState).map { level in
                (leaves == [level] ? node(state) : String(describing: level),
                 actionLines(S.enter(level, state: chartState), label: name), actionLines(S.exit(level, state: chartState), label: name))
            }
        }
    }
    func scoped<S: StateScoped>(_: S.Type) -> (M.State) -> [NodeActions] {
        let name: (S.Event) -> String = { event in (event as? M.Event).map(label) ?? caseName(of: event) }
        return { state in
            guard let scopedState = state as? S.State else { return [] }
            return [(node(state), actionLines(S.enter(scopedState), label: name), actionLines(S.exit(scopedState), label: name))]
        }
    }
    if let statechart = machine as? any Statechart.Type { return chart(statechart) }
    if let stateScoped = machine as? any StateScoped.Type { return scoped(stateScoped) }
    return nil
}

/// Which drawn state is inside which, for a ``Statechart``; `nil` for a flat machine. A state,
/// drawn as `node` names it, sits in its leaf's parent (a parallel state's in the deepest level
/// its leaves share); each level in its ``Statechart/parent(of:)``, levels by name.
func stateNesting<M: Machine>(_ machine: M.Type, node: @escaping (M.State) -> String) -> ((M.State) -> [StateGraph.Nesting])? {
    func chart<S: Statechart>(_: S.Type) -> (M.State) -> [StateGraph.Nesting] {
        { state in
            guard let chartState = state as? S.State else { return [] }
            let paths = S.leaves(of: chartState).map(S.path(of:))
            guard var shared = paths.first else { return [] }
            for path in paths.dropFirst() { shared = Array(zip(shared, path).prefix { $0 == $1 }.map(\.0)) }
            if paths.count == 1 { shared.removeLast() }
            let names = shared.map { String(describing: $0) }
            guard let inside = names.last else { return [] }
            var nesting = [StateGraph.Nesting(state: node(state), parent: inside)]
            for index in names.indices.dropFirst().reversed() {
                nesting.append(StateGraph.Nesting(state: names[index], parent: names[index - 1]))
            }
            return nesting
        }
    }
    guard let statechart = machine as? any Statechart.Type else { return nil }
    return chart(statechart)
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
    case .cancel(let id): ["cancel \(id.isReserved ? timerKind(id) : id.description)"]
    case .cancelAll: ["cancel all"]
    case .sequence(_, let effects), .merge(_, let effects): effects.flatMap { actionLines($0, label: label) }
    case .postpone: ["postpone"]
    case .stateChanged(let effects, _): effects.flatMap { actionLines($0, label: label) }
    }
}

/// How reports name a timer by its id: `state timeout`, `state timeout of twoFactor` (a
/// ``Statechart`` level's, by the level's name), `event timeout`, `timer poll`, `timer`.
func timerKind(_ id: EffectID?) -> String {
    if let level = id?.stateTimeoutLevel {
        return "state timeout of \(level.split(separator: ".").last.map(String.init) ?? level)"
    }
    return switch id {
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
