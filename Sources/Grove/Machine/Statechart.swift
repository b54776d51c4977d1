/// A machine whose states nest (XState's hierarchical and parallel states, `gen_statem` with a
/// state tree), compiled down to the one pure ``Machine/step(_:event:)`` every host runs.
///
/// The machine names its levels in a `Node` enum, says which node is inside which
/// (``parent(of:)``) and which leaves the state is in (``leaves(of:)``: one, or one per region
/// of a parallel state). The state itself can be nested enums or anything else; only the nodes
/// carry the tree:
///
/// ```swift
/// enum Player: Statechart {
///     enum State: Codable, Sendable { case off, on(Mode) }
///     enum Mode: Codable, Sendable { case paused, playing }
///     enum Event: Codable, Sendable { case power, play, pause }
///     enum Node: Hashable, Sendable { case off, on, paused, playing }
///     static var initialState: State { .off }
///
///     static func parent(of node: Node) -> Node? {
///         switch node {
///         case .off, .on: nil
///         case .paused, .playing: .on
///         }
///     }
///     static func leaves(of state: State) -> [Node] {
///         switch state {
///         case .off: [.off]
///         case .on(.paused): [.paused]
///         case .on(.playing): [.playing]
///         }
///     }
///     static func handle(_ event: Event, in node: Node, state: inout State) -> Effect {
///         switch (node, event) {
///         case (.playing, .pause): state = .on(.paused); return .none
///         case (.paused, .play): state = .on(.playing); return .none
///         case (.on, .power): state = .off; return .none       // whatever `on`'s child is
///         case (.off, .power): state = .on(.paused); return .none
///         case (.off, _), (.on, _), (.paused, _), (.playing, _): return .unhandled
///         }
///     }
///     static func enter(_ node: Node, state: State) -> Effect { ... }
/// }
/// ```
///
/// **Handling.** An event goes to the active leaf's ``handle(_:in:state:)``; when that returns
/// `.unhandled`, to its parent's, and so on up to a top-level node; `.unhandled` from every
/// level is the machine's `.unhandled` (reported as ever). So a child passes an event on by
/// returning `.unhandled`: switch over the node without `default:` (the compiler then asks
/// about every node added later) and return `.unhandled` for what a node does not take. A
/// catch-all returning `.unhandled` hides nothing from `fsm-check`, which reports the pairs no
/// level takes; one returning anything else is what it cannot judge. In a
/// parallel state each region gets the event in turn (in the order ``leaves(of:)`` gives), each
/// bubbling up to the region's root, and every region that handles it does; only when none
/// does does the parallel node's own handler get it.
///
/// **Enter and exit.** A transition's exited nodes are those active before and not after,
/// its entered ones those active after and not before. Exits run innermost first (up to, not
/// including, the nearest common ancestor), then the transition's effect, then enters
/// outermost first (XState's order). A move between two children of one parent exits and
/// enters only them; a transition that keeps every active node (a self-transition of a leaf,
/// a change of payload) runs none. The host runs them as it runs ``StateScoped``'s.
///
/// **State timeouts.** ``MachineEffect/stateTimeout(after:in:send:)`` names its level: it
/// is cancelled when the machine leaves that node, so one armed for a parent survives moves
/// between its children. The plain ``MachineEffect/stateTimeout(after:send:)`` belongs to the
/// whole key (the active leaves): any change of leaf cancels it.
///
/// **Key.** ``StateScoped/stateKey(_:)`` is the active path, node names joined by dots
/// (`signedIn.twoFactor`), and, in a parallel state, one path per leaf joined by `|`
/// (`media.player.playing|media.volume.muted`). Postpone keeps an event until it changes, as
/// for every ``StateScoped`` machine. A node's name is `String(describing:)` of it (its case
/// name): keep names free of `.` and `|`. `fsm-check` reads the nesting from the key, or from
/// ``parent(of:)``.
///
/// The machine writes no `update` and no flat `enter(_:)`/`exit(_:)`: ``update(_:event:)`` is
/// the bubbling above, and the flat hooks of ``StateScoped`` are not called for a statechart.
public protocol Statechart: StateScoped where StateKey == String {
    /// The levels of the machine: one case per state, leaf or parent.
    associatedtype Node: Hashable & Sendable

    /// The node `node` is directly inside, or `nil` for a top-level node.
    static func parent(of node: Node) -> Node?

    /// The leaves `state` is in, outermost region first: one for a state that is not parallel,
    /// one per region inside a parallel state. Never empty.
    static func leaves(of state: State) -> [Node]

    /// What `node` does with `event`: change `state` and return the effect, or return
    /// `.unhandled`, leaving `state` untouched, to pass the event to `node`'s parent.
    static func handle(_ event: Event, in node: Node, state: inout State) -> Effect

    /// What runs on entering `node` (XState's entry actions), with the state entered. Defaults
    /// to `.none`.
    static func enter(_ node: Node, state: State) -> Effect

    /// What runs on leaving `node` (XState's exit actions), with the state left. Called for
    /// every active node before each event (the state is not kept to call it later), its effect
    /// used only when the node is left: keep it cheap to build. Defaults to `.none`.
    static func exit(_ node: Node, state: State) -> Effect
}

extension Statechart {
    @inlinable
    public static func enter(_ node: Node, state: State) -> Grove.MachineEffect<Self> { .none }

    @inlinable
    public static func exit(_ node: Node, state: State) -> Grove.MachineEffect<Self> { .none }

    /// The nodes `state` is in, each parent before its children and regions in order.
    public static func activeNodes(_ state: State) -> [Node] {
        var nodes: [Node] = []
        for leaf in leaves(of: state) {
            let path = self.path(of: leaf)
            for node in path where !nodes.contains(node) { nodes.append(node) }
        }
        return nodes
    }

    /// `node` and its ancestors, the top-level one first.
    public static func path(of node: Node) -> [Node] {
        var path = [node]
        var next = parent(of: node)
        while let node = next {
            precondition(path.count < 1000, "Statechart \(Self.self): parent(of:) loops at \(node)")
            path.append(node)
            next = parent(of: node)
        }
        return path.reversed()
    }

    /// The name of `node`'s level in keys and timer ids: its path, names joined by dots.
    public static func levelName(_ node: Node) -> String {
        path(of: node).map { String(describing: $0) }.joined(separator: ".")
    }

    /// The active path: ``levelName(_:)`` of each leaf, joined by `|` in a parallel state.
    public static func stateKey(_ state: State) -> String {
        leaves(of: state).map(levelName).joined(separator: "|")
    }

    /// The event handled by the active leaf, or the nearest ancestor that takes it; in a
    /// parallel state by every region that takes it (see ``Statechart``). No enter or exit.
    public static func update(_ state: inout State, event: Event) -> Grove.MachineEffect<Self> {
        dispatch(event, in: nil, &state, activeNodes(state))
    }

    static func dispatch(_ event: Event, in node: Node?, _ state: inout State, _ active: [Node])
        -> Grove.MachineEffect<Self>
    {
        let children = active.filter { parent(of: $0) == node }
        if children.count == 1 {
            let effect = dispatch(event, in: children[0], &state, active)
            if !effect.isUnhandled { return effect }
        } else if children.count > 1 {
            // Regions in order, each with the state the one before left; once a region's
            // transition leaves this parallel node, the regions after it are gone.
            var handled: [Grove.MachineEffect<Self>] = []
            var current = active
            for region in children {
                if let node, !current.contains(node) { break }
                guard current.contains(region) else { continue }
                let effect = dispatch(event, in: region, &state, current)
                if effect.isUnhandled { continue }
                handled.append(effect)
                current = activeNodes(state)
            }
            if handled.count == 1 { return handled[0] }
            if handled.count > 1 { return .merge(handled) }
        }
        guard let node else { return .unhandled }
        return handle(event, in: node, state: &state)
    }

    /// The enter effects of every active node of the initial state, outermost first.
    public static func startEffect(_ state: State) -> Grove.MachineEffect<Self> {
        let entering = activeNodes(state).map { enter($0, state: state) }.filter { !$0.isNoneKind }
        if entering.count <= 1 { return entering.first ?? .none }
        return .merge(entering)
    }

    /// ``update(_:event:)``; when the active nodes changed, a `stateChanged` effect: the
    /// cancels of the left levels' state timeouts, their exits innermost first, the
    /// transition's effect and the entered nodes' enters outermost first.
    public static func step(_ state: inout State, event: Event) -> Grove.MachineEffect<Self> {
        let before = activeNodes(state)
        let leaving = before.map { exit($0, state: state) }
        let effect = dispatch(event, in: nil, &state, before)
        if effect.isUnhandled { return effect }
        let after = activeNodes(state)
        if after == before { return effect }
        var effects: [Grove.MachineEffect<Self>] = []
        for index in before.indices.reversed() where !after.contains(before[index]) {
            effects.append(.cancel(.stateTimeout(level: levelName(before[index]))))
        }
        for index in before.indices.reversed() where !after.contains(before[index]) && !leaving[index].isNoneKind {
            effects.append(leaving[index])
        }
        let postponing = effect.isPostponeKind
        if !postponing, !effect.isNoneKind { effects.append(effect) }
        for node in after where !before.contains(node) {
            let entering = enter(node, state: state)
            if !entering.isNoneKind { effects.append(entering) }
        }
        return Grove.MachineEffect(kind: .stateChanged(effects, postponing: postponing))
    }
}

extension MachineEffect where M: Statechart {
    /// Sends `event` after `delay` unless the machine leaves `level` first: a state timeout
    /// scoped to one node of a ``Statechart``, so one armed for a parent survives moves between
    /// its children (`gen_statem`'s `state_timeout` for a parent state). Arming it again for
    /// the same level replaces it; levels have timeouts of their own. Arm it for a node active
    /// after the transition (from the node's ``Statechart/enter(_:state:)`` or a handler):
    /// one armed for a node not active runs until it fires. A timer under an id Grove reserves
    /// for the level (`<state-timeout/signingIn>`), so durable as every timer.
    ///
    /// ```swift
    /// static func enter(_ node: Node, state: State) -> Effect {
    ///     switch node {
    ///     case .twoFactor: .stateTimeout(after: .seconds(300), in: .twoFactor, send: .logout)
    ///     ...
    /// ```
    public static func stateTimeout(after delay: Duration, in level: M.Node, send event: M.Event) -> MachineEffect {
        MachineEffect(kind: .timer(id: .stateTimeout(level: M.levelName(level)), delay: delay, event: event))
    }
}
