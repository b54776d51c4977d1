public import GroveCheck
public import Grove

extension WorkerConfiguration {
    /// Makes a machine describable to `fsm-check`: the worker executable then answers
    /// `--describe NAME` with the machine's explored state graph (``StateGraph``, as JSON), and
    /// `fsm-check --worker shop-worker NAME` checks and draws it as it does a shipped example.
    ///
    /// ```swift
    /// extension Checkout: Checkable {                 // in your machines' module
    ///     public typealias Checked = Checkout
    ///     public static var sampleEvents: [Event] { [.add(cents: 500), .pay, .paid("r-1"), .declined("no")] }
    /// }
    ///
    /// worker.register(Checkout.self)                  // hosted as type "Checkout"
    /// worker.checkable(Checkout.self)                 // described as "Checkout"
    /// ```
    /// Registering for hosting and for describing are separate: the walk runs `C.Checked`, which
    /// is usually the type registered (an adapter, `OakTransducer<LoginFlow>`, for a dialect
    /// type). The walk happens only when asked, never while the worker hosts.
    /// - Parameters:
    ///   - subject: The type that names the samples (``Checkable``).
    ///   - name: The name `--describe` takes and the graph is reported under; defaults to
    ///     ``Checkable/checkName`` (the type's name). Give the topology's type name when the
    ///     machine is registered `as:` another.
    public mutating func checkable<C: Checkable>(_ subject: C.Type, as name: String? = nil) {
        descriptions[name ?? C.checkName] = Description<C>(name: name ?? C.checkName).graph
    }

    /// Makes a StateMachinePackage machine whose transitions await describable to `fsm-check`,
    /// as ``checkable(_:as:)`` does a ``Checkable`` one; each transition is awaited
    /// (``StateGraph/explore(awaiting:limit:)``).
    /// - Parameters:
    ///   - subject: The type that names the samples (``AwaitingCheckable``).
    ///   - name: The name `--describe` takes; defaults to ``AwaitingCheckable/checkName``.
    public mutating func checkable<C: AwaitingCheckable>(awaiting subject: C.Type, as name: String? = nil) {
        descriptions[name ?? C.checkName] = AwaitingDescription<C>(name: name ?? C.checkName).graph
    }

    /// Makes a machine whose events are `CaseIterable` describable with no ``Checkable``
    /// conformance: every event case is tried, and a `CaseIterable` state's cases are the
    /// declared states (``StateGraph/explore(machine:limit:)``).
    /// ```swift
    /// worker.register(Lamp.self)
    /// worker.checkable(machine: Lamp.self)
    /// ```
    /// - Parameters:
    ///   - machine: The machine.
    ///   - name: The name `--describe` takes; defaults to the type's name.
    public mutating func checkable<M: Machine>(machine: M.Type, as name: String? = nil) where M.Event: CaseIterable {
        let name = name ?? String(describing: M.self)
        descriptions[name] = MachineDescription<M>(name: name).graph
    }

    /// The names `--describe` answers for, sorted.
    public var checkableTypes: [String] { descriptions.keys.sorted() }
}

/// A ``Checkable`` machine's walk, under the name the worker describes it by. A value rather
/// than a closure, which would capture the metatype `C.self`.
private struct Description<C: Checkable>: Sendable {
    let name: String

    func graph(limit: Int) async -> StateGraph {
        var graph = StateGraph.explore(C.self, limit: limit)
        graph.machine = name
        return graph
    }
}

/// An ``AwaitingCheckable`` machine's walk, as ``Description`` is a ``Checkable`` one's.
private struct AwaitingDescription<C: AwaitingCheckable>: Sendable {
    let name: String

    func graph(limit: Int) async -> StateGraph {
        var graph = await StateGraph.explore(awaiting: C.self, limit: limit)
        graph.machine = name
        return graph
    }
}

/// A machine described by its cases alone, as ``Description`` is a ``Checkable`` one.
private struct MachineDescription<M: Machine>: Sendable where M.Event: CaseIterable {
    let name: String

    func graph(limit: Int) async -> StateGraph {
        var graph = StateGraph.explore(machine: M.self, limit: limit)
        graph.machine = name
        return graph
    }
}
