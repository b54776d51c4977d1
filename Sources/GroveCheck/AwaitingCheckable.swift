public import Grove

/// A StateMachinePackage machine whose transitions may await (an
/// ``AwaitingStateMachineProgram``), explored in its own terms by
/// ``StateGraph/explore(awaiting:limit:)``: each transition is awaited, so the walk sees the
/// state it commits, which the hosted machine only commits when its task comes back.
///
/// ```swift
/// extension AwaitingLoadingStateMachine: AwaitingCheckable {
///     public typealias Program = AwaitingLoadingStateMachine
///     public static var sampleEvents: [Event] { [.loadingWasRequested(id: "3"), …] }
/// }
/// ```
/// A transition that awaits real work (a network call) should be explored with a stand-in for
/// it, as the program's tests would use.
public protocol AwaitingCheckable {
    /// The program the check runs.
    associatedtype Program: AwaitingStateMachineProgram

    /// The name reports and graphs use; defaults to the type's name.
    static var checkName: String { get }

    /// Events tried in every reachable state.
    static var sampleEvents: [Program.Event] { get }

    /// One value for every state case the machine declares; empty by default.
    static var declaredStates: [Program.State] { get }

    /// How many events deep the walk goes; `nil` (the default) for no bound.
    static var maxDepth: Int? { get }

    /// Pairs meant to change nothing and do nothing, by state case and event cases
    /// (``Checkable/intendedNoOps``). Empty by default.
    static var intendedNoOps: [String: [String]] { get }

    /// The node a state is drawn as: by default its enum case name.
    static func node(of state: Program.State) -> String

    /// The label an event is drawn with: by default its enum case name.
    static func label(of event: Program.Event) -> String
}

extension AwaitingCheckable {
    public static var checkName: String { String(describing: Self.self) }

    public static var declaredStates: [Program.State] { [] }

    public static var maxDepth: Int? { nil }

    public static var intendedNoOps: [String: [String]] { [:] }

    public static func node(of state: Program.State) -> String { caseName(of: state) }

    public static func label(of event: Program.Event) -> String { caseName(of: event) }
}

extension StateGraph {
    /// Walks every state reachable from the program's initial state by `C.sampleEvents`,
    /// awaiting each transition, twice per (state, event) pair. As when it is hosted,
    /// `sameState()` without output is unhandled and `sameState(output:)` is handled (its side
    /// effect is the effect compared between the two runs, by its presence and id: it is not
    /// run). The program has no terminal states.
    /// - Parameters:
    ///   - subject: The type that names the samples.
    ///   - limit: The most concrete states to visit.
    public static func explore<C: AwaitingCheckable>(awaiting subject: C.Type, limit: Int = 10_000) async -> StateGraph {
        typealias State = C.Program.State
        let machine = C.Program.stateMachine
        var walk = Exploration<State>(machine: C.checkName, initial: machine.initial, node: C.node(of:),
                                      isTerminal: { _ in false }, maxDepth: C.maxDepth, limit: limit,
                                      intendedNoOps: C.intendedNoOps)
        while let state = walk.next() {
            for event in C.sampleEvents {
                func step() async -> Step<State> {
                    let transition = await machine.transition(state, event)
                    let effect = transition.output.map { "sideEffect(\($0.id.map { $0.description } ?? "-"))" } ?? "none"
                    switch transition {
                    case .sameState(let output):
                        return Step(state: state, effect: effect, isUnhandled: output == nil, isNone: output == nil)
                    case .newState(let next, let output):
                        return Step(state: next, effect: effect, isUnhandled: false, isNone: output == nil)
                    }
                }
                let first = await step()
                walk.record(state, event: C.label(of: event), example: "\(state) + \(event)", first, again: await step())
            }
        }
        return walk.graph(declared: C.declaredStates)
    }
}

extension AwaitingCheckable where Program.Event: CaseIterable {
    public static var sampleEvents: [Program.Event] { Array(Program.Event.allCases) }
}

extension AwaitingCheckable where Program.State: CaseIterable {
    public static var declaredStates: [Program.State] { Array(Program.State.allCases) }
}
