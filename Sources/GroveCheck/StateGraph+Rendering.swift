extension StateGraph {
    /// The graph as a Mermaid state diagram: one node per state case, one arrow per pair of cases
    /// labelled with the events that take it, `[*]` before the initial case and after terminal ones.
    /// An event a timer sends is labelled with the timer: `tick (state timeout)`. A state's enter
    /// and exit actions and the events it postpones are its description, as UML writes them:
    /// `connecting : entry / state timeout 5s sends dialTimedOut`, `connecting : send / defer`.
    ///
    /// ```swift
    /// print(StateGraph.explore(LoginFlow.self).mermaid)
    /// ```
    ///
    /// A state with children (``nesting``) is a composite, `state signingIn { … }`, holding its
    /// children's descriptions and the arrows between them; its own actions are lines of its
    /// label (`state "twoFactor<br/>entry / …" as twoFactor { … }`: Mermaid refuses a description
    /// line for a composite). An arrow between states of different parents is drawn at the top.
    public var mermaid: String {
        var parents: [String: String] = [:]
        var children: [String: [String]] = [:]
        var composites = Ordered<String>()
        for item in nesting where parents[item.state] == nil {
            parents[item.state] = item.parent
            children[item.parent, default: []].append(item.state)
            composites.insert(item.parent)
        }
        let described = Dictionary(actions.map { ($0.state, $0) }, uniquingKeysWith: { first, _ in first })
        let arrows = self.arrows
        /// The lines of the block of `parent` (`nil`: the top), indented by `depth`.
        func block(_ parent: String?, depth: Int) -> [String] {
            let indent = String(repeating: "    ", count: depth)
            let members = parent.map { children[$0] ?? [] } ?? actions.map(\.state).filter { parents[$0] == nil }
            var lines: [String] = []
            // A composite's actions are in its own declaration, below.
            for state in members where children[state] == nil {
                let described = (described[state]?.lines ?? []).map { "\(indent)\(state) : \(mermaidText($0))" }
                // A child named nowhere inside its composite would be drawn outside it.
                lines += described.isEmpty && parent != nil ? [indent + state] : described
            }
            for composite in (parent.map { children[$0] ?? [] } ?? composites.elements.filter { parents[$0] == nil })
                where children[composite] != nil {
                // Mermaid refuses a description line for a composite ("Group nodes can only have
                // label"; with one line it shows the line instead of the name): its actions go
                // in its label, a line each.
                let actions = described[composite]?.lines ?? []
                let label = ([composite] + actions.map(mermaidText)).map { $0.replacingQuotes }.joined(separator: "<br/>")
                lines.append(actions.isEmpty ? "\(indent)state \(composite) {" : "\(indent)state \"\(label)\" as \(composite) {")
                lines += block(composite, depth: depth + 1)
                lines.append("\(indent)}")
            }
            // Arrows between two children of this block; at the top, every other arrow too.
            for (from, to, events) in arrows where parent == nil ? parents[from] != parents[to] || parents[from] == nil
                : parents[from] == parent && parents[to] == parent {
                lines.append("\(indent)\(from) --> \(to): \(mermaidText(events.joined(separator: ", ")))")
            }
            return lines
        }
        var lines = ["stateDiagram-v2", "    [*] --> \(initial)"]
        lines += block(nil, depth: 1)
        for node in terminal { lines.append("    \(node) --> [*]") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The graph in Graphviz DOT: terminal cases drawn as double circles, the initial one bold,
    /// a state's enter and exit actions and postponed events under its name.
    public var dot: String {
        var lines = ["digraph \(quoted(machine)) {", "    rankdir=LR;", "    node [shape=box, style=rounded];"]
        lines.append("    \(quoted(initial)) [penwidth=2];")
        for node in terminal { lines.append("    \(quoted(node)) [shape=doublecircle];") }
        for state in actions {
            lines.append("    \(quoted(state.state)) [label=\(quoted(([state.state] + state.lines).joined(separator: "\\n")))];")
        }
        for (from, to, events) in arrows {
            lines.append("    \(quoted(from)) -> \(quoted(to)) [label=\(quoted(events.joined(separator: "\\n")))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The findings for people: one line per finding, then a verdict.
    public var report: String {
        var lines = ["\(machine): \(exploredStates) states explored, \(reachable.count) state cases reached, "
            + "\(edges.count) transitions" + (maxDepth.map { ", to \($0) events deep" } ?? "") + (truncated ? " (stopped at the limit: findings are partial)" : "")]
        func section(_ title: String, _ items: [String], count: Int? = nil) {
            guard !items.isEmpty else { return }
            lines.append("\(title) (\(count ?? items.count)):")
            lines += items.map { "  \($0)" }
        }
        /// One line per state case: `idle: reload, retry`.
        func byState(_ pairs: [Pair]) -> [String] {
            var order: [String] = []
            var events: [String: [String]] = [:]
            for pair in pairs {
                if events[pair.state] == nil { order.append(pair.state) }
                events[pair.state, default: []].append(pair.event)
            }
            return order.map { "\($0): \(events[$0, default: []].joined(separator: ", "))" }
        }
        section("unhandled pairs", byState(unhandled), count: unhandled.count)
        section("pairs that fall through (no change, no effect: a default:, or intended? see intendedNoOps)",
                byState(fallsThrough), count: fallsThrough.count)
        section("nondeterministic", nondeterministic.map { "\($0.state) + \($0.event)   e.g. \($0.example)" })
        section("unreachable states", unreachable)
        if !statesDeclared {
            lines.append("unreachable states: not judged (no declared states: make State CaseIterable or name them in declaredStates)")
        }
        section("unreachable terminal states", unreachableTerminal)
        section("states that cannot reach a terminal state", cannotEnd.map { "\($0.state)   e.g. \($0.example)" })
        section("events a terminal state handles (never run: the host stops there)", byState(leavesTerminal), count: leavesTerminal.count)
        section("timer events where no timer that sends them is armed (only sent from outside; information)",
                byState(timerNotArmed), count: timerNotArmed.count)
        section("intended no-ops (information)", byState(intendedNoOps), count: intendedNoOps.count)
        section("enter and exit actions, postponed events (information)",
                actions.flatMap { state in state.lines.map { "\(state.state): \($0)" } })
        if terminal.isEmpty { lines.append("no terminal state is reachable: runs never end on their own") }
        lines.append(isClean ? "clean" : "not clean")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Edges grouped by (from, to), in the order first taken, with their events.
    private var arrows: [(from: String, to: String, events: [String])] {
        var order: [String] = []
        var grouped: [String: (from: String, to: String, events: [String])] = [:]
        for edge in edges {
            let key = "\(edge.from)\u{0}\(edge.to)"
            if grouped[key] == nil {
                order.append(key)
                grouped[key] = (edge.from, edge.to, [])
            }
            let label = edge.timeout.map { "\(edge.event) (\($0))" } ?? edge.event
            if grouped[key]?.events.contains(label) == false { grouped[key]?.events.append(label) }
        }
        return order.compactMap { grouped[$0] }
    }

    /// Text Mermaid takes as a state's description or an arrow's label: it ends one at `;` or
    /// `:` (a timer id may hold either) and reads `#` as a comment.
    private func mermaidText(_ text: String) -> String {
        String(text.map { $0 == ";" || $0 == "#" || $0 == ":" ? "," : $0 })
    }

    private func quoted(_ text: String) -> String {
        "\"" + text.map { $0 == "\"" ? "\\\"" : String($0) }.joined() + "\""
    }
}

extension String {
    /// The text inside a Mermaid quoted label, which ends at the first `"`.
    fileprivate var replacingQuotes: String { String(map { $0 == "\"" ? "'" : $0 }) }
}
