package import GroveWire

/// What the live view knows of the running topology, made from the events stream (what
/// `fsm-send watch` reads): each machine's current state, the io calls in flight, the recent
/// transitions and the rates. A plain value: the driver feeds it publications and ticks with the
/// time, and pushes the updates it returns to the viewers each may see. No sockets, no clock.
package struct ViewCore: Sendable {
    /// One publication off the events endpoint.
    /// The kind of a ``Publication`` made from a snapshot's entry after the events stream
    /// dropped some (`{"address","worker","state"}`): where a machine stands now.
    package static let resyncKind = "resync"

    package struct Publication: Sendable, Equatable {
        /// `state:auth`, `effect:poller/eu`, `worker:main`, …
        package var topic: String
        /// The message kind's name: `state-changed`, `effect`, `worker`, `output`, `machine`, `error`.
        package var kind: String
        /// The address frame (the coordinator vouches for it).
        package var address: String
        package var payload: JSONValue

        package init(topic: String, kind: String, address: String, payload: JSONValue) {
            self.topic = topic
            self.kind = kind
            self.address = address
            self.payload = payload
        }
    }

    /// An update for the page, and whose it is: one a viewer sees only when its grants cover
    /// `address` (`nil`: about a worker, seen by every viewer), and with `everyMachine`, only
    /// when they read every machine (the metrics, which name every machine type).
    package struct Update: Sendable, Equatable {
        package var address: String?
        package var json: JSONValue
        package var everyMachine = false

        package init(address: String?, json: JSONValue, everyMachine: Bool = false) {
            self.address = address
            self.json = json
            self.everyMachine = everyMachine
        }
    }

    /// A machine's last published state.
    package struct MachineState: Sendable, Equatable {
        package var worker: String
        package var state: JSONValue
        /// The state's case, as the machine's graph names its nodes (``node(of:)``).
        package var node: String?
        /// When it was published (milliseconds on the driver's clock).
        package var at: Int64
    }

    /// Work in flight: an io call across processes (published by the coordinator), or work the
    /// machine's own worker runs (published by it: a timer, an operation, a task, a stream, io
    /// run there).
    package struct Effect: Sendable, Equatable {
        package var address: String
        package var effect: JSONValue
        /// `io-call` for a call across processes; else the worker's `kind`: `timer`,
        /// `operation`, `task`, `stream`, `io`.
        package var kind: String
        /// The io request's name; empty for other work.
        package var request: String
        /// Where it runs: the worker running the call, or the machine's own.
        package var worker: String
        package var since: Int64
        /// A timer's deadline, in milliseconds since 1970 on its worker's clock.
        package var deadline: Int64?
    }

    /// The most machine states kept: keyed machines may number 100,000; past this new
    /// addresses are counted in ``omitted`` and not shown (the view is a window, not a store).
    package static let stateCapacity = 10_000
    /// The most io calls in flight kept.
    package static let effectCapacity = 10_000
    /// How many transitions the "recent" list holds.
    package static let recentCapacity = 50
    /// The seconds rates are averaged over.
    package static let rateWindow = 10

    package private(set) var states: [String: MachineState] = [:]
    package private(set) var effects: [String: Effect] = [:]
    /// The last ``recentCapacity`` transitions, as the page shows them.
    package var recent: [JSONValue] { transitions.map(\.json) }
    /// The transitions behind ``recent``, with the states they went between: a transition
    /// seen before its machine's graph came is named again by the graph's nodes when it does.
    private var transitions: [Transition] = []
    package private(set) var workers: [String: String] = [:]
    /// Addresses not kept for ``stateCapacity``.
    package private(set) var omitted = 0
    /// Transitions per whole second (driver's clock, in seconds), the last ``rateWindow`` + 1.
    private var transitionsBySecond: [Int64: Int] = [:]
    private var eventsByMachine: [String: [Int64: Int]] = [:]

    /// Machine name → its type, from the topology.
    private let machineTypes: [String: String]
    /// Machine type → the names of its graph's nodes, once its worker described it.
    private var graphNodes: [String: Set<String>] = [:]

    /// - Parameter machineTypes: Each machine's type by name (the topology's `machines`).
    package init(machineTypes: [String: String] = [:]) {
        self.machineTypes = machineTypes
    }

    /// The graph node of a published state. A state's JSON is Codable's form of the machine's
    /// `State`, while its graph names nodes as its `Checkable.node(of:)` does: an enum's case
    /// (`{"loggedIn":{…}}` or `"idle"`), or for a struct, often the case of one of its fields
    /// (AuthFlow's `{"step":{"enteringCredentials":{…}},"attempts":0}`). So, knowing the graph's
    /// node names, the node is the shallowest object key or string in the state that is one of
    /// them (keys before strings, in key order at each depth). Without them: the single key of
    /// an object of one key, or the string. Anything else names no node, and the page shows the
    /// state without a highlight.
    package static func node(of state: JSONValue, among names: Set<String>? = nil) -> String? {
        guard let names, !names.isEmpty else {
            switch state {
            case .string(let name): return name
            case .object(let members) where members.count == 1: return members.keys.first
            case .object, .array, .integer, .number, .bool, .null: return nil
            }
        }
        var level = [state]
        // Bounded: a state is at most limits.payloadBytes, but nodes sit near the top.
        for _ in 0..<8 where !level.isEmpty {
            var next: [JSONValue] = []
            var strings: [String] = []
            for value in level {
                switch value {
                case .object(let members):
                    for key in members.keys.sorted() {
                        if names.contains(key) { return key }
                        next.append(members[key]!)
                    }
                case .array(let elements): next.append(contentsOf: elements)
                case .string(let text): strings.append(text)
                case .integer, .number, .bool, .null: break
                }
            }
            if let found = strings.first(where: names.contains) { return found }
            level = next
        }
        return nil
    }

    /// The graph node of `state` at `address`, with its machine type's graph when known.
    func node(of state: JSONValue, at address: String) -> String? {
        Self.node(of: state, among: machineTypes[Self.machine(of: address)].flatMap { graphNodes[$0] })
    }

    /// Takes in the graphs' node names (machine type → names) once the workers described them,
    /// and names every kept state's node, and both ends of every recent transition, again by
    /// them: a transition made before the graphs came reads `auth: unauthenticated →
    /// enteringCredentials` in the next snapshot, not `? → ?`.
    package mutating func setGraphNodes(_ nodes: [String: Set<String>]) {
        graphNodes = nodes
        for (address, var kept) in states {
            kept.node = node(of: kept.state, at: address)
            states[address] = kept
        }
        for index in transitions.indices {
            guard let states = transitions[index].states else { continue }
            let address = transitions[index].address
            transitions[index].fromNode = node(of: states.from, at: address)
            transitions[index].toNode = node(of: states.to, at: address)
            if hasGraph(address) { transitions[index].states = nil }
        }
    }

    /// The machine's name in `address` (`counter` of `counter/7`).
    package static func machine(of address: String) -> String {
        String(address.prefix { $0 != "/" })
    }

    /// Takes in one publication at `now` (milliseconds) and returns what the page must change.
    package mutating func apply(_ publication: Publication, now: Int64) -> [Update] {
        let address = publication.address
        let payload = publication.payload.objectValue ?? [:]
        switch publication.kind {
        case "state-changed", Self.resyncKind:
            let state = payload["state"] ?? .null
            let node = node(of: state, at: address)
            let worker = payload["worker"]?.stringValue ?? states[address]?.worker ?? ""
            let before = states[address]
            if before == nil, states.count >= Self.stateCapacity {
                omitted += 1
                return []
            }
            states[address] = MachineState(worker: worker, state: state, node: node, at: now)
            var updates = [Update(address: address, json: Self.stateJSON(address, states[address]!))]
            // The first state an address shows is where it stands, not a transition; nor is a
            // state a snapshot brought back after missed publications (the view cannot tell
            // which transitions it missed, only where the machine stands now).
            if let before, publication.kind != Self.resyncKind {
                // The states are kept only until the machine's graph names them (bounded: 50).
                let transition = Transition(address: address, fromNode: before.node, toNode: node, at: now,
                                            states: hasGraph(address) ? nil : (before.state, state))
                transitions.append(transition)
                if transitions.count > Self.recentCapacity { transitions.removeFirst(transitions.count - Self.recentCapacity) }
                count(Self.machine(of: address), at: now)
                updates.append(Update(address: address, json: transition.json))
            }
            return updates
        case "effect":
            let id = payload["effect"] ?? .null
            let key = address + "\u{0}" + id.description
            let phase = payload["phase"]?.stringValue ?? ""
            if phase == "started" {
                guard effects[key] != nil || effects.count < Self.effectCapacity else { return [] }
                var deadline: Int64?
                if case .integer(let nanoseconds)? = payload["deadlineNs"] { deadline = nanoseconds / 1_000_000 }
                let effect = Effect(address: address, effect: id, kind: payload["kind"]?.stringValue ?? "io-call",
                                    request: payload["request"]?.stringValue ?? "", worker: payload["worker"]?.stringValue ?? "",
                                    since: now, deadline: deadline)
                effects[key] = effect
                return [Update(address: address, json: Self.effectJSON(effect, phase: phase))]
            }
            // No longer in flight: an io call's completed, failed, cancelled or lost; the
            // worker's fired, finished, failed, cancelled, replaced, ended or passivated.
            guard let ended = effects.removeValue(forKey: key) else { return [] }
            var json = Self.effectJSON(ended, phase: phase)
            if case .object(var members) = json, let reason = payload["reason"] {
                members["reason"] = reason
                json = .object(members)
            }
            return [Update(address: address, json: json)]
        case "worker":
            let name = payload["worker"]?.stringValue ?? address
            let phase = payload["phase"]?.stringValue ?? ""
            workers[name] = phase
            var json: [String: JSONValue] = ["type": .string("worker"), "worker": .string(name), "phase": .string(phase)]
            if let reason = payload["reason"] { json["reason"] = reason }
            return [Update(address: nil, json: .object(json))]
        case "machine":
            // It ended: its io calls ended with it (their own publications may not come).
            effects = effects.filter { $0.value.address != address }
            var json: [String: JSONValue] = ["type": .string("ended"), "address": .string(address)]
            json["reason"] = payload["reason"] ?? .null
            return [Update(address: address, json: .object(json))]
        default:
            // output, and route errors: shown as they come, kept nowhere.
            return [Update(address: address, json: .object([
                "type": .string(publication.kind), "topic": .string(publication.topic), "address": .string(address),
                "payload": publication.payload, "at": .integer(now),
            ]))]
        }
    }

    /// The rates at `now`: transitions per second over the last ``rateWindow`` whole seconds,
    /// in all and by machine name; older seconds are forgotten.
    package mutating func rates(now: Int64) -> Update {
        let second = now / 1000
        let oldest = second - Int64(Self.rateWindow)
        transitionsBySecond = transitionsBySecond.filter { $0.key > oldest }
        var byMachine: [String: JSONValue] = [:]
        for (machine, seconds) in eventsByMachine {
            let kept = seconds.filter { $0.key > oldest }
            eventsByMachine[machine] = kept.isEmpty ? nil : kept
            if !kept.isEmpty { byMachine[machine] = .number(Double(kept.values.reduce(0, +)) / Double(Self.rateWindow)) }
        }
        let total = Double(transitionsBySecond.values.reduce(0, +)) / Double(Self.rateWindow)
        return Update(address: nil, json: .object(["type": .string("rates"), "total": .number(total), "machines": .object(byMachine)]))
    }

    private mutating func count(_ machine: String, at now: Int64) {
        transitionsBySecond[now / 1000, default: 0] += 1
        eventsByMachine[machine, default: [:]][now / 1000, default: 0] += 1
    }

    /// Everything a new viewer starts from, of what `covers` lets it see.
    package func snapshot(covering covers: (String) -> Bool) -> [String: JSONValue] {
        let machines = states.filter { covers($0.key) }.sorted { $0.key < $1.key }.map { Self.stateJSON($0.key, $0.value) }
        let inFlight = effects.values.filter { covers($0.address) }.sorted { ($0.since, $0.address) < ($1.since, $1.address) }
            .map { Self.effectJSON($0, phase: "started") }
        let transitions = recent.filter { covers($0.objectValue?["address"]?.stringValue ?? "") }
        return [
            "states": .array(machines), "effects": .array(inFlight), "recent": .array(transitions),
            "workers": .object(workers.mapValues(JSONValue.string)), "omitted": .integer(Int64(omitted)),
        ]
    }

    /// Whether the graph of the machine at `address` named the nodes already.
    private func hasGraph(_ address: String) -> Bool {
        machineTypes[Self.machine(of: address)].flatMap { graphNodes[$0] } != nil
    }

    /// A machine moving from one published state to the next.
    struct Transition: Sendable {
        var address: String
        var fromNode: String?
        var toNode: String?
        var at: Int64
        /// The states it went between, while its machine has no graph to name them by.
        var states: (from: JSONValue, to: JSONValue)?

        var json: JSONValue {
            .object([
                "type": .string("transition"), "address": .string(address), "from": fromNode.map(JSONValue.string) ?? .null,
                "to": toNode.map(JSONValue.string) ?? .null, "at": .integer(at),
            ])
        }
    }

    static func stateJSON(_ address: String, _ state: MachineState) -> JSONValue {
        .object([
            "type": .string("state"), "address": .string(address), "machine": .string(machine(of: address)), "worker": .string(state.worker),
            "state": state.state, "node": state.node.map(JSONValue.string) ?? .null, "at": .integer(state.at),
        ])
    }

    static func effectJSON(_ effect: Effect, phase: String) -> JSONValue {
        var json: [String: JSONValue] = [
            "type": .string("effect"), "address": .string(effect.address), "effect": effect.effect, "kind": .string(effect.kind),
            "request": .string(effect.request), "worker": .string(effect.worker), "phase": .string(phase), "since": .integer(effect.since),
        ]
        if let deadline = effect.deadline { json["deadline"] = .integer(deadline) }
        return .object(json)
    }
}
