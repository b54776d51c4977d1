package import GroveWire

/// Who may send a message of one kind, to whom the coordinator sends it, and what the
/// coordinator checks before the message has any effect: one value per ``MessageKind``
/// (``MessageKind/authority``), the one table the client roles (``Topology/Role/needed(for:)``),
/// the coordinator's refusals of clients and workers, and the table "Who may send what" in
/// docs/PROTOCOL.md derive from (`MessageAuthority+Document.swift`; a test compares the page with
/// the code).
package struct MessageAuthority: Sendable, Equatable {
    /// What a client needs to send the kind.
    package enum ClientUse: Sendable, Equatable {
        /// A role of its key, over the machine addressed or over every machine.
        case role(Topology.Role, Scope)
        /// Any role of its key (`read`, `send` or `admin`) over the machine addressed: a `locate`,
        /// which a key that may only send must be able to use.
        case anyRole(Scope)
        /// Nothing of its own: each envelope is checked as a message of its kind.
        case eachEnvelope
    }

    /// What a role must cover.
    package enum Scope: Sendable, Equatable {
        /// The machine the message addresses (a grant's machine patterns apply).
        case addressedMachine
        /// Every machine: the answer names them all, or the message addresses a worker.
        case everyMachine
    }

    /// What the coordinator checks of a registered worker's message of the kind, before it is
    /// published, routed or counted. A message that fails is refused: the worker is answered
    /// `error` `forbidden` naming the kind and the address, and the coordinator logs it
    /// (rate-limited, never the payload). Every kind also needs its sender to be a registered
    /// worker process, on the connection it registered from, with the key it registered with.
    package enum WorkerCheck: Sendable, Equatable {
        /// Nothing more (heartbeats).
        case registered
        /// The connection's key is the key of the group of the worker it names; the coordinator
        /// orders incarnations (docs/PROTOCOL.md, "Incarnations and epochs"). The one kind an
        /// unregistered connection may send.
        case groupKey
        /// It answers a request the coordinator sent to that very worker (by correlation id);
        /// any other is dropped unanswered, as a late reply is.
        case answersItsRequest
        /// Its address is a machine the sender hosts: a single machine the topology places on
        /// that worker instance, or a keyed instance whose key hashes to it. The payload's
        /// `address` and `worker` (state-changed, machine) must be the frame's and the sender's.
        case hostsAddress
        /// Each address it lists is a keyed instance placed on the sender; the others are not
        /// listed.
        case placedOnSender
        /// The sender runs the io call it names (the call's target).
        case runsCall
        /// The sender's machine started the io call it names (the call's origin): it is looked
        /// up among the sender's own calls only.
        case startedCall
        /// Each envelope is checked as a message of its kind; batches do not nest.
        case eachEnvelope
    }

    /// Where the coordinator sends a message of the kind. A set of bits, not an array: the
    /// table is read on the hot path and makes nothing on the heap.
    package struct Destinations: OptionSet, Sendable, Hashable {
        package let rawValue: UInt16

        package init(rawValue: UInt16) { self.rawValue = rawValue }

        /// The worker hosting the machine addressed (client requests, routed events).
        package static let machinesWorker = Destinations(rawValue: 1 << 0)
        /// The worker instance the address names (dead-letters).
        package static let namedWorker = Destinations(rawValue: 1 << 1)
        /// A registered worker of the group the topology places the io request on.
        package static let ioWorker = Destinations(rawValue: 1 << 2)
        /// The worker whose machine started the io call.
        package static let callOrigin = Destinations(rawValue: 1 << 3)
        /// The worker running the io call.
        package static let callTarget = Destinations(rawValue: 1 << 4)
        /// A worker the coordinator answers, refuses, welcomes or heartbeats.
        package static let worker = Destinations(rawValue: 1 << 5)
        /// Every registered worker (what watchers subscribe to).
        package static let everyWorker = Destinations(rawValue: 1 << 6)
        /// The client whose request it answers.
        package static let requester = Destinations(rawValue: 1 << 7)
        /// Watchers, on the events endpoint.
        package static let watchers = Destinations(rawValue: 1 << 8)
        /// Clients and workers that batch: replies and forwarded requests may travel batched.
        package static let batching = Destinations(rawValue: 1 << 9)
        /// The targets of the topology's routes from the machine, as events (outputs).
        package static let routeTargets = Destinations(rawValue: 1 << 10)
        /// Every registered worker that serves direct routes (of a pool with a handoff machine,
        /// for `placement`).
        package static let directWorkers = Destinations(rawValue: 1 << 11)
    }

    /// What a client needs to send it; `nil` when no client may.
    package let client: ClientUse?
    /// What the coordinator checks of a worker that sends it; `nil` when no worker may.
    package let worker: WorkerCheck?
    /// Where the coordinator sends it; empty when only the coordinator receives it.
    package let destinations: Destinations

    package init(client: ClientUse?, worker: WorkerCheck?, destinations: Destinations) {
        self.client = client
        self.worker = worker
        self.destinations = destinations
    }
}

extension MessageAuthority {
    /// Whether a worker's direct route serves the kind (docs/DIRECT-ROUTES.md 1.3): what a
    /// client may send that goes to the worker hosting the machine. Everything else is the
    /// coordinator's.
    package var servedDirect: Bool { client != nil && destinations.contains(.machinesWorker) }

    /// A client's request the coordinator answers itself, going to no worker (`list`,
    /// `snapshot`, `poison`, `locate`): its cost is the coordinator's alone.
    package var answeredByCoordinator: Bool { client != nil && destinations.isEmpty }
}

extension MessageKind {
    /// Who may send this kind, to whom it goes and what is checked: the table of
    /// docs/PROTOCOL.md, "Who may send what". Read for the worker messages the coordinator
    /// checks, each already parsed: a call across the module boundary costs nothing beside that.
    package var authority: MessageAuthority {
        switch self {
        case .event, .echo: MessageAuthority(client: .role(.send, .addressedMachine), worker: nil, destinations: [.machinesWorker])
        case .get: MessageAuthority(client: .role(.read, .addressedMachine), worker: nil, destinations: [.machinesWorker])
        case .cancel, .stop, .restart: MessageAuthority(client: .role(.admin, .addressedMachine), worker: nil, destinations: [.machinesWorker])
        case .list, .snapshot: MessageAuthority(client: .role(.read, .everyMachine), worker: nil, destinations: [])
        case .deadLetters: MessageAuthority(client: .role(.admin, .everyMachine), worker: nil, destinations: [.namedWorker])
        case .poison: MessageAuthority(client: .role(.admin, .everyMachine), worker: nil, destinations: [])
        case .locate: MessageAuthority(client: .anyRole(.addressedMachine), worker: nil, destinations: [])
        case .batch: MessageAuthority(client: .eachEnvelope, worker: .eachEnvelope, destinations: [.batching])
        case .state, .accepted, .deadLetterList: MessageAuthority(client: nil, worker: .answersItsRequest, destinations: [.requester])
        case .error: MessageAuthority(client: nil, worker: .answersItsRequest, destinations: [.requester, .worker])
        case .listing, .states, .poisonList, .location: MessageAuthority(client: nil, worker: nil, destinations: [.requester])
        case .register: MessageAuthority(client: nil, worker: .groupKey, destinations: [])
        case .welcome: MessageAuthority(client: nil, worker: nil, destinations: [.worker])
        case .heartbeat: MessageAuthority(client: nil, worker: .registered, destinations: [.worker])
        case .observe, .quarantine: MessageAuthority(client: nil, worker: nil, destinations: [.everyWorker])
        case .instances: MessageAuthority(client: nil, worker: .placedOnSender, destinations: [])
        case .release: MessageAuthority(client: nil, worker: .registered, destinations: [.worker])
        case .returned: MessageAuthority(client: nil, worker: nil, destinations: [.worker])
        case .access, .placement: MessageAuthority(client: nil, worker: nil, destinations: [.directWorkers])
        case .ioRequest: MessageAuthority(client: nil, worker: .hostsAddress, destinations: [.ioWorker])
        case .ioResult: MessageAuthority(client: nil, worker: .runsCall, destinations: [.callOrigin])
        case .ioCancel: MessageAuthority(client: nil, worker: .startedCall, destinations: [.callTarget])
        case .ioCancelled: MessageAuthority(client: nil, worker: .runsCall, destinations: [])
        case .stateChanged, .machine, .effect: MessageAuthority(client: nil, worker: .hostsAddress, destinations: [.watchers])
        case .output: MessageAuthority(client: nil, worker: .hostsAddress, destinations: [.watchers, .routeTargets])
        case .worker: MessageAuthority(client: nil, worker: nil, destinations: [.watchers])
        }
    }

    /// Why a client may not send this kind; `nil` when it may.
    package var refusalForClients: String? {
        guard authority.client == nil else { return nil }
        let allowed = MessageKind.allCases.filter { $0.authority.client != nil }.map(\.name)
        let why = authority.destinations.contains(.watchers)
            ? "is published on the events endpoint; subscribe there to see it"
            : authority.destinations.contains(.requester) ? "is a reply, sent to clients" : "is for workers"
        return "clients may send \(allowed.dropLast().joined(separator: ", ")) and \(allowed.last ?? ""); \(name) \(why)"
    }

    /// Why a worker may not send this kind; `nil` when it may.
    package var refusalForWorkers: String? {
        guard authority.worker == nil else { return nil }
        let why = authority.client != nil
            ? "requests come from clients"
            : authority.destinations.contains(.watchers) ? "the coordinator publishes these itself" : "the coordinator sends these"
        return "workers may not send \(name) messages: \(why)"
    }
}
