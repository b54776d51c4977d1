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
        var walk = Walk(machine: C.checkName, initial: C.node(of: M.initialState))
        var queue = [(state: M.initialState, depth: 0)]
        var seen: Set<String> = [key(M.initialState)]
        var next = 0
        while next < queue.count {
            let (state, depth) = queue[next]
            next += 1
            walk.reach(C.node(of: state), terminal: M.isTerminal(state))
            guard !M.isTerminal(state), depth < C.maxDepth ?? .max else { continue }
            for event in C.sampleEvents {
                let pair = Pair(state: C.node(of: state), event: C.label(of: event),
                                example: "\(state) + \(event)")
                var first = state
                let effect = M.update(&first, event: event)
                var second = state
                let again = M.update(&second, event: event)
                if key(first) != key(second) || summary(effect) != summary(again) {
                    walk.nondeterministic.insert(pair)
                }
                if effect.isUnhandled {
                    walk.unhandled.insert(pair)
                    continue
                }
                if key(first) == key(state), effect.isNone {
                    walk.ignored.insert(pair)
                    continue
                }
                walk.edges.insert(Edge(from: pair.state, event: pair.event, to: C.node(of: first)))
                if seen.insert(key(first)).inserted {
                    guard seen.count <= limit else {
                        walk.truncated = true
                        continue
                    }
                    queue.append((first, depth + 1))
                }
            }
        }
        let declared = C.declaredStates
        let reached = Set(walk.reachable.elements)
        walk.unreachable = unique(declared.map(C.node(of:)).filter { !reached.contains($0) })
        walk.unreachableTerminal = unique(declared.filter(M.isTerminal).map(C.node(of:)).filter { !reached.contains($0) })
        var graph = walk.graph(exploredStates: queue.count)
        graph.maxDepth = C.maxDepth
        return graph
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
    }
}
