import Grove

/// What a walk over a machine's reachable states found: its graph by state case, and the
/// findings that break seed 001's guarantees (completeness, determinism, reachability,
/// termination).
public struct StateGraph: Sendable, Codable, Equatable {
    /// A (state, event) pair, by state case and event case, with one concrete example.
    public struct Pair: Sendable, Codable, Hashable {
        /// The state's case name.
        public var state: String
        /// The event's case name.
        public var event: String
        /// The first concrete state and event the walk found the pair with.
        public var example: String
    }

    /// A transition between two state cases.
    public struct Edge: Sendable, Codable, Hashable {
        /// The state case it leaves.
        public var from: String
        /// The event case that takes it.
        public var event: String
        /// The state case it enters.
        public var to: String
        /// When a timer the machine armed sends the event: how it was armed (`state timeout`,
        /// `event timeout`, `timer poll`); `nil` for an event from outside.
        public var timeout: String? = nil
    }

    /// A state case, with one concrete state of it.
    public struct StateExample: Sendable, Codable, Hashable {
        /// The state's case name.
        public var state: String
        /// A concrete state of that case the finding holds for.
        public var example: String
    }

    /// The name of the checked machine.
    public var machine: String
    /// The initial state's case.
    public var initial: String
    /// Concrete states visited.
    public var exploredStates: Int
    /// How deep the walk went, when the machine bounds it (``Checkable/maxDepth``).
    public var maxDepth: Int? = nil
    /// `true` when the walk stopped at its limit: the findings then cover only part of the machine.
    public var truncated: Bool
    /// State cases reached, in the order first reached.
    public var reachable: [String]
    /// Reached state cases that end the run.
    public var terminal: [String]
    /// Transitions by case, in the order first taken; pairs that fall through are left out.
    public var edges: [Edge]
    /// Pairs the machine returned `.unhandled` for: not complete.
    public var unhandled: [Pair]
    /// Pairs that fall through: handled without a change of state and without an effect, as a
    /// `default: break`, Oak's `return nil` or TCA-SM's `undefined` handle them. Not complete
    /// either, unless ``Checkable/intendedNoOps`` says the pair is meant to do nothing.
    public var fallsThrough: [Pair]
    /// Pairs that fall through and that ``Checkable/intendedNoOps`` marks as meant to.
    public var intendedNoOps: [Pair]
    /// Pairs, unhandled or falling through, of a timer's event in a state where none of the
    /// timers that send it can be pending: the event arrives there only if something outside
    /// the machine sends it, and `.unhandled` is then the right answer. For information.
    public var timerNotArmed: [Pair]
    /// Pairs that gave different states or effects when run twice from the same state.
    public var nondeterministic: [Pair]
    /// Whether the machine declared its states (``Checkable/declaredStates``, or a
    /// `CaseIterable` state): without them, states it never reaches cannot be named and
    /// ``unreachable`` is empty for want of a list.
    public var statesDeclared: Bool = true
    /// Declared state cases the walk never reached.
    public var unreachable: [String]
    /// Declared terminal state cases the walk never reached: runs cannot end there.
    public var unreachableTerminal: [String]
    /// State cases with a state from which no run reaches a terminal state, in a machine that
    /// has terminal states. Empty for a machine that runs until stopped.
    public var cannotEnd: [StateExample]
    /// Pairs a terminal state handles (a change of state or an effect): a host stops the machine
    /// in a terminal state and refuses its events, so such a transition never runs.
    public var leavesTerminal: [Pair]
    /// The state cases with enter or exit actions or postponed events, in the order reached:
    /// what the drawings show in the state; for a ``Statechart``, its levels' too (`twoFactor`).
    /// For information.
    public var actions: [StateActions] = []
    /// Which state is inside which, for a machine whose states nest (a ``Statechart``: its
    /// levels by name, each state in its leaf's parent), parents after their children's first
    /// mention; empty for a flat machine.
    public var nesting: [Nesting] = []

    /// `true` when nothing is unhandled, falls through, is nondeterministic or unreachable, every
    /// state can still end the run, no terminal state handles an event, and the walk was complete.
    public var isClean: Bool { isClean() }

    /// Whether the graph is clean when unhandled pairs, or pairs that fall through, are allowed.
    /// - Parameters:
    ///   - allowingUnhandled: Unhandled pairs do not count (Grove machines say `.unhandled` on purpose).
    ///   - allowingFallThrough: Pairs that fall through do not count (a dialect's `default:` on purpose).
    public func isClean(allowingUnhandled: Bool = false, allowingFallThrough: Bool = false) -> Bool {
        (allowingUnhandled || unhandled.isEmpty) && (allowingFallThrough || fallsThrough.isEmpty)
            && nondeterministic.isEmpty && unreachable.isEmpty && cannotEnd.isEmpty && leavesTerminal.isEmpty && !truncated
    }

    /// Walks every state reachable from `C.Checked.initialState` by `C.sampleEvents`, running
    /// each (state, event) pair twice. Terminal states are not left (a host refuses events
    /// there); their events are tried once, to flag a terminal state that handles one.
    /// - Parameters:
    ///   - subject: The type that names the samples.
    ///   - limit: The most concrete states to visit; the graph says when it was reached.
    /// - Returns: The graph and its findings.
    public static func explore<C: Checkable>(_ subject: C.Type, limit: Int = 10_000) -> StateGraph {
        typealias M = C.Checked
        // A host starting the machine fresh runs its start effect (a StateScoped machine's
        // enter of the initial state): the timers it arms are pending in the initial state.
        var walk = Exploration<M.State>(machine: C.checkName, initial: M.initialState, node: C.node(of:),
                                        isTerminal: M.isTerminal, maxDepth: C.maxDepth, limit: limit,
                                        intendedNoOps: C.intendedNoOps,
                                        start: timerOps(M.startEffect(M.initialState), label: C.label(of:)),
                                        actions: stateActions(M.self, node: C.node(of:), label: C.label(of:)),
                                        nesting: stateNesting(M.self, node: C.node(of:)))
        while let state = walk.next() {
            for event in C.sampleEvents {
                func step() -> Step<M.State> {
                    var next = state
                    let effect = M.step(&next, event: event)
                    return Step(state: next, effect: summary(effect), isUnhandled: effect.isUnhandled, isNone: effect.isNone,
                                timers: timerOps(effect, label: C.label(of:)), postpones: effect.postpones)
                }
                walk.record(state, event: C.label(of: event), example: "\(state) + \(event)", step(), again: step())
            }
        }
        return walk.graph(declared: C.declaredStates)
    }

    /// How the walk tells concrete states apart.
    static func key(_ value: Any) -> String { String(reflecting: value) }
}

/// An effect as text, closures by kind and id, so that two runs of a transition can be compared.
func summary<M: Machine>(_ effect: MachineEffect<M>) -> String {
    switch effect.kind {
    case .none: "none"
    case .unhandled: "unhandled"
    case .events(let events): "events(\(events.map { StateGraph.key($0) }))"
    case .output(let output): "output(\(StateGraph.key(output)))"
    case .work(let work): "\(work.kind.rawValue)(\(work.id.map(\.description) ?? "-"))"
    case .timer(let id, let delay, let event): "after(\(delay), \(id.map(\.description) ?? "-"), \(StateGraph.key(event)))"
    case .io(let id, let call): "io(\(id.map(\.description) ?? "-"), \(call.requestName), \(StateGraph.key(call.request)))"
    case .cancel(let id): "cancel(\(id))"
    case .cancelAll: "cancelAll"
    case .sequence(let id, let effects): "sequence(\(id.map(\.description) ?? "-"), \(effects.map(summary)))"
    case .merge(let id, let effects): "merge(\(id.map(\.description) ?? "-"), \(effects.map(summary)))"
    case .postpone: "postpone"
    case .stateChanged(let effects, let postponing): "stateChanged(\(effects.map(summary))\(postponing ? ", postpone" : ""))"
    }
}
