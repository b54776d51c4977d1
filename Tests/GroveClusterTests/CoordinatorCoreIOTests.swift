import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

extension CoreFixture {
    /// `edge` asks to run a `FetchData` for machine `loader` under its own call id `originID`.
    mutating func startCall(_ originID: UInt64, name: String = "FetchData", from origin: String = "edge",
                            address: String = "loader") -> [CoordinatorAction] {
        fromWorker(origin, ioRequest(originID, name: name, address: address))
    }

    /// Starts a call and returns where it went and the coordinator's call id.
    mutating func startedCall(_ originID: UInt64, address: String = "loader") throws -> (target: String, id: UInt64) {
        let actions = startCall(originID, address: address)
        try #require(actions.count == 2, "\(actions)")
        let sent = try #require(actions[0].sentToWorker)
        return (sent.worker, sent.message.header.correlation)
    }
}

func effectEvents(in actions: [CoordinatorAction]) throws -> [EffectEvent] {
    try actions.compactMap(\.published).filter { $0.topic.hasPrefix("effect:") }.map {
        #expect($0.message.header.kind == .effect)
        #expect($0.topic == "effect:" + $0.message.address)
        return try payload(EffectEvent.self, of: $0.message)
    }
}

/// An `io-request` for effect `fetch-<originID>` whose body is `body` (JSON unless `flags` say binary).
func ioRequest(_ originID: UInt64, name: String = "FetchData", address: String = "loader", flags: Header.Flags = [],
               body: [UInt8]? = nil) -> WireMessage {
    var payload: [UInt8] = []
    try! IOCallHead.write(name: name, effect: Array(#""fetch-\#(originID)""#.utf8), into: &payload)
    payload += body ?? Array(#"{"page":\#(originID)}"#.utf8)
    return WireMessage(Header(.ioRequest, flags: flags, correlation: originID), address: address, payload: payload)
}

/// An `io-result` whose response is `json`.
func ioResult(json: String = "null", id: UInt64, address: String = "loader") -> WireMessage {
    ioResult(payload: [IOCallResult.Outcome.response.rawValue] + Array(json.utf8), id: id, address: address)
}

func ioResult(payload: [UInt8], id: UInt64, flags: Header.Flags = [], address: String = "loader") -> WireMessage {
    WireMessage(Header(.ioResult, flags: flags, correlation: id), address: address, payload: payload)
}

/// The failure an `io-result` message carries; nil for a response.
func ioFailure(of message: WireMessage) throws -> IOCallResult.Failure? {
    guard case .failure(let failure) = try IOCallResult(reading: message.payload, binary: false) else { return nil }
    return failure
}

@Suite("CoordinatorCore: io calls", .timeLimit(.minutes(2)))
struct CoordinatorCoreIOTests {
    @Test func requestGoesToThePlacedGroupWithAFreshIDAndIsPublishedAsStarted() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.startCall(5)
        try #require(actions.count == 2)
        let sent = try #require(actions[0].sentToWorker)
        #expect(sent.worker.hasPrefix("data-"))
        #expect(sent.message.header.kind == .ioRequest)
        #expect(sent.message.address == "loader")
        // The request's bytes pass as they came.
        #expect(sent.message.payload == ioRequest(5).payload)
        #expect(try IOCallHead(reading: sent.message.payload).name == "FetchData")
        #expect(fixture.core.calls[sent.message.header.correlation]?.originID == 5)

        let published = try #require(actions[1].published)
        #expect(published.topic == "effect:loader")
        #expect(try effectEvents(in: [actions[1]]) == [
            EffectEvent(address: "loader", effect: .string("fetch-5"), request: "FetchData", worker: sent.worker, phase: .started),
        ])
    }

    @Test func callIDsAreFreshEvenWhenOriginsReuseTheirs() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let first = try fixture.startedCall(1)
        let second = try fixture.startedCall(1, address: "auth")
        #expect(first.id != second.id)
    }

    @Test func requestsRoundRobinAcrossThePool() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let targets = try (1...6).map { try fixture.startedCall(UInt64($0)).target }
        #expect(targets == ["data-1", "data-2", "data-1", "data-2", "data-1", "data-2"])
    }

    @Test func roundRobinSkipsUnregisteredInstances() throws {
        var fixture = CoreFixture()
        fixture.register("edge", "data-2")
        let targets = try (1...3).map { try fixture.startedCall(UInt64($0)).target }
        #expect(targets == ["data-2", "data-2", "data-2"])
    }

    /// An attacker's key for an external group (hosting a Counter) started Authenticate and
    /// VerifyTwoFactor in its machine's name: 21 passwords in 0.4 s, around AuthFlow's lockout.
    /// A machine on an external group starts a request only when the request's io[] entry names
    /// it; an entry that names machines admits only those.
    @Test func aMachineStartsOnlyTheRequestsItsTopologyAllows() throws {
        var topology = CoreFixture.topology
        topology.workers[0].external = true   // edge: auth, loader, poller
        topology.io = [.init(request: "FetchData", worker: "data", machines: ["loader"]), .init(request: "Authenticate", worker: "data")]
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        func refused(_ actions: [CoordinatorAction], _ mentions: String) throws {
            let reply = try #require(actions.compactMap(\.sentToWorker).first, "\(actions)")
            #expect(reply.message.header.kind == .ioResult && reply.worker == "edge")
            let failure = try #require(try ioFailure(of: reply.message))
            #expect(failure.code == "forbidden" && failure.message.contains(mentions), "\(failure)")
            #expect(actions.contains { if case .warn(let text) = $0 { text.contains(mentions) } else { false } })
        }
        try refused(fixture.startCall(1, name: "Authenticate", address: "loader"), "external worker group")
        try refused(fixture.startCall(2, name: "FetchData", address: "auth"), "names only 'loader'")
        #expect(fixture.core.calls.isEmpty)
        let named = fixture.startCall(3, name: "FetchData", address: "loader")
        #expect(named.first?.sentToWorker?.message.header.kind == .ioRequest, "\(named)")
        // A group fsm-launch starts: any of its machines, when the entry names none.
        topology.workers[0].external = false
        var launched = CoreFixture(topology: topology)
        launched.registerAll()
        #expect(launched.startCall(4, name: "Authenticate", address: "auth").first?.sentToWorker != nil)
        #expect(topology.ioRefusal(of: "FetchData", from: "auth") != nil && topology.ioRefusal(of: "FetchData", from: "loader") == nil)
    }

    @Test func requestPlacedNowhereFailsBackToTheOriginWithNoHandler() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        try Self.expectFailure(fixture.startCall(23, name: "SubmitForm"), code: "no-handler", mentions: "SubmitForm")
        #expect(fixture.core.calls.isEmpty)
    }

    @Test func requestWithNoRegisteredTargetFailsBackToTheOriginWithWorkerLost() throws {
        var fixture = CoreFixture()
        fixture.register("edge")
        try Self.expectFailure(fixture.startCall(23), code: "worker-lost", mentions: "group 'data'")
        #expect(fixture.core.calls.isEmpty)
    }

    static func expectFailure(_ actions: [CoordinatorAction], code: String, mentions: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(actions.count == 1, "\(actions)", sourceLocation: sourceLocation)
        let reply = try #require(actions[0].sentToWorker, sourceLocation: sourceLocation)
        #expect(reply.worker == "edge", sourceLocation: sourceLocation)
        #expect(reply.message.header.kind == .ioResult, sourceLocation: sourceLocation)
        #expect(reply.message.header.correlation == 23, sourceLocation: sourceLocation)
        #expect(reply.message.address == "loader", sourceLocation: sourceLocation)
        let failure = try ioFailure(of: reply.message)
        #expect(failure?.code == code, sourceLocation: sourceLocation)
        #expect(failure?.message.contains(mentions) == true, sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        Array(#"{"name":"FetchData"}"#.utf8),  // JSON, no head: the name length reads as 0x7b22
        [0, 9] + Array("FetchData".utf8) + [0],  // truncated at the effect id's length
        [0, 3] + Array("Fet".utf8) + [0, 5] + Array("fetch".utf8),  // the effect id is not JSON
    ])
    func requestWithoutAReadableHeadFailsWithCodec(payload: [UInt8]) throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.fromWorker("edge", WireMessage(Header(.ioRequest, correlation: 8), address: "loader", payload: payload))
        try #require(actions.count == 1)
        let reply = try #require(actions[0].sentToWorker)
        #expect(reply.message.header.correlation == 8)
        #expect(try ioFailure(of: reply.message)?.code == "codec")
        #expect(fixture.core.calls.isEmpty)
    }

    @Test func requestBodyIsNeverDecodedAndPassesWithItsFlags() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // Not JSON, not the binary codec either: the coordinator routes on the head alone.
        let body: [UInt8] = [0xFF, 0x00, 0x7B, 0xC3]
        let request = ioRequest(11, flags: .binary, body: body)
        let actions = fixture.fromWorker("edge", request)
        try #require(actions.count == 2, "\(actions)")
        let sent = try #require(actions[0].sentToWorker)
        #expect(sent.message.header.kind == .ioRequest)
        #expect(sent.message.header.flags == .binary)
        #expect(sent.message.payload == request.payload)
        #expect(Array(sent.message.payload.suffix(body.count)) == body)
        #expect(try effectEvents(in: actions).map(\.phase) == [.started])

        // The response's bytes are not read either: only the first byte says it is one.
        let result = ioResult(payload: [IOCallResult.Outcome.response.rawValue] + body, id: sent.message.header.correlation, flags: .binary)
        let delivered = fixture.fromWorker(sent.worker, result)
        try #require(delivered.count == 2, "\(delivered)")
        #expect(delivered[0] == .toWorker("edge", WireMessage(Header(.ioResult, flags: .binary, correlation: 11), address: "loader",
                                                              payload: result.payload)))
        #expect(try effectEvents(in: delivered).map(\.phase) == [.completed])
    }

    @Test func unreadableResultIsDeliveredAndPublishedAsFailed() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(12)
        let actions = fixture.fromWorker(call.target, ioResult(payload: [7, 1, 2], id: call.id))
        try #require(actions.count == 2)
        #expect(actions[0].sentToWorker?.message.payload == [7, 1, 2])
        let event = try #require(try effectEvents(in: actions).first)
        #expect(event.phase == .failed)
        #expect(event.reason?.hasPrefix("codec: an io result starts with 0") == true)
    }

    @Test func resultGoesBackToTheOriginWithItsCallIDAndIsPublishedAsCompleted() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(5)
        let result = ioResult(json: #"["a","b"]"#, id: call.id)
        let actions = fixture.fromWorker(call.target, result)
        try #require(actions.count == 2)
        #expect(actions[0] == .toWorker("edge", WireMessage(Header(.ioResult, correlation: 5), address: "loader", payload: result.payload)))
        #expect(try effectEvents(in: [actions[1]]) == [
            EffectEvent(address: "loader", effect: .string("fetch-5"), request: "FetchData", worker: call.target, phase: .completed),
        ])
        // Delivered once.
        #expect(fixture.fromWorker(call.target, result) == [])
        #expect(fixture.core.calls.isEmpty)
        #expect(fixture.core.callsByOrigin["edge"]?.isEmpty ?? true)
    }

    @Test func failureIsDeliveredAndPublishedAsFailedWithTheReason() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(6)
        let result = ioResult(payload: IOCallResult.payload(failing: "timeout", "upstream slow"), id: call.id)
        let actions = fixture.fromWorker(call.target, result)
        try #require(actions.count == 2)
        let delivered = try #require(actions[0].sentToWorker)
        #expect(delivered.worker == "edge")
        #expect(delivered.message.header.correlation == 6)
        #expect(try ioFailure(of: delivered.message) == .init(code: "timeout", message: "upstream slow"))
        let event = try #require(try effectEvents(in: actions).first)
        #expect(event.phase == .failed)
        #expect(event.reason == "timeout: upstream slow")
    }

    @Test func cancelIsForwardedToTheTargetAndTheLateResultIsNotDelivered() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(7)
        let other = try fixture.startedCall(8)

        let cancel = WireMessage(Header(.ioCancel, correlation: 7), address: "loader", payload: Array(#"{"reason":"replaced"}"#.utf8))
        let actions = fixture.fromWorker("edge", cancel)
        // Forwarded only: `cancelled` waits for the target to say the task ended.
        #expect(actions == [.toWorker(call.target, WireMessage(Header(.ioCancel, correlation: call.id), address: "loader"))])

        // The handler finished anyway: the machine must not see it.
        let late = fixture.fromWorker(call.target, ioResult(id: call.id))
        #expect(late == [])
        // Cancelling twice does nothing more.
        #expect(fixture.fromWorker("edge", cancel) == [])
        // The other call is untouched.
        let otherResult = fixture.fromWorker(other.target, ioResult(id: other.id))
        #expect(otherResult.first?.sentToWorker?.message.header.correlation == 8)
    }

    @Test func cancelFromAnotherWorkerDoesNotTouchTheCall() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(10)
        // Call ids are per origin: data-2's call 10 is not edge's call 10.
        #expect(fixture.fromWorker("data-2", WireMessage(Header(.ioCancel, correlation: 10), address: "loader")) == [])
        let delivered = fixture.fromWorker(call.target, ioResult(id: call.id))
        #expect(delivered.first?.sentToWorker?.worker == "edge")
    }
}

@Suite("CoordinatorCore: worker loss", .timeLimit(.minutes(2)))
struct CoordinatorCoreLossTests {
    @Test func losingAMachineWorkerFailsItsRequestsAndCancelsItsCalls() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let request = try fixture.sendEvent("A", to: "auth", correlation: 42)
        let other = try fixture.sendEvent("B", to: "counter/k1", correlation: 43)
        let call = try fixture.startedCall(5)
        // A route event is pending on edge too; it has no client to tell.
        _ = fixture.fromWorker("edge", WireMessage(Header(.output), address: "auth",
                                                   payload: Array(#"{"output":"signedIn"}"#.utf8)))
        #expect(request.worker == "edge")

        let actions = fixture.core.lose("edge", reason: "process exited with status 9", cause: .exited)
        #expect(actions.first == .lost(worker: "edge", cause: .exited, pid: 101))

        let replies = actions.compactMap(\.sentToClient)
        try #require(replies.count == 1)
        #expect(replies[0].client == "A")
        #expect(replies[0].message.header.kind == .error)
        #expect(replies[0].message.header.correlation == 42)
        let error = try payload(WireError.self, of: replies[0].message)
        #expect(error.code == .workerLost)
        #expect(error.address == "auth")
        #expect(error.message.contains("process exited with status 9"))

        // The call edge's machine started on the pool is cancelled there.
        #expect(actions.compactMap(\.sentToWorker).map { $0.worker } == [call.target])
        #expect(actions.contains(.toWorker(call.target, WireMessage(Header(.ioCancel, correlation: call.id), address: "loader"))))
        let effects = try effectEvents(in: actions)
        #expect(effects.map(\.phase) == [.lost])
        #expect(effects.first?.effect == .string("fetch-5"))

        let lost = try workerEvents(in: actions)
        #expect(lost == [WorkerEvent(worker: "edge", phase: .lost, reason: "process exited with status 9",
                                     machines: ["auth", "loader"])])
        // Keyed machines are listed by the instances spawned on the lost worker; none were.
        #expect(lost.first?.machines == ["auth", "loader"])

        #expect(fixture.core.workers["edge"]?.registered == false)
        #expect(fixture.core.workers["edge"]?.pid == nil)
        #expect(fixture.core.calls.isEmpty)
        #expect(fixture.core.pending.keys.sorted() == [other.id])

        // Afterwards: its machines are unavailable, the rest keeps working.
        let refused = fixture.fromClient("A", WireMessage(Header(.get, correlation: 50), address: "auth"))
        #expect(try errorReply(in: refused, to: "A", correlation: 50).code == .unavailable)
        let reply = fixture.fromWorker(other.worker, WireMessage(Header(.accepted, correlation: other.id), address: "counter/k1"))
        #expect(reply.first?.sentToClient?.client == "B")
        #expect(reply.first?.sentToClient?.message.header.correlation == 43)
        // A late result of the cancelled call goes nowhere.
        #expect(fixture.fromWorker(call.target, ioResult(id: call.id)) == [])
    }

    @Test func losingAnIOWorkerReturnsWorkerLostResultsToTheOrigins() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let calls = try (1...4).map { try fixture.startedCall(UInt64($0)) }
        let onData1 = calls.enumerated().filter { $0.element.target == "data-1" }.map { UInt64($0.offset + 1) }
        #expect(onData1 == [1, 3])

        let actions = fixture.core.lose("data-1", reason: "no heartbeat", cause: .silent)
        #expect(actions.first == .lost(worker: "data-1", cause: .silent, pid: 201))
        let results = actions.compactMap(\.sentToWorker)
        #expect(results.allSatisfy { $0.worker == "edge" && $0.message.header.kind == .ioResult && $0.message.address == "loader" })
        #expect(results.map(\.message.header.correlation).sorted() == onData1)
        for result in results {
            let failure = try #require(try ioFailure(of: result.message))
            #expect(failure.code == "worker-lost")
            #expect(failure.message.contains("data-1"))
        }
        let effects = try effectEvents(in: actions)
        #expect(effects.count == 2)
        #expect(effects.allSatisfy { $0.phase == .lost && $0.worker == "data-1" })
        #expect(try workerEvents(in: actions).map(\.phase) == [.lost])

        // The calls on data-2 still complete; the next requests all go to data-2.
        let survivor = calls[1]
        let delivered = fixture.fromWorker("data-2", ioResult(id: survivor.id))
        #expect(delivered.first?.sentToWorker?.message.header.correlation == 2)
        #expect(try fixture.startedCall(9).target == "data-2")
        #expect(try fixture.startedCall(10).target == "data-2")
    }

    @Test func losingAnUnregisteredOrUnknownWorkerDoesNothing() {
        var fixture = CoreFixture()
        fixture.register("edge")
        #expect(fixture.core.lose("data-1", reason: "x", cause: .exited) == [])
        #expect(fixture.core.lose("ghost", reason: "x", cause: .exited) == [])
        _ = fixture.core.lose("edge", reason: "x", cause: .exited)
        #expect(fixture.core.lose("edge", reason: "again", cause: .exited) == [])
    }
}

@Suite("CoordinatorCore: heartbeats", .timeLimit(.minutes(2)))
struct CoordinatorCoreHeartbeatTests {
    static func heartbeats(in actions: [CoordinatorAction]) -> [String] {
        actions.compactMap(\.sentToWorker).filter {
            $0.message.header.kind == .heartbeat && $0.message.address == $0.worker && $0.message.payload.isEmpty
        }.map(\.worker).sorted()
    }

    @Test func tickSendsHeartbeatsToRegisteredWorkersEveryInterval() {
        var fixture = CoreFixture()
        fixture.register("edge", "data-2")
        let t0 = fixture.t0
        #expect(Self.heartbeats(in: fixture.core.tick(now: t0)) == ["data-2", "edge"])
        #expect(fixture.core.tick(now: t0 + .milliseconds(100)) == [])
        #expect(fixture.core.tick(now: t0 + .milliseconds(249)) == [])
        #expect(Self.heartbeats(in: fixture.core.tick(now: t0 + .milliseconds(250))) == ["data-2", "edge"])
        #expect(fixture.core.tick(now: t0 + .milliseconds(400)) == [])
        fixture.register("data-1", after: .milliseconds(450))
        #expect(Self.heartbeats(in: fixture.core.tick(now: t0 + .milliseconds(500))) == ["data-1", "data-2", "edge"])
    }

    @Test func silentWorkersAreLostAfterTheTimeout() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let t0 = fixture.t0
        let request = try fixture.sendEvent("A", to: "sink", correlation: 3)
        #expect(request.worker == "data-1")
        // edge keeps talking; data-2 answers late but within the timeout; data-1 goes quiet.
        #expect(fixture.fromWorker("edge", WireMessage(Header(.heartbeat), address: "edge"), after: .milliseconds(1000)) == [])
        _ = fixture.fromWorker("data-2", WireMessage(Header(.heartbeat), address: "data-2"), after: .milliseconds(200))

        let early = fixture.core.tick(now: t0 + .milliseconds(1499))
        #expect(try workerEvents(in: early).isEmpty)
        #expect(!early.contains { if case .lost = $0 { true } else { false } })

        let actions = fixture.core.tick(now: t0 + .milliseconds(1600))
        let lost = try workerEvents(in: actions)
        #expect(lost.map(\.worker) == ["data-1"])
        #expect(lost.first?.reason == "no heartbeat for 1500 ms")
        #expect(actions.contains(.lost(worker: "data-1", cause: .silent, pid: 201)))
        let reply = try #require(actions.compactMap(\.sentToClient).first)
        #expect(reply.client == "A")
        #expect(reply.message.header.correlation == 3)
        #expect(try payload(WireError.self, of: reply.message).code == .workerLost)

        let later = fixture.core.tick(now: t0 + .milliseconds(1750))
        #expect(try workerEvents(in: later).map(\.worker) == ["data-2"])
        #expect(try workerEvents(in: fixture.core.tick(now: t0 + .milliseconds(2400))).isEmpty)
        #expect(try workerEvents(in: fixture.core.tick(now: t0 + .milliseconds(2600))).map(\.worker) == ["edge"])
        #expect(fixture.core.unregistered == ["data-1", "data-2", "edge"])
        // Nobody is left to heartbeat or lose.
        #expect(fixture.core.tick(now: t0 + .milliseconds(5000)) == [])
    }

    /// A coordinator that did not run for longer than the timeout (SIGSTOP of fsm-launch, a
    /// starved CPU) has not heard what its workers sent meanwhile: its own pause is not their
    /// silence, and each gets a full timeout from then. Killed for it, every worker lost its
    /// `none` machines.
    @Test func theCoordinatorsOwnPauseIsNotItsWorkersSilence() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let t0 = fixture.t0
        _ = fixture.core.tick(now: t0 + .milliseconds(100))
        let resumed = fixture.core.tick(now: t0 + .milliseconds(4100))
        #expect(!resumed.contains { if case .lost = $0 { true } else { false } }, "\(resumed)")
        #expect(resumed.contains(.warn("the coordinator did not run for 4000 ms (stopped, starved of CPU, or busy with one long turn of work); "
                                       + "its workers get a full heartbeat timeout from now to be heard from again")))
        #expect(fixture.core.unregistered.isEmpty)
        // Then the timeout runs from the pause's end: a worker still silent is lost.
        #expect(!fixture.core.tick(now: t0 + .milliseconds(5500)).contains { if case .lost = $0 { true } else { false } })
        let later = fixture.core.tick(now: t0 + .milliseconds(5700))
        #expect(try workerEvents(in: later).map(\.worker).sorted() == ["data-1", "data-2", "edge"])
    }

    @Test func anyMessageCountsAsALifeSign() throws {
        var fixture = CoreFixture()
        fixture.register("edge")
        let state = WireMessage(Header(.stateChanged), address: "auth", payload: Array(#"{"state":1}"#.utf8))
        _ = fixture.fromWorker("edge", state, after: .milliseconds(1400))
        #expect(try workerEvents(in: fixture.core.tick(now: fixture.t0 + .milliseconds(2000))).isEmpty)
        #expect(try workerEvents(in: fixture.core.tick(now: fixture.t0 + .milliseconds(3000))).map(\.phase) == [.lost])
    }
}

@Suite("CoordinatorCore: outputs and routes", .timeLimit(.minutes(2)))
struct CoordinatorCoreRouteTests {
    static func output(_ json: String, from address: String) -> WireMessage {
        WireMessage(Header(.output), address: address, payload: Array(#"{"output":\#(json)}"#.utf8))
    }

    @Test func aRoutedEventTheTargetRefusesIsLoggedAndPublished() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.fromWorker("edge", Self.output(#""signedIn""#, from: "auth"))
        let event = try #require(actions.compactMap(\.sentToWorker).first)
        let refusal = WireError(.undecodableEvent, "'load' is not a case of Loader.Event", address: event.message.address, path: "$")
        let answer = WireMessage(Header(.error, correlation: event.message.header.correlation), address: event.message.address,
                                 payload: refusal.payload)
        let reported = fixture.fromWorker(event.worker, answer)
        try #require(reported.count == 2)
        guard case .warn(let warning) = reported[0], case .publish(let topic, let published) = reported[1] else {
            Issue.record("expected a warning and a publication, got \(reported)")
            return
        }
        #expect(warning.contains("route from auth to \(event.message.address)"))
        #expect(topic == "route:auth")
        let error = try payload(WireError.self, of: published)
        #expect(error.code == .undecodableEvent)
        #expect(error.path == "$")
        #expect(fixture.core.pending.isEmpty)
    }

    @Test(arguments: [#"{"signedIn":{"user":"ada"}}"#, #""signedIn""#])
    func matchingOutputBecomesANoWaitEventForTheTarget(json: String) throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let message = Self.output(json, from: "auth")
        let actions = fixture.fromWorker("edge", message)
        try #require(actions.count == 2)
        #expect(actions[0] == .publish(topic: "output:auth", message))
        let event = try #require(actions[1].sentToWorker)
        #expect(event.worker == "edge")
        #expect(event.message.address == "loader")
        #expect(event.message.header.kind == .event)
        #expect(event.message.header.flags == .noWait)
        // The route's bare "load" is expanded to the case form.
        #expect(try JSONValue(parsing: Data(event.message.payload)) == .object(["load": .object([:])]))

        // Its accepted reply is swallowed: no client asked.
        let accepted = fixture.fromWorker("edge", WireMessage(Header(.accepted, correlation: event.message.header.correlation), address: "loader"))
        #expect(accepted == [])
        #expect(fixture.core.pending.isEmpty)
    }

    @Test(arguments: [#"{"signedOut":{}}"#, #""signedOut""#, #"{"signedIn":{},"extra":{}}"#, "17", "null"])
    func nonMatchingOutputIsOnlyPublished(json: String) {
        var fixture = CoreFixture()
        fixture.registerAll()
        let message = Self.output(json, from: "auth")
        #expect(fixture.fromWorker("edge", message) == [.publish(topic: "output:auth", message)])
        #expect(fixture.core.pending.isEmpty)
    }

    @Test func routeWithoutEventForwardsTheOutputAndNotesTheKeyedInstance() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.fromWorker("edge", Self.output(#"{"loaded":{"count":3}}"#, from: "loader"))
        try #require(actions.count == 2)
        let event = try #require(actions[1].sentToWorker)
        #expect(event.message.address == "poller/eu-1")
        #expect(event.message.header.flags == .noWait)
        #expect(try JSONValue(parsing: Data(event.message.payload)) == .object(["loaded": .object(["count": .integer(3)])]))
        #expect(fixture.listing().machines.first { $0.name == "poller" }?.instances == ["poller/eu-1"])
    }

    @Test func routeFromAKeyedMachineMatchesEveryInstanceAndSkipsUnavailableTargets() throws {
        var fixture = CoreFixture()
        fixture.register("edge")
        let message = Self.output(#"{"tick":{}}"#, from: "poller/eu-1")
        // counter/7 lives on the data pool, which is down: the output is still published, and the
        // failed route is logged and published on route:<from>, since no client waits for it.
        let down = fixture.fromWorker("edge", message)
        try #require(down.count == 3)
        #expect(down[0] == .publish(topic: "output:poller/eu-1", message))
        guard case .warn(let warning) = down[1] else { Issue.record("expected a warning, got \(down[1])"); return }
        #expect(warning.contains("route from poller/eu-1 to counter/7"))
        guard case .publish(let topic, let failure) = down[2] else { Issue.record("expected a publish, got \(down[2])"); return }
        #expect(topic == "route:poller/eu-1")
        #expect(failure.header.kind == .error)
        #expect(try payload(WireError.self, of: failure).code == .unavailable)
        #expect(fixture.core.pending.isEmpty)

        fixture.register("data-1", "data-2")
        let actions = fixture.fromWorker("edge", message)
        try #require(actions.count == 2)
        let event = try #require(actions[1].sentToWorker)
        #expect(event.worker == CoreFixture.topology.placement(ofMachine: "counter", key: "7"))
        #expect(event.message.address == "counter/7")
    }

    @Test func undecodableOutputIsOnlyPublished() {
        var fixture = CoreFixture()
        fixture.registerAll()
        let message = WireMessage(Header(.output), address: "auth", payload: Array("signedIn".utf8))
        #expect(fixture.fromWorker("edge", message) == [.publish(topic: "output:auth", message)])
    }

    @Test func stateChangesArePublishedByAddress() {
        var fixture = CoreFixture()
        fixture.registerAll()
        let change = WireMessage(Header(.stateChanged), address: "poller/eu-1",
                                 payload: try! WireJSON.encode(StateChange(address: "poller/eu-1", worker: "edge", state: .number(1))))
        #expect(fixture.fromWorker("edge", change) == [.publish(topic: "state:poller/eu-1", change)])
    }
}

@Suite("CoordinatorCore: observation", .timeLimit(.minutes(2)))
struct CoordinatorCoreObservationTests {
    @Test func subscriptionsReachEveryRegisteredWorkerOnlyWhenTheSetChanges() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let first = fixture.core.subscription([1] + Array("state:auth".utf8))
        let told = first.compactMap(\.sentToWorker)
        #expect(Set(told.map(\.worker)) == Set(fixture.core.workers.keys))
        for message in told.map(\.message) {
            #expect(message.header.kind == .observe)
            #expect(try payload(Observation.self, of: message) == Observation(prefixes: ["state:auth"]))
        }
        // XPUB repeats nothing, but a duplicate must not cause traffic either.
        #expect(fixture.core.subscription([1] + Array("state:auth".utf8)).isEmpty)
        let gone = fixture.core.subscription([0] + Array("state:auth".utf8)).compactMap(\.sentToWorker)
        #expect(try gone.map { try payload(Observation.self, of: $0.message) }.allSatisfy { $0.prefixes.isEmpty })
        #expect(gone.count == told.count)
        // Not a subscription message: ignored.
        #expect(fixture.core.subscription([7, 1, 2]).isEmpty)
        #expect(fixture.core.subscription([]).isEmpty)
    }

    @Test func observationMatchesTopicsByPrefix() {
        let observation = Observation(prefixes: ["state:poller/", "effect:"])
        #expect(observation.watches("state:poller/eu"))
        #expect(!observation.watches("state:auth"))
        #expect(Observation(prefixes: [""]).watches("state:auth"))
        #expect(!Observation(prefixes: []).watches("state:auth"))
    }
}

@Suite("CoordinatorCore: machine lifecycle", .timeLimit(.minutes(2)))
struct CoordinatorCoreMachineLifecycleTests {
    @Test func aMachinesEndIsPublishedOnItsTopicUnchanged() {
        var fixture = CoreFixture()
        fixture.registerAll()
        let ended = WireMessage(Header(.machine), address: "auth", payload: Array(#"{"address":"auth","reason":"stopped"}"#.utf8))
        #expect(fixture.fromWorker("edge", ended) == [.publish(topic: "machine:auth", ended)])
    }
}
