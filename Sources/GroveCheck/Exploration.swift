import Grove

/// What one run of a (state, event) pair gave: the state, the effect as text, and the timers the
/// effect arms and cancels, in the order the host runs them.
struct Step<State> {
    var state: State
    var effect: String
    var isUnhandled: Bool
    var isNone: Bool
    var timers: [TimerOp] = []
    /// The host keeps the event until the state changes (``MachineEffect/postpone``).
    var postpones = false
}

/// What an effect does to the machine's timers, as the walk follows them (``timerOps(_:label:)``).
enum TimerOp: Hashable {
    /// Arms a timer that sends an event of case `label`; an id replaces the timer of that id.
    case arm(Timer)
    case cancel(id: String)
    case cancelAll
}

/// A timer that may be pending: its id (anonymous ones by the case they send), the case of the
/// event it sends, and how reports name it.
struct Timer: Hashable {
    var id: String
    var label: String
    var kind: String
}

/// The timers `effect` arms and cancels, in order; `label` names an event's case.
func timerOps<M: Machine>(_ effect: MachineEffect<M>, label: (M.Event) -> String) -> [TimerOp] {
    switch effect.kind {
    case .timer(let id, _, let event):
        return [.arm(Timer(id: id.map { "\(kindKey($0))\($0)" } ?? "anonymous \(label(event))", label: label(event), kind: timerKind(id)))]
    case .cancel(let id): return [.cancel(id: "\(kindKey(id))\(id)")]
    case .cancelAll: return [.cancelAll]
    case .sequence(_, let effects), .merge(_, let effects): return effects.flatMap { timerOps($0, label: label) }
    case .stateChanged(let effects, _):
        // The host cancels the state timeout before the exit, transition and enter effects.
        return [.cancel(id: "\(kindKey(.stateTimeout))\(EffectID.stateTimeout)")] + effects.flatMap { timerOps($0, label: label) }
    case .none, .unhandled, .events, .output, .work, .io, .postpone: return []
    }
}

/// Keeps a user id `"<state-timeout>"` apart from the reserved one of the same text, and a
/// level's state timeout (`<state-timeout/signingIn>`) likewise.
private func kindKey(_ id: EffectID) -> String {
    id.isReserved ? "reserved " : "id "
}

/// One run of a (state, event) pair in a concrete state the walk visited, as recorded for the
/// analyses that follow the walk (timers, termination).
struct ConcreteStep {
    enum Outcome: Equatable {
        case unhandled
        /// Handled without a change of state and without an effect.
        case fallsThrough
        /// To the concrete state of that index; `nil` past the walk's limit.
        case handled(to: Int?)
    }

    var from: Int
    var pair: StateGraph.Pair
    var to: String
    var outcome: Outcome
    var timers: [TimerOp]
    /// The event was postponed: kept, not a transition.
    var postpones = false
}

/// A breadth-first walk from an initial state: ``next()`` gives each concrete state to try the
/// samples in, ``record(_:event:example:_:again:)`` takes what a pair gave, twice. Terminal
/// states are given too, to find transitions out of them, but never left.
struct Exploration<State> {
    var machine: String
    private(set) var queue: [(state: State, depth: Int)]
    private var index: [String: Int]
    private var position = 0
    private var current = 0
    let node: (State) -> String
    let isTerminal: (State) -> Bool
    let maxDepth: Int?
    private let limit: Int
    let intendedNoOps: [String: [String]]
    /// Indices of the states whose events were tried (neither terminal nor at the depth bound).
    private(set) var expanded: Set<Int> = []
    private(set) var steps: [ConcreteStep] = []
    private(set) var nondeterministic: [StateGraph.Pair] = []
    private(set) var leavesTerminal: [StateGraph.Pair] = []
    /// Pairs whose event the machine postponed, in the order first found.
    private(set) var postponed: [StateGraph.Pair] = []
    private(set) var truncated = false
    /// The timers the machine's start effect arms and cancels (``Machine/startEffect(_:)``).
    let start: [TimerOp]
    /// The enter and exit actions, as text, of what a state draws (``stateActions(_:node:label:)``).
    let actions: ((State) -> [NodeActions])?
    /// Which drawn state is inside which, for a machine whose states nest (``stateNesting(_:node:)``).
    let nesting: ((State) -> [StateGraph.Nesting])?

    init(machine: String, initial: State, node: @escaping (State) -> String, isTerminal: @escaping (State) -> Bool,
         maxDepth: Int?, limit: Int, intendedNoOps: [String: [String]] = [:], start: [TimerOp] = [],
         actions: ((State) -> [NodeActions])? = nil, nesting: ((State) -> [StateGraph.Nesting])? = nil) {
        self.machine = machine
        queue = [(initial, 0)]
        index = [StateGraph.key(initial): 0]
        self.node = node
        self.isTerminal = isTerminal
        self.maxDepth = maxDepth
        self.limit = limit
        self.intendedNoOps = intendedNoOps
        self.start = start
        self.actions = actions
        self.nesting = nesting
    }

    /// The next state to try every sample event in; nil when the walk is over. States at the
    /// depth bound are reached but not tried; terminal states are tried, not left.
    mutating func next() -> State? {
        while position < queue.count {
            let (state, depth) = queue[position]
            current = position
            position += 1
            if isTerminal(state) { return state }
            guard depth < maxDepth ?? .max else { continue }
            expanded.insert(current)
            return state
        }
        return nil
    }

    /// What `event` did in `state`, run twice.
    mutating func record(_ state: State, event: String, example: String, _ first: Step<State>, again second: Step<State>) {
        let pair = StateGraph.Pair(state: node(state), event: event, example: example)
        let to = StateGraph.key(first.state)
        let unchanged = to == StateGraph.key(state)
        if isTerminal(state) {
            // A host stops the machine here and refuses what comes: handling it is dead code.
            if !first.isUnhandled, !(unchanged && first.isNone) { leavesTerminal.append(pair) }
            return
        }
        if to != StateGraph.key(second.state) || first.effect != second.effect { nondeterministic.append(pair) }
        if first.postpones { postponed.append(pair) }
        let outcome: ConcreteStep.Outcome
        if first.isUnhandled {
            outcome = .unhandled
        } else if unchanged, first.isNone {
            outcome = .fallsThrough
        } else if let known = index[to] {
            outcome = .handled(to: known)
        } else if queue.count < limit {
            index[to] = queue.count
            outcome = .handled(to: queue.count)
            queue.append((first.state, queue[current].depth + 1))
        } else {
            truncated = true
            outcome = .handled(to: nil)
        }
        steps.append(ConcreteStep(from: current, pair: pair, to: node(first.state), outcome: outcome, timers: first.timers,
                                  postpones: first.postpones))
    }
}
