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
    /// Transitions by case, in the order first taken; ignored pairs are left out.
    public var edges: [Edge]
    /// Pairs the machine returned `.unhandled` for: not complete.
    public var unhandled: [Pair]
    /// Pairs handled without a change of state and without an effect, such as an Oak
    /// transducer's `default: break`: complete by Oak's definition, listed so that they are seen.
    public var ignored: [Pair]
    /// Pairs that gave different states or effects when run twice from the same state.
    public var nondeterministic: [Pair]
    /// Declared state cases the walk never reached.
    public var unreachable: [String]
    /// Declared terminal state cases the walk never reached: runs cannot end there.
    public var unreachableTerminal: [String]

    /// `true` when nothing is unhandled, unreachable or nondeterministic and the walk was complete.
    public var isClean: Bool {
        unhandled.isEmpty && nondeterministic.isEmpty && unreachable.isEmpty && !truncated
    }

    /// Walks every state reachable from `C.Checked.initialState` by `C.sampleEvents`, running
    /// each (state, event) pair twice. Terminal states are not left: a host refuses events there.
    /// - Parameters:
    ///   - subject: The type that names the samples.
    ///   - limit: The most concrete states to visit; the graph says when it was reached.
    /// - Returns: The graph and its findings.
    public static func explore<C: Checkable>(_ subject: C.Type, limit: Int = 10_000) -> StateGraph {
        typealias M = C.Checked
        var walk = Exploration<M.State>(machine: C.checkName, initial: M.initialState, node: C.node(of:),
                                        isTerminal: M.isTerminal, maxDepth: C.maxDepth, limit: limit)
        while let state = walk.next() {
            for event in C.sampleEvents {
                func step() -> Step<M.State> {
                    var next = state
                    let effect = M.step(&next, event: event)
                    return Step(state: next, effect: summary(effect), isUnhandled: effect.isUnhandled, isNone: effect.isNone)
                }
                walk.record(state, event: C.label(of: event), example: "\(state) + \(event)", step(), again: step())
            }
        }
        return walk.graph(declared: C.declaredStates)
    }

    /// How the walk tells concrete states apart.
    static func key(_ value: Any) -> String { String(reflecting: value) }
}

/// The findings of a walk in progress, each kept in the order first found.
private struct Walk {
    var machine: String
    var initial: String
    var reachable = Ordered<String>()
    var terminal = Ordered<String>()
    var edges = Ordered<StateGraph.Edge>()
    var unhandled = Ordered<StateGraph.Pair>(by: { "\($0.state) \($0.event)" })
    var ignored = Ordered<StateGraph.Pair>(by: { "\($0.state) \($0.event)" })
    var nondeterministic = Ordered<StateGraph.Pair>(by: { "\($0.state) \($0.event)" })
    var unreachable: [String] = []
    var unreachableTerminal: [String] = []
    var truncated = false

    init(machine: String, initial: String) {
        self.machine = machine
        self.initial = initial
    }

    mutating func reach(_ node: String, terminal isTerminal: Bool) {
        reachable.insert(node)
        if isTerminal { terminal.insert(node) }
    }

    func graph(exploredStates: Int) -> StateGraph {
        // A pair some concrete state handled is not reported as ignored or unhandled by another.
        // Nor is a nondeterministic pair, whose first run happened to change nothing.
        let handled = Set(edges.elements.map { "\($0.from) \($0.event)" })
            .union(nondeterministic.elements.map { "\($0.state) \($0.event)" })
        return StateGraph(
            machine: machine, initial: initial, exploredStates: exploredStates, truncated: truncated,
            reachable: reachable.elements, terminal: terminal.elements, edges: edges.elements,
            unhandled: unhandled.elements.filter { !handled.contains("\($0.state) \($0.event)") },
            ignored: ignored.elements.filter { !handled.contains("\($0.state) \($0.event)") },
            nondeterministic: nondeterministic.elements,
            unreachable: unreachable, unreachableTerminal: unreachableTerminal
        )
    }
}

/// What one run of a (state, event) pair gave: the state, and the effect as text.
struct Step<State> {
    var state: State
    var effect: String
    var isUnhandled: Bool
    var isNone: Bool
}

/// A breadth-first walk from an initial state: ``next()`` gives each concrete state to try the
/// samples in, ``record(_:event:example:_:again:)`` takes what a pair gave, twice.
struct Exploration<State> {
    private var walk: Walk
    private var queue: [(state: State, depth: Int)]
    private var seen: Set<String>
    private var position = 0
    private let node: (State) -> String
    private let isTerminal: (State) -> Bool
    private let maxDepth: Int?
    private let limit: Int
    private var depth = 0

    init(machine: String, initial: State, node: @escaping (State) -> String, isTerminal: @escaping (State) -> Bool,
         maxDepth: Int?, limit: Int) {
        walk = Walk(machine: machine, initial: node(initial))
        queue = [(initial, 0)]
        seen = [StateGraph.key(initial)]
        self.node = node
        self.isTerminal = isTerminal
        self.maxDepth = maxDepth
        self.limit = limit
    }

    /// The next state to try every sample event in; nil when the walk is over. Terminal states
    /// and states at the depth bound are reached but not left.
    mutating func next() -> State? {
        while position < queue.count {
            let (state, depth) = queue[position]
            position += 1
            walk.reach(node(state), terminal: isTerminal(state))
            guard !isTerminal(state), depth < maxDepth ?? .max else { continue }
            self.depth = depth
            return state
        }
        return nil
    }

    /// What `event` did in `state`, run twice.
    mutating func record(_ state: State, event: String, example: String, _ first: Step<State>, again second: Step<State>) {
        let pair = StateGraph.Pair(state: node(state), event: event, example: example)
        if StateGraph.key(first.state) != StateGraph.key(second.state) || first.effect != second.effect {
            walk.nondeterministic.insert(pair)
        }
        if first.isUnhandled {
            walk.unhandled.insert(pair)
            return
        }
        if StateGraph.key(first.state) == StateGraph.key(state), first.isNone {
            walk.ignored.insert(pair)
            return
        }
        walk.edges.insert(StateGraph.Edge(from: pair.state, event: pair.event, to: node(first.state)))
        if seen.insert(StateGraph.key(first.state)).inserted {
            guard seen.count <= limit else {
                walk.truncated = true
                return
            }
            queue.append((first.state, depth + 1))
        }
    }

    /// The graph, with the `declared` states the walk never reached.
    func graph(declared: [State]) -> StateGraph {
        var walk = walk
        let reached = Set(walk.reachable.elements)
        walk.unreachable = unique(declared.map(node).filter { !reached.contains($0) })
        walk.unreachableTerminal = unique(declared.filter(isTerminal).map(node).filter { !reached.contains($0) })
        var graph = walk.graph(exploredStates: queue.count)
        graph.maxDepth = maxDepth
        return graph
    }
}

/// `values` without repeats, in the order first seen.
private func unique(_ values: [String]) -> [String] {
    var seen: Set<String> = []
    return values.filter { seen.insert($0).inserted }
}

/// Values in the order first inserted, without repeats; `by` says which values count as the same.
private struct Ordered<Element: Hashable> {
    private(set) var elements: [Element] = []
    private var keys: Set<String> = []
    private let identity: (Element) -> String

    init(by identity: @escaping (Element) -> String = { String(reflecting: $0) }) {
        self.identity = identity
    }

    mutating func insert(_ element: Element) {
        guard keys.insert(identity(element)).inserted else { return }
        elements.append(element)
    }
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
