import Foundation
import GroveCluster
import GroveView
import GroveWire
import Synchronization

/// The live view's shared state: the pure ``ViewCore`` and ``ViewAccess`` behind one lock, and
/// the viewers' streams. What it decides is theirs; this only passes publications in and
/// updates out, to each viewer the update's address is covered for.
final class LiveViewHub: Sendable {
    fileprivate struct State {
        var core: ViewCore
        var metrics = ViewMetrics()
        var access = ViewAccess()
        var graphs: [String: JSONValue] = [:]
        var viewers: [Int: Viewer] = [:]
        var nextViewer = 0
        /// Streams of viewers that fell behind, to finish once the lock is let go (finishing
        /// runs `onTermination`, which takes the lock).
        var behind: [AsyncStream<String>.Continuation] = []
    }

    /// One viewer's stream and the bytes queued for it that its connection has not written yet.
    fileprivate struct Viewer {
        var viewer: ViewAccess.Viewer
        var continuation: AsyncStream<String>.Continuation
        var queuedBytes = 0
    }

    /// The bytes of updates one viewer may fall behind by before its stream is closed: its
    /// browser reconnects by itself (EventSource) and starts again from a snapshot. Counted in
    /// bytes, not updates: a viewer that stops reading holds at most this much of fsm-launch's
    /// memory (and ``LiveViewServer/connectionLimit`` viewers at most that many times it), where
    /// a count of updates let 20 such viewers take fsm-launch from 48 to 270 MB in 30 s. One
    /// update is always let through, however large, so a snapshot bigger than the bound still
    /// reaches a viewer that reads.
    static let viewerBacklogBytes = 1 << 20

    let topology: Topology
    private let state: Mutex<State>

    init(topology: Topology) {
        self.topology = topology
        let types = Dictionary(topology.machines.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        state = Mutex(State(core: ViewCore(machineTypes: types)))
    }

    /// Milliseconds since 1970: the page compares them with the browser's `Date.now()`.
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A token for `viewer`, for `lifetime` (`nil`: while this view runs); `nil` when the view
    /// holds ``ViewAccess/capacity`` valid tokens.
    func mint(for viewer: ViewAccess.Viewer, lifetime: Duration?) -> String? {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let now = Self.now()
        let expiresAt = lifetime.map { now + $0.components.seconds * 1000 }
        return state.withLock { $0.access.mint(for: viewer, random: random, now: now, expiresAt: expiresAt) }
    }

    /// Lets the client key `publicKey` make its own tokens (`fsm-send view`).
    func trust(publicKey: [UInt8], shared: [UInt8], as viewer: ViewAccess.Viewer) {
        state.withLock { $0.access.trust(publicKey: publicKey, shared: shared, as: viewer) }
    }

    func decide(_ action: ViewAccess.Action, token: String?) -> ViewAccess.Decision {
        state.withLock { $0.access.decide(action, token: token, now: Self.now()) }
    }

    /// One publication off the events endpoint.
    func publish(_ publication: ViewCore.Publication) {
        finish(state.withLock { state in
            let updates = state.core.apply(publication, now: Self.now())
            Self.broadcast(updates, in: &state)
            return state.takeBehind()
        })
    }

    /// A publication about an address the view has no state for yet; dropped otherwise (what
    /// came meanwhile is newer).
    func publishUnlessKnown(_ publication: ViewCore.Publication) {
        finish(state.withLock { state in
            guard state.core.states[publication.address] == nil else { return [] }
            let updates = state.core.apply(publication, now: Self.now())
            Self.broadcast(updates, in: &state)
            return state.takeBehind()
        })
    }

    /// Every second: the rates.
    func tick() {
        finish(state.withLock { state in
            let update = state.core.rates(now: Self.now())
            Self.broadcast([update], in: &state)
            return state.takeBehind()
        })
    }

    /// Every ``ViewMetrics/interval``, with metrics on: the coordinator's metrics, for the plots.
    func metrics(_ text: MetricsText) {
        finish(state.withLock { state in
            let update = state.metrics.take(text, now: Self.now())
            Self.broadcast([update], in: &state)
            return state.takeBehind()
        })
    }

    /// The machine types' graphs, once the workers described them: every viewer starts again
    /// from a snapshot, its states now placed on their graphs.
    func setGraphs(_ graphs: [String: JSONValue]) {
        finish(state.withLock { state in
            state.graphs = graphs
            state.core.setGraphNodes(graphs.mapValues { graph in
                let object = graph.objectValue ?? [:]
                let names = [object["reachable"], object["unreachable"]].compactMap { value -> [JSONValue]? in
                    if case .array(let names)? = value { return names }
                    return nil
                }.joined().compactMap(\.stringValue)
                return Set(names)
            })
            for (id, entry) in state.viewers { Self.send(snapshot(for: entry.viewer, in: state), to: id, in: &state) }
            return state.takeBehind()
        })
    }

    /// A stream for `viewer`: a snapshot of what it may see, then each update it may see. Its
    /// reader calls ``written(_:bytes:)`` with the id after writing each one.
    func connect(_ viewer: ViewAccess.Viewer) -> (id: Int, updates: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let id = state.withLock { state in
            let id = state.nextViewer
            state.nextViewer += 1
            state.viewers[id] = Viewer(viewer: viewer, continuation: continuation)
            Self.send(snapshot(for: viewer, in: state), to: id, in: &state)
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.viewers.removeValue(forKey: id) } }
        return (id, stream)
    }

    /// Viewer `id`'s connection wrote an update of `bytes` bytes: that many fewer are queued.
    func written(_ id: Int, bytes: Int) {
        state.withLock { state in state.viewers[id]?.queuedBytes -= bytes }
    }

    /// Everything `viewer` starts from: what its grants let it read, and the grants themselves
    /// (the page greys out what they do not allow; each action is checked here again).
    private func snapshot(for viewer: ViewAccess.Viewer, in state: State) -> JSONValue {
        let covers = { (address: String) in viewer.may(.read, on: address) }
        var snapshot = state.core.snapshot(covering: covers)
        snapshot["type"] = .string("snapshot")
        snapshot["topology"] = ViewTopology.json(topology, graphs: state.graphs, covering: covers)
        // The plots: off without metrics.listen; not for a viewer that may not read every machine.
        snapshot["metrics"] = .string(topology.metrics.listen == nil ? "off" : viewer.readsEveryMachine ? "on" : "forbidden")
        snapshot["you"] = .object([
            "name": .string(viewer.name),
            "grants": .array(viewer.grants.map { grant in
                .object(["roles": .array(grant.roles.sorted().map { .string($0.rawValue) }),
                         "machines": .array(grant.machines.map(JSONValue.string))])
            }),
        ])
        return .object(snapshot)
    }

    /// Ends every viewer's stream (the view is stopping).
    func closeAll() {
        let viewers = state.withLock { state in
            defer { state.viewers.removeAll() }
            return state.viewers.values.map(\.continuation)
        }
        for continuation in viewers { continuation.finish() }
    }

    private func finish(_ continuations: [AsyncStream<String>.Continuation]) {
        for continuation in continuations { continuation.finish() }
    }

    private static func broadcast(_ updates: [ViewCore.Update], in state: inout State) {
        for update in updates {
            // Rendered once for every viewer it goes to.
            var text: String?
            for (id, entry) in state.viewers where update.address.map({ entry.viewer.may(.read, on: $0) }) ?? true {
                if update.everyMachine, !entry.viewer.readsEveryMachine { continue }
                if text == nil { text = update.json.description }
                send(text!, to: id, in: &state)
            }
        }
    }

    private static func send(_ json: JSONValue, to id: Int, in state: inout State) {
        send(json.description, to: id, in: &state)
    }

    private static func send(_ update: String, to id: Int, in state: inout State) {
        guard let viewer = state.viewers[id] else { return }
        let bytes = update.utf8.count
        guard viewer.queuedBytes == 0 || viewer.queuedBytes + bytes <= viewerBacklogBytes else {
            // Fell behind: close it, its browser reconnects and starts from a snapshot.
            state.viewers[id] = nil
            state.behind.append(viewer.continuation)
            return
        }
        state.viewers[id]?.queuedBytes += bytes
        viewer.continuation.yield(update)
    }
}

extension LiveViewHub.State {
    fileprivate mutating func takeBehind() -> [AsyncStream<String>.Continuation] {
        defer { behind.removeAll() }
        return behind
    }
}
