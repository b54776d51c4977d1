/// The findings of a finished walk, worked out from the concrete steps it recorded: pairs by
/// case, the timers that may be pending in each state, and the states that cannot end the run.
extension Exploration {
    /// The graph, with the `declared` states the walk never reached.
    func graph(declared: [State]) -> StateGraph {
        let nodes = queue.map { node($0.state) }
        let pending = pendingTimers()
        let timerEvents = self.timerEvents
        var edges = Ordered<StateGraph.Edge>()
        var handled: Set<String> = Set(nondeterministic.map(Self.key))
        for step in steps {
            guard case .handled = step.outcome else { continue }
            handled.insert(Self.key(step.pair))
            // An event postponed where it leaves the state's case as it was is kept, not taken:
            // drawn in the state (`send / defer`), not as an arrow.
            if step.postpones, step.to == step.pair.state { continue }
            let timer = pending[step.from].first { $0.label == step.pair.event }
            edges.insert(StateGraph.Edge(from: step.pair.state, event: step.pair.event, to: step.to, timeout: timer?.kind))
        }
        // A pair some concrete state handled is neither unhandled nor falls through elsewhere. A
        // timer's event in a state where none of its timers can be pending comes only from
        // outside the machine: listed apart, unless some other concrete state of the case may
        // have the timer pending.
        var unhandled = Ordered<StateGraph.Pair>(by: Self.key), fallsThrough = unhandled, notArmed = unhandled
        var armedSomewhere: Set<String> = []
        for step in steps where !handled.contains(Self.key(step.pair)) {
            let armed = !timerEvents.contains(step.pair.event) || pending[step.from].contains { $0.label == step.pair.event }
            guard armed else {
                notArmed.insert(step.pair)
                continue
            }
            armedSomewhere.insert(Self.key(step.pair))
            if step.outcome == .unhandled { unhandled.insert(step.pair) } else { fallsThrough.insert(step.pair) }
        }
        let intended = fallsThrough.elements.filter { intendedNoOps[$0.state]?.contains($0.event) == true }
        let reached = Ordered<String>(nodes)
        let terminal = Ordered<String>(queue.indices.filter { isTerminal(queue[$0].state) }.map { nodes[$0] })
        let hasTerminal = !terminal.elements.isEmpty || declared.contains(where: isTerminal)
        var graph = StateGraph(
            machine: machine, initial: nodes[0], exploredStates: queue.count, truncated: truncated,
            reachable: reached.elements, terminal: terminal.elements, edges: edges.elements,
            unhandled: unhandled.elements,
            fallsThrough: fallsThrough.elements.filter { intendedNoOps[$0.state]?.contains($0.event) != true },
            intendedNoOps: intended,
            timerNotArmed: notArmed.elements.filter { !armedSomewhere.contains(Self.key($0)) },
            nondeterministic: Ordered(nondeterministic, by: Self.key).elements,
            unreachable: Ordered(declared.map(node).filter { !reached.contains($0) }).elements,
            unreachableTerminal: Ordered(declared.filter(isTerminal).map(node).filter { !reached.contains($0) }).elements,
            cannotEnd: hasTerminal ? cannotEnd() : [],
            leavesTerminal: Ordered(leavesTerminal, by: Self.key).elements
        )
        graph.maxDepth = maxDepth
        graph.statesDeclared = !declared.isEmpty
        graph.actions = stateActions(nodes: nodes)
        if let nesting {
            var found = Ordered<StateGraph.Nesting>(by: { $0.state })
            for item in queue { for entry in nesting(item.state) { found.insert(entry) } }
            graph.nesting = found.elements
        }
        return graph
    }

    /// Each reached state case's enter and exit actions (over its concrete states, in the order
    /// first found) and the events it postpones; cases with none of them are left out.
    private func stateActions(nodes: [String]) -> [StateGraph.StateActions] {
        var entries: [String: Ordered<String>] = [:], exits = entries, postponedEvents = entries
        // A statechart's parent levels are drawn too, each before its children as first reached:
        // a parent's actions are its own, not its leaves'.
        var drawn = Ordered<String>()
        for (index, item) in queue.enumerated() {
            for found in actions?(item.state) ?? [] {
                drawn.insert(found.state)
                for action in found.entry { entries[found.state, default: Ordered()].insert(action) }
                for action in found.exit { exits[found.state, default: Ordered()].insert(action) }
            }
            drawn.insert(nodes[index])
        }
        for pair in postponed { postponedEvents[pair.state, default: Ordered()].insert(pair.event) }
        return drawn.elements.compactMap { node in
            let found = StateGraph.StateActions(state: node, entry: entries[node]?.elements ?? [], exit: exits[node]?.elements ?? [],
                                                postponed: postponedEvents[node]?.elements ?? [])
            return found.entry.isEmpty && found.exit.isEmpty && found.postponed.isEmpty ? nil : found
        }
    }

    private static func key(_ pair: StateGraph.Pair) -> String { "\(pair.state) \(pair.event)" }

    /// The timers that may be pending in each concrete state (by index), when the timers' events
    /// come only from the timers: a fixpoint over the handled steps. A timer's event is delivered
    /// by one of its pending timers, which it consumes (an anonymous one is kept: others may be
    /// pending); any event ends the event timeout (the host cancels it); then the step's effect
    /// arms and cancels in order.
    func pendingTimers() -> [Set<Timer>] {
        let timerEvents = self.timerEvents
        var pending = [Set<Timer>](repeating: [], count: queue.count)
        pending[0] = Self.apply(start, to: [])
        var changed = true
        while changed {
            changed = false
            for step in steps {
                guard case .handled(let to?) = step.outcome else { continue }
                let before = pending[step.from]
                let inputs: [Set<Timer>] = timerEvents.contains(step.pair.event)
                    ? before.filter { $0.label == step.pair.event }.map { $0.id.hasPrefix("anonymous") ? before : before.subtracting([$0]) }
                    : [before]
                for input in inputs {
                    let timers = Self.apply(step.timers, to: input.filter { $0.kind != "event timeout" })
                    if !timers.isSubset(of: pending[to]) {
                        pending[to].formUnion(timers)
                        changed = true
                    }
                }
            }
        }
        return pending
    }

    /// The events some timer sends: those the start effect or a step arms.
    private var timerEvents: Set<String> {
        Set((start + steps.flatMap(\.timers)).compactMap { op -> String? in
            if case .arm(let timer) = op { return timer.label }
            return nil
        })
    }

    /// `timers` after `ops`, in order: an arm replaces the timer of its id.
    private static func apply(_ ops: [TimerOp], to timers: Set<Timer>) -> Set<Timer> {
        var timers = timers
        for op in ops {
            switch op {
            case .arm(let timer):
                timers = timers.filter { $0.id != timer.id }
                timers.insert(timer)
            case .cancel(let id): timers = timers.filter { $0.id != id }
            case .cancelAll: timers = []
            }
        }
        return timers
    }

    /// State cases with a concrete state from which no path of handled steps reaches a terminal
    /// state. States the walk did not try (at the depth bound) and steps past its limit might
    /// go on to one, so they count as able to end.
    private func cannotEnd() -> [StateGraph.StateExample] {
        var canEnd = Set(queue.indices.filter { isTerminal(queue[$0].state) || !expanded.contains($0) })
        var predecessors: [Int: [Int]] = [:]
        for step in steps {
            guard case .handled(let to) = step.outcome else { continue }
            if let to { predecessors[to, default: []].append(step.from) } else { canEnd.insert(step.from) }
        }
        var frontier = Array(canEnd)
        while let next = frontier.popLast() {
            for from in predecessors[next, default: []] where canEnd.insert(from).inserted { frontier.append(from) }
        }
        let stuck = queue.indices.filter { expanded.contains($0) && !canEnd.contains($0) }
            .map { StateGraph.StateExample(state: node(queue[$0].state), example: "\(queue[$0].state)") }
        return Ordered(stuck, by: \.state).elements
    }
}

/// Values in the order first inserted, without repeats; `by` says which values count as the same.
struct Ordered<Element: Hashable> {
    private(set) var elements: [Element] = []
    private var keys: Set<String> = []
    private let identity: (Element) -> String

    init(_ values: [Element] = [], by identity: @escaping (Element) -> String = { String(reflecting: $0) }) {
        self.identity = identity
        for value in values { insert(value) }
    }

    func contains(_ element: Element) -> Bool { keys.contains(identity(element)) }

    mutating func insert(_ element: Element) {
        guard keys.insert(identity(element)).inserted else { return }
        elements.append(element)
    }
}
