import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// A coordinator core over a small topology with a single worker (`edge`) and a pool of two
/// (`data-1`, `data-2`), driven by messages built here; shared by the CoordinatorCore suites.
struct CoreFixture {
    static let topology = Topology(
        name: "unit",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "edge"), .init(name: "data", count: 2)],
        machines: [
            .init(name: "auth", type: "AuthFlow", worker: "edge"),
            .init(name: "loader", type: "DataLoader", worker: "edge"),
            .init(name: "poller", type: "PollingService", worker: "edge", keyed: true),
            .init(name: "counter", type: "Counter", worker: "data", keyed: true),
            .init(name: "sink", type: "Sink", worker: "data"),
        ],
        io: [.init(request: "FetchData", worker: "data"), .init(request: "Authenticate", worker: "data")],
        routes: [
            .init(from: "auth", when: "signedIn", to: "loader", event: .string("load")),
            .init(from: "loader", when: "loaded", to: "poller/eu-1"),
            .init(from: "poller", to: "counter/7"),
        ],
        heartbeat: .init(intervalMs: 250, timeoutMs: 1500),
        queues: .init(mailboxCapacity: 64, workerOutbox: 100, clientOutbox: 100)
    )

    static let pids: [String: Int32] = ["edge": 101, "data-1": 201, "data-2": 202]

    var core: CoordinatorCore
    let t0 = ContinuousClock.now

    init(topology: Topology = Self.topology, maxPayload: Int? = nil, epoch: CorrelationEpoch = CorrelationEpoch(0)) {
        core = CoordinatorCore(topology: topology, eventsEndpoint: "inproc://events", maxPayload: maxPayload, epoch: epoch)
    }

    /// What each worker must register to be accepted.
    static func registration(_ worker: String) -> Registration {
        worker == "edge"
            ? Registration(worker: worker, pid: pids[worker]!, machineTypes: ["AuthFlow", "DataLoader", "PollingService"], ioHandlers: [])
            : Registration(worker: worker, pid: pids[worker] ?? 999, machineTypes: ["Counter", "Sink"],
                           ioHandlers: ["FetchData", "Authenticate"])
    }

    mutating func register(_ registration: Registration, as name: String? = nil, correlation: UInt64 = 0,
                           after offset: Duration = .zero) -> [CoordinatorAction] {
        let payload = try! WireJSON.encode(registration)
        return fromWorker(name ?? registration.worker,
                          WireMessage(Header(.register, correlation: correlation), address: name ?? registration.worker, payload: payload),
                          after: offset)
    }

    @discardableResult
    mutating func register(_ names: String..., after offset: Duration = .zero) -> [CoordinatorAction] {
        names.flatMap { register(Self.registration($0), after: offset) }
    }

    @discardableResult
    mutating func registerAll(after offset: Duration = .zero) -> [CoordinatorAction] {
        register("edge", "data-1", "data-2", after: offset)
    }

    mutating func fromWorker(_ name: String, _ message: WireMessage, after offset: Duration = .zero) -> [CoordinatorAction] {
        core.fromWorker(Array(name.utf8), message.frames[...], now: t0 + offset)
    }

    mutating func fromWorker(_ name: String, frames: [[UInt8]], after offset: Duration = .zero) -> [CoordinatorAction] {
        core.fromWorker(Array(name.utf8), frames[...], now: t0 + offset)
    }

    mutating func fromClient(_ client: String, _ message: WireMessage) -> [CoordinatorAction] {
        core.fromClient(Array(client.utf8), message.frames[...])
    }

    mutating func fromClient(_ client: String, frames: [[UInt8]]) -> [CoordinatorAction] {
        core.fromClient(Array(client.utf8), frames[...])
    }

    /// Sends a client event and returns the coordinator's correlation for it.
    mutating func sendEvent(_ client: String, to address: String, _ json: String = #"{"go":{}}"#,
                            correlation: UInt64) throws -> (worker: String, id: UInt64) {
        let actions = fromClient(client, WireMessage(Header(.event, correlation: correlation), address: address, payload: Array(json.utf8)))
        try #require(actions.count == 1)
        let forwarded = try #require(actions[0].sentToWorker)
        return (forwarded.worker, forwarded.message.header.correlation)
    }

    func listing() -> Listing { core.listing() }
}

extension CoordinatorAction {
    /// A message to a worker: to its registered process, or to a connection by routing id (the
    /// fixture's workers connect under their names).
    var sentToWorker: (worker: String, message: WireMessage)? {
        switch self {
        case .toWorker(let worker, let message): (worker, message)
        case .toPeer(let peer, let message): (String(decoding: peer, as: UTF8.self), message)
        case .toClient, .publish, .lost, .warn, .dropQueued, .forgive, .resetWatchers, .admitWatcher, .workerMetrics: nil
        }
    }

    var sentToClient: (client: String, message: WireMessage)? {
        if case .toClient(let client, let message) = self { (String(decoding: client, as: UTF8.self), message) } else { nil }
    }

    var published: (topic: String, message: WireMessage)? {
        if case .publish(let topic, let message) = self { (topic, message) } else { nil }
    }
}

func payload<T: Decodable>(_ type: T.Type, of message: WireMessage) throws -> T {
    try WireJSON.decode(T.self, from: message.payload)
}

/// The single error reply in `actions`, checked to go to `client` with `correlation`.
func errorReply(in actions: [CoordinatorAction], to client: String, correlation: UInt64,
                sourceLocation: SourceLocation = #_sourceLocation) throws -> WireError {
    try #require(actions.count == 1, "expected one reply, got \(actions)", sourceLocation: sourceLocation)
    let reply = try #require(actions[0].sentToClient, "expected a reply to a client, got \(actions[0])", sourceLocation: sourceLocation)
    #expect(reply.client == client, sourceLocation: sourceLocation)
    #expect(reply.message.header.kind == .error, sourceLocation: sourceLocation)
    #expect(reply.message.header.correlation == correlation, sourceLocation: sourceLocation)
    return try payload(WireError.self, of: reply.message)
}

func workerEvents(in actions: [CoordinatorAction]) throws -> [WorkerEvent] {
    try actions.compactMap(\.published).filter { $0.topic.hasPrefix("worker:") }.map {
        #expect($0.message.header.kind == .worker)
        #expect($0.topic == "worker:" + $0.message.address)
        return try payload(WorkerEvent.self, of: $0.message)
    }
}

@Suite("CoordinatorCore: registration", .timeLimit(.minutes(2)))
struct CoordinatorCoreRegistrationTests {
    @Test func acceptedRegistrationIsWelcomedWithMachinesAndRemoteIO() throws {
        var fixture = CoreFixture()
        let actions = fixture.register(CoreFixture.registration("edge"), correlation: 9)
        try #require(actions.count == 3)
        // Then what watchers subscribe to (nothing yet), and the registration is published.
        let observe = try #require(actions[1].sentToWorker)
        #expect(observe.message.header.kind == .observe)
        #expect(try payload(Observation.self, of: observe.message) == Observation(prefixes: []))

        let welcome = try #require(actions[0].sentToWorker)
        #expect(welcome.worker == "edge")
        #expect(welcome.message.header.kind == .welcome)
        #expect(welcome.message.header.correlation == 9)
        #expect(welcome.message.address == "edge")
        let body = try payload(Welcome.self, of: welcome.message)
        #expect(body.machines == [
            .init(name: "auth", type: "AuthFlow", keyed: false),
            .init(name: "loader", type: "DataLoader", keyed: false),
            .init(name: "poller", type: "PollingService", keyed: true),
        ])
        #expect(body.remoteIO == ["FetchData", "Authenticate"])
        #expect(body.heartbeatIntervalMs == 250)
        #expect(body.heartbeatTimeoutMs == 1500)
        #expect(body.mailboxCapacity == 64)
        // The event of each route to a machine placed here, with its place in the topology, for
        // the worker to check; routes that forward the output itself have none.
        #expect(body.routeEvents == [.init(machine: "loader", event: .string("load"), path: "$.routes[0].event")])

        #expect(try workerEvents(in: [actions[2]]) == [WorkerEvent(worker: "edge", phase: .registered, machines: ["auth", "loader"])])
        #expect(fixture.core.workers["edge"]?.registered == true)
        #expect(fixture.core.workers["edge"]?.pid == 101)
    }

    @Test func poolInstanceIsWelcomedWithItsGroupsMachinesAndNoRemoteIO() throws {
        var fixture = CoreFixture()
        let actions = fixture.register(CoreFixture.registration("data-2"))
        let welcome = try #require(actions.first?.sentToWorker)
        #expect(welcome.worker == "data-2")
        let body = try payload(Welcome.self, of: welcome.message)
        // The single machine `sink` lives on the pool's first instance only.
        #expect(body.machines == [.init(name: "counter", type: "Counter", keyed: true)])
        #expect(body.remoteIO == [])
        #expect(body.routeEvents == [])
        let first = try #require(fixture.register(CoreFixture.registration("data-1")).first?.sentToWorker)
        #expect(try payload(Welcome.self, of: first.message).machines
                == [.init(name: "counter", type: "Counter", keyed: true), .init(name: "sink", type: "Sink", keyed: false)])
    }

    @Test func allRegisteredOnceEveryInstanceHasRegistered() {
        var fixture = CoreFixture()
        #expect(!fixture.core.allRegistered)
        #expect(fixture.core.unregistered == ["data-1", "data-2", "edge"])
        fixture.register("data-2")
        #expect(!fixture.core.allRegistered)
        #expect(fixture.core.unregistered == ["data-1", "edge"])
        fixture.register("edge", "data-1")
        #expect(fixture.core.allRegistered)
        #expect(fixture.core.unregistered == [])
    }

    @Test func unknownWorkerNameIsRejected() throws {
        var fixture = CoreFixture()
        let stranger = Registration(worker: "ghost", pid: 1, machineTypes: ["AuthFlow"], ioHandlers: [])
        let actions = fixture.register(stranger, correlation: 3)
        try #require(actions.count == 1)
        let reply = try #require(actions[0].sentToWorker)
        #expect(reply.worker == "ghost")
        #expect(reply.message.header.kind == .error)
        #expect(reply.message.header.correlation == 3)
        let error = try payload(WireError.self, of: reply.message)
        #expect(error.code == .registrationRejected)
        #expect(error.message.contains("'ghost'"))
        #expect(error.message.contains("edge, data-1, data-2"))
        #expect(fixture.core.workers["ghost"] == nil)
        #expect(!fixture.core.allRegistered)
    }

    @Test func missingMachineTypesAreNamed() throws {
        var fixture = CoreFixture()
        let partial = Registration(worker: "edge", pid: 1, machineTypes: ["DataLoader", "Unrelated"], ioHandlers: [])
        let actions = fixture.register(partial, correlation: 4)
        try #require(actions.count == 1)
        let reply = try #require(actions[0].sentToWorker)
        #expect(reply.worker == "edge")
        #expect(reply.message.header.correlation == 4)
        let error = try payload(WireError.self, of: reply.message)
        #expect(error.code == .registrationRejected)
        // Every missing type at once, and what the worker does offer.
        #expect(error.message.contains("machine type 'AuthFlow' is not registered: register it in the worker's WorkerConfiguration or fix $.machines[0].type"))
        #expect(error.message.contains("machine type 'PollingService' is not registered: register it in the worker's WorkerConfiguration or fix $.machines[2].type"))
        #expect(!error.message.contains("machine type 'DataLoader'"))
        #expect(error.message.contains("It offers machine types [DataLoader, Unrelated]"))
        #expect(fixture.core.workers["edge"]?.registered == false)
    }

    @Test func missingIOHandlersAreNamed() throws {
        var fixture = CoreFixture()
        let partial = Registration(worker: "data-1", pid: 1, machineTypes: ["Counter", "Sink"], ioHandlers: ["FetchData"])
        let actions = fixture.register(partial)
        try #require(actions.count == 1)
        let error = try payload(WireError.self, of: try #require(actions[0].sentToWorker).message)
        #expect(error.code == .registrationRejected)
        #expect(error.message.contains("io request 'Authenticate' has no handler: register one with configuration.io.register, "
            + "or fix $.io[1].request (or $.io[1].worker to serve it elsewhere)"))
        #expect(!error.message.contains("io request 'FetchData'"))
        #expect(fixture.core.workers["data-1"]?.registered == false)
    }

    @Test func undecodableRegistrationIsRejected() throws {
        var fixture = CoreFixture()
        let actions = fixture.fromWorker("edge", WireMessage(Header(.register, correlation: 8), address: "edge",
                                                             payload: Array(#"{"worker":"edge"}"#.utf8)))
        try #require(actions.count == 1)
        let reply = try #require(actions[0].sentToWorker)
        #expect(reply.message.header.correlation == 8)
        #expect(try payload(WireError.self, of: reply.message).code == .registrationRejected)
        #expect(fixture.core.workers["edge"]?.registered == false)
    }

    @Test func registeringAgainLosesTheOldIncarnationFirst() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let pending = try fixture.sendEvent("A", to: "auth", correlation: 11)
        #expect(pending.worker == "edge")

        let actions = fixture.register(CoreFixture.registration("edge"), correlation: 12)
        #expect(actions.first == .lost(worker: "edge", cause: .registeredAgain, pid: 101))
        let lostReply = try #require(actions.compactMap(\.sentToClient).first)
        #expect(lostReply.client == "A")
        #expect(lostReply.message.header.correlation == 11)
        #expect(try payload(WireError.self, of: lostReply.message).code == .workerLost)
        #expect(actions.compactMap(\.sentToWorker).map(\.message.header.kind) == [.welcome, .observe])
        #expect(try workerEvents(in: actions).map(\.phase) == [.lost, .registered])
        #expect(fixture.core.workers["edge"]?.registered == true)
    }

    @Test func messagesFromUnregisteredWorkersAskThemToRegister() throws {
        var fixture = CoreFixture()
        fixture.register("edge")
        for name in ["data-1", "ghost"] {
            let actions = fixture.fromWorker(name, WireMessage(Header(.heartbeat, correlation: 5), address: name))
            try #require(actions.count == 1)
            let reply = try #require(actions[0].sentToWorker)
            #expect(reply.worker == name)
            #expect(reply.message.header.kind == .error)
            let error = try payload(WireError.self, of: reply.message)
            #expect(error.code == .unavailable)
            #expect(error.message.contains("send register first"))
        }
    }

    @Test func workersMayNotSendClientOrCoordinatorKinds() throws {
        var fixture = CoreFixture()
        fixture.register("edge")
        for kind in [MessageKind.list, .welcome, .listing, .worker] {
            let actions = fixture.fromWorker("edge", WireMessage(Header(kind, correlation: 21), address: "edge"))
            try #require(actions.count == 1)
            let reply = try #require(actions[0].sentToWorker)
            #expect(reply.worker == "edge")
            #expect(reply.message.header.correlation == 21)
            #expect(try payload(WireError.self, of: reply.message).code == .unknownKind, "\(kind)")
        }
    }

    @Test func malformedWorkerFramesAreAnsweredNotFatal() throws {
        var fixture = CoreFixture()
        fixture.register("edge")
        let twoFrames = fixture.fromWorker("edge", frames: [Header(.state, correlation: 6).bytes, []])
        let reply = try #require(twoFrames.first?.sentToWorker)
        #expect(twoFrames.count == 1)
        #expect(reply.worker == "edge")
        #expect(reply.message.header.correlation == 6)
        #expect(try payload(WireError.self, of: reply.message).code == .malformedFrame)

        let garbage = fixture.fromWorker("edge", frames: [[1, 2, 3], [], []])
        let garbageReply = try #require(garbage.first?.sentToWorker)
        #expect(garbageReply.message.header.correlation == 0)
        #expect(try payload(WireError.self, of: garbageReply.message).code == .malformedFrame)
        #expect(fixture.core.workers["edge"]?.registered == true)
    }
}

@Suite("CoordinatorCore: client requests", .timeLimit(.minutes(2)))
struct CoordinatorCoreClientTests {
    static let state = Array(#"{"failedAttempts":0}"#.utf8)

    @Test func eventIsForwardedWithAFreshCorrelationAndTheReplyMapsBack() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let event = Array(#"{"startLogin":{}}"#.utf8)
        // Two clients pick the same correlation: the coordinator must tell their replies apart.
        let a = fixture.fromClient("A", WireMessage(Header(.event, correlation: 1), address: "auth", payload: event))
        let b = fixture.fromClient("B", WireMessage(Header(.event, correlation: 1), address: "auth", payload: event))
        let toA = try #require(a.first?.sentToWorker)
        let toB = try #require(b.first?.sentToWorker)
        #expect(a.count == 1 && b.count == 1)
        #expect(toA.worker == "edge" && toB.worker == "edge")
        #expect(toA.message.header.correlation != toB.message.header.correlation)
        #expect(toA.message.header.kind == .event)
        #expect(toA.message.address == "auth")
        #expect(toA.message.payload == event)

        // Replies come back in the other order and each reaches its client with its own correlation.
        let replyB = fixture.fromWorker("edge", WireMessage(Header(.state, correlation: toB.message.header.correlation),
                                                            address: "auth", payload: Self.state))
        #expect(replyB == [.toClient(Array("B".utf8), WireMessage(Header(.state, correlation: 1), address: "auth", payload: Self.state))])
        let replyA = fixture.fromWorker("edge", WireMessage(Header(.error, correlation: toA.message.header.correlation),
                                                            address: "auth", payload: WireError(.mailboxFull, "full").payload))
        #expect(replyA == [.toClient(Array("A".utf8), WireMessage(Header(.error, correlation: 1), address: "auth",
                                                                  payload: WireError(.mailboxFull, "full").payload))])

        // A second reply to the same request reaches no one.
        let duplicate = fixture.fromWorker("edge", WireMessage(Header(.state, correlation: toB.message.header.correlation),
                                                               address: "auth", payload: Self.state))
        #expect(duplicate == [])
    }

    @Test func noWaitFlagAndOtherRequestKindsAreForwarded() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let requests: [(MessageKind, Header.Flags, String)] = [
            (.event, .noWait, #"{"go":{}}"#), (.get, [], ""), (.cancel, [], #""fetch-items""#), (.stop, [], ""),
        ]
        for (index, (kind, flags, body)) in requests.enumerated() {
            let correlation = UInt64(100 + index)
            let actions = fixture.fromClient("A", WireMessage(Header(kind, flags: flags, correlation: correlation),
                                                              address: "loader", payload: Array(body.utf8)))
            let forwarded = try #require(actions.first?.sentToWorker)
            #expect(actions.count == 1)
            #expect(forwarded.worker == "edge")
            #expect(forwarded.message.header.kind == kind)
            #expect(forwarded.message.header.flags == flags)
            let reply = fixture.fromWorker("edge", WireMessage(Header(.accepted, correlation: forwarded.message.header.correlation),
                                                               address: "loader"))
            #expect(reply.first?.sentToClient?.message.header.correlation == correlation)
            #expect(reply.first?.sentToClient?.message.header.kind == .accepted)
        }
    }

    @Test func keyedInstancesGoToTheirPlacementInThePool() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var used: Set<String> = []
        for key in (0..<40).map({ "k\($0)" }) {
            let sent = try fixture.sendEvent("A", to: "counter/\(key)", correlation: 1)
            #expect(sent.worker == CoreFixture.topology.placement(ofMachine: "counter", key: key))
            used.insert(sent.worker)
        }
        #expect(used == ["data-1", "data-2"])
        // A single machine of a pool lives on the pool's first instance.
        #expect(try fixture.sendEvent("A", to: "sink", correlation: 2).worker == "data-1")
    }

    @Test(arguments: [
        ("nope", "no machine named 'nope'"),
        ("", "no machine named ''"),
        ("poller", "is keyed"),
        ("poller/", "is keyed"),
        ("auth/x", "is not keyed"),
    ])
    func badAddressesAreUnknownMachines(address: String, says: String) throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.fromClient("A", WireMessage(Header(.event, correlation: 77), address: address, payload: Array("{}".utf8)))
        let error = try errorReply(in: actions, to: "A", correlation: 77)
        #expect(error.code == .unknownMachine)
        #expect(error.address == address)
        #expect(error.message.contains(says))
        #expect(fixture.core.pending.isEmpty)
    }

    @Test func machineOnAnUnregisteredWorkerIsUnavailable() throws {
        var fixture = CoreFixture()
        fixture.register("data-1", "data-2")
        let actions = fixture.fromClient("A", WireMessage(Header(.get, correlation: 5), address: "auth"))
        let error = try errorReply(in: actions, to: "A", correlation: 5)
        #expect(error.code == .unavailable)
        #expect(error.address == "auth")
        #expect(error.message.contains("worker edge"))

        // No failover inside a pool: a key placed on an unregistered instance is unavailable.
        var half = CoreFixture()
        half.register("edge", "data-2")
        let keys = (0..<100).map { "k\($0)" }
        let key: String = try #require(keys.first(where: { CoreFixture.topology.placement(ofMachine: "counter", key: $0) == "data-1" }))
        let refused = half.fromClient("A", WireMessage(Header(.event, correlation: 6), address: "counter/\(key)", payload: Array("{}".utf8)))
        #expect(try errorReply(in: refused, to: "A", correlation: 6).code == .unavailable)
    }

    @Test func malformedFramesAreAnsweredWithTheCorrelationWhenReadable() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let header = Header(.event, correlation: 314).bytes

        let twoFrames = try errorReply(in: fixture.fromClient("A", frames: [header, Array("auth".utf8)]), to: "A", correlation: 314)
        #expect(twoFrames.code == .malformedFrame)

        let badAddress = try errorReply(in: fixture.fromClient("A", frames: [header, [0xFF, 0xFE], Array("{}".utf8)]),
                                        to: "A", correlation: 314)
        #expect(badAddress.code == .malformedFrame)

        let shortHeader = try errorReply(in: fixture.fromClient("A", frames: [Array(header.prefix(8)), [], []]), to: "A", correlation: 0)
        #expect(shortHeader.code == .malformedFrame)

        let noFrames = try errorReply(in: fixture.fromClient("A", frames: []), to: "A", correlation: 0)
        #expect(noFrames.code == .malformedFrame)

        var future = header
        future[1] = 2
        let version = try errorReply(in: fixture.fromClient("A", frames: [future, Array("auth".utf8), Array("{}".utf8)]),
                                     to: "A", correlation: 314)
        #expect(version.code == .unsupportedVersion)

        var strange = header
        strange[2] = 0x7E
        let kind = try errorReply(in: fixture.fromClient("A", frames: [strange, Array("auth".utf8), Array("{}".utf8)]),
                                  to: "A", correlation: 314)
        #expect(kind.code == .unknownKind)
        #expect(fixture.core.pending.isEmpty)
    }

    @Test(arguments: [MessageKind.register, .heartbeat, .state, .ioRequest, .output])
    func workerKindsFromClientsAreUnknownKinds(kind: MessageKind) throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.fromClient("A", WireMessage(Header(kind, correlation: 12), address: "auth", payload: Array("{}".utf8)))
        let error = try errorReply(in: actions, to: "A", correlation: 12)
        #expect(error.code == .unknownKind)
        #expect(error.message.contains(kind.name))
    }

    @Test func oversizedPayloadIsRefusedAtTheLimitPlusOne() throws {
        var fixture = CoreFixture(maxPayload: 16)
        fixture.registerAll()
        let atLimit = Array(#""aaaaaaaaaaaaaa""#.utf8)
        #expect(atLimit.count == 16)
        let accepted = fixture.fromClient("A", WireMessage(Header(.event, correlation: 1), address: "auth", payload: atLimit))
        #expect(accepted.first?.sentToWorker?.worker == "edge")

        let tooBig = Array(#""aaaaaaaaaaaaaaa""#.utf8)
        let refused = fixture.fromClient("A", WireMessage(Header(.event, correlation: 2), address: "auth", payload: tooBig))
        let error = try errorReply(in: refused, to: "A", correlation: 2)
        #expect(error.code == .oversized)
        #expect(error.address == "auth")
        #expect(error.message.contains("17 bytes"))
    }

    /// The coordinator routes on the header and address and never decodes event payloads: even
    /// a payload that is not JSON goes to the worker unchanged, which answers `malformed-json`
    /// (end-to-end: BadInputTests).
    @Test(arguments: [MessageKind.event, .cancel])
    func payloadsAreForwardedWithoutDecoding(kind: MessageKind) throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for body in ["startLogin", "{", ""] {
            let actions = fixture.fromClient("A", WireMessage(Header(kind, correlation: 13), address: "auth", payload: Array(body.utf8)))
            let forwarded = try #require(actions.first?.sentToWorker)
            #expect(forwarded.worker == "edge")
            #expect(forwarded.message.payload == Array(body.utf8))
            #expect(forwarded.message.header.kind == kind)
        }
    }

    @Test func aWorkerWithWorkerOutboxRequestsUnansweredIsBusy() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let limit = CoreFixture.topology.queues.workerOutbox
        var forwarded: [(worker: String, id: UInt64)] = []
        for index in 1...limit { forwarded.append(try fixture.sendEvent("A", to: "counter/k1", correlation: UInt64(index))) }
        let worker = forwarded[0].worker
        let refused = fixture.fromClient("A", WireMessage(Header(.event, correlation: 999), address: "counter/k1", payload: Array("{}".utf8)))
        let error = try errorReply(in: refused, to: "A", correlation: 999)
        #expect(error.code == .busy)
        #expect(error.message.contains("\(limit) requests unanswered"))
        #expect(error.address == "counter/k1")
        #expect(fixture.core.pending.count == limit)
        // One answer frees one place.
        _ = fixture.fromWorker(worker, WireMessage(Header(.accepted, correlation: forwarded[0].id), address: "counter/k1"))
        _ = try fixture.sendEvent("A", to: "counter/k1", correlation: 1000)
        #expect(fixture.core.inFlight[fixture.core.number(of: worker)] == limit)
        // A lost worker's requests are no longer in flight.
        _ = fixture.core.lose(worker, reason: "test", cause: .exited)
        #expect(fixture.core.inFlight[fixture.core.number(of: worker)] == 0)
    }

    /// Only the worker a request went to may answer it: a reply from another leaves the request
    /// pending and in flight, and the right worker's reply is still delivered.
    @Test func aReplyFromAnotherWorkerLeavesTheRequestPending() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let (worker, id) = try fixture.sendEvent("A", to: "counter/k1", correlation: 7)
        let other = worker == "data-1" ? "data-2" : "data-1"
        let wrong = fixture.fromWorker(other, WireMessage(Header(.accepted, correlation: id), address: "counter/k1"))
        #expect(wrong.compactMap(\.sentToClient).isEmpty)
        #expect(fixture.core.pending[id] != nil)
        #expect(fixture.core.inFlight[fixture.core.number(of: worker)] == 1)
        #expect(fixture.core.inFlight[fixture.core.number(of: other)] == 0)
        let right = fixture.fromWorker(worker, WireMessage(Header(.accepted, correlation: id), address: "counter/k1"))
        #expect(right.compactMap(\.sentToClient).map(\.message.header.correlation) == [7])
        #expect(fixture.core.pending[id] == nil)
        #expect(fixture.core.inFlight[fixture.core.number(of: worker)] == 0)
    }

    @Test func aLostWorkersRequestsFailInTheOrderTheyWereSent() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let worker = try fixture.sendEvent("A", to: "counter/k1", correlation: 1).worker
        for index in 2...80 { _ = try fixture.sendEvent("A", to: "counter/k1", correlation: UInt64(index)) }
        let failed = fixture.core.lose(worker, reason: "test", cause: .exited).compactMap(\.sentToClient).map(\.message.header.correlation)
        #expect(failed == (1...80).map(UInt64.init))
    }
}
