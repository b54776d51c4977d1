public import GroveCheck
public import Testing

/// Explores `subject`'s reachable states (``StateGraph/explore(_:limit:)``) and records an issue
/// for every finding: each unhandled pair (unless `allowUnhandled`), each pair that falls through
/// (unless `allowFallThrough`, or the machine names it in ``Checkable/intendedNoOps``), each
/// nondeterministic pair, each declared state never reached, each state that cannot reach a
/// terminal one, each event a terminal state handles, and a walk stopped at `limit`.
///
/// ```swift
/// @Test func loginFlowIsComplete() {
///     let graph = expectCompleteStateGraph(LoginFlow.self)
///     #expect(graph.terminal == ["completed"])
/// }
/// ```
/// - Parameters:
///   - subject: The type that names the samples.
///   - allowUnhandled: `true` for machines that return `.unhandled` on purpose.
///   - allowFallThrough: `true` for machines whose `default:` ignores events on purpose (a
///     seed's Oak transducer); naming the pairs in ``Checkable/intendedNoOps`` is narrower.
///   - limit: The most concrete states to visit.
///   - reportIssue: Where each finding goes; the default records it as an issue of the running
///     test. The expectation's own tests pass a collector, to assert the exact findings.
/// - Returns: The graph, for further expectations.
@discardableResult
public func expectCompleteStateGraph<C: Checkable>(
    _ subject: C.Type,
    allowUnhandled: Bool = false,
    allowFallThrough: Bool = false,
    limit: Int = 10_000,
    sourceLocation: SourceLocation = #_sourceLocation,
    reportIssue: (_ message: String, _ sourceLocation: SourceLocation) -> Void = { message, location in
        Issue.record(Comment(rawValue: message), sourceLocation: location)
    }
) -> StateGraph {
    let graph = StateGraph.explore(subject, limit: limit)
    reportFindings(of: graph, allowUnhandled: allowUnhandled, allowFallThrough: allowFallThrough, limit: limit) { reportIssue($0, sourceLocation) }
    return graph
}

/// ``expectCompleteStateGraph(_:allowUnhandled:allowFallThrough:limit:sourceLocation:reportIssue:)`` for a
/// machine whose transitions await (``StateGraph/explore(awaiting:limit:)``).
@discardableResult
public func expectCompleteStateGraph<C: AwaitingCheckable>(
    awaiting subject: C.Type,
    allowUnhandled: Bool = false,
    allowFallThrough: Bool = false,
    limit: Int = 10_000,
    sourceLocation: SourceLocation = #_sourceLocation,
    reportIssue: (_ message: String, _ sourceLocation: SourceLocation) -> Void = { message, location in
        Issue.record(Comment(rawValue: message), sourceLocation: location)
    }
) async -> StateGraph {
    let graph = await StateGraph.explore(awaiting: subject, limit: limit)
    reportFindings(of: graph, allowUnhandled: allowUnhandled, allowFallThrough: allowFallThrough, limit: limit) { reportIssue($0, sourceLocation) }
    return graph
}

/// Each finding of `graph` as a message for `record`.
private func reportFindings(of graph: StateGraph, allowUnhandled: Bool, allowFallThrough: Bool, limit: Int,
                            _ report: (String) -> Void) {
    func record(_ message: String) { report("\(graph.machine): \(message)") }
    if !allowUnhandled {
        for pair in graph.unhandled { record("\(pair.state) + \(pair.event) is unhandled, e.g. \(pair.example)") }
    }
    if !allowFallThrough {
        for pair in graph.fallsThrough {
            record("\(pair.state) + \(pair.event) falls through (no change, no effect), e.g. \(pair.example); "
                + "if it is meant to do nothing, name it in intendedNoOps")
        }
    }
    for state in graph.cannotEnd { record("\(state.state) cannot reach a terminal state, e.g. \(state.example)") }
    for pair in graph.leavesTerminal {
        record("the terminal state \(pair.state) handles \(pair.event), which never runs: a host stops the machine there, e.g. \(pair.example)")
    }
    for pair in graph.nondeterministic {
        record("\(pair.state) + \(pair.event) gave different results when run twice, e.g. \(pair.example)")
    }
    for state in graph.unreachable { record("the declared state \(state) is unreachable from \(graph.initial)") }
    for state in graph.unreachableTerminal { record("the terminal state \(state) cannot be reached: no run ends there") }
    if graph.truncated { record("the walk stopped after \(limit) states; raise the limit or set maxDepth") }
}
