public import Grove

extension StateGraph {
    /// Walks a machine whose events are `CaseIterable`, with no ``Checkable`` conformance: every
    /// event case is a sample, and when `State` is `CaseIterable` too its cases are the declared
    /// states, so that unreachable ones are named. States are drawn and events labelled by case.
    ///
    /// ```swift
    /// enum Lamp: Machine {
    ///     enum State: CaseIterable, Sendable { case off, on, broken }
    ///     enum Event: CaseIterable, Sendable { case toggle }
    ///     …
    /// }
    /// StateGraph.explore(machine: Lamp.self).unreachable   // ["broken"]
    /// ```
    /// - Parameters:
    ///   - machine: The machine.
    ///   - limit: The most concrete states to visit; the graph says when it was reached.
    public static func explore<M: Machine>(machine: M.Type, limit: Int = 10_000) -> StateGraph where M.Event: CaseIterable {
        explore(EveryCase<M>.self, limit: limit)
    }
}

/// A machine checked by its cases alone: its events' `allCases`, and its states' when `State`
/// is `CaseIterable` (looked up at run time: a generic type's conformance cannot ask for it).
private enum EveryCase<M: Machine>: Checkable where M.Event: CaseIterable {
    typealias Checked = M

    static var checkName: String { String(describing: M.self) }

    static var declaredStates: [M.State] {
        guard let iterable = M.State.self as? any CaseIterable.Type else { return [] }
        func cases<C: CaseIterable>(_ type: C.Type) -> [M.State] { C.allCases.compactMap { $0 as? M.State } }
        return cases(iterable)
    }
}
