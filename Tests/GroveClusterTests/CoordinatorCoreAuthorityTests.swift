@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// A worker speaks only for what it hosts (issue 34, attack 2): every kind a worker sends is
/// checked as the table of message kinds says, and what fails has no effect.
@Suite("CoordinatorCore: workers speak only for what they host", .timeLimit(.minutes(2)))
struct CoordinatorCoreAuthorityTests {
    /// The `forbidden` refusal sent to `worker` in `actions`, checked to name `kind` and `address`.
    func refusal(in actions: [CoordinatorAction], to worker: String, kind: MessageKind, address: String,
                 sourceLocation: SourceLocation = #_sourceLocation) throws -> WireError {
        let sent = try #require(actions.compactMap(\.sentToWorker).first { $0.worker == worker && $0.message.header.kind == .error },
                                "no refusal to \(worker) in \(actions)", sourceLocation: sourceLocation)
        let error = try payload(WireError.self, of: sent.message)
        #expect(error.code == .forbidden, sourceLocation: sourceLocation)
        #expect(error.address == address, sourceLocation: sourceLocation)
        #expect(error.message.contains(kind.name), "\(error.message)", sourceLocation: sourceLocation)
        return error
    }

    /// No effect: nothing published, nothing sent to a client or to another worker.
    func noEffect(_ actions: [CoordinatorAction], besides worker: String, sourceLocation: SourceLocation = #_sourceLocation) {
        // Closures are kept out of #expect: Swift 6.3 may run the wrong one (EventWatcher.effects).
        let inert = actions.allSatisfy { $0.published == nil && $0.sentToClient == nil }
        let toSenderOnly = actions.compactMap(\.sentToWorker).allSatisfy { $0.worker == worker }
        #expect(inert && toSenderOnly, "\(actions)", sourceLocation: sourceLocation)
    }

    func counterInstances(_ fixture: CoreFixture) -> [String]? {
        fixture.listing().machines.first { $0.name == "counter" }?.instances
    }

    func warnings(in actions: [CoordinatorAction]) -> [String] {
        actions.compactMap { if case .warn(let text) = $0 { text } else { nil } }
    }

    static func stateChanged(_ address: String, worker: String, _ state: String = #"{"user":"Admin"}"#) -> WireMessage {
        WireMessage(Header(.stateChanged), address: address,
                    payload: Array(#"{"address":"\#(address)","worker":"\#(worker)","state":\#(state)}"#.utf8))
    }

    // MARK: - State changes, outputs, endings

    @Test func aStateChangeForAMachineOfAnotherWorkerIsRefusedAndNotPublished() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // data-1 hosts neither auth (edge's) nor counter/<a key placed on data-2>.
        let other = (0..<100).map { "counter/k\($0)" }.first { CoreFixture.topology.placement(ofMachine: "counter", key: String($0.dropFirst(8))) == "data-2" }!
        for address in ["auth", other, "nothing", "counter"] {
            let actions = fixture.fromWorker("data-1", Self.stateChanged(address, worker: "data-1"))
            noEffect(actions, besides: "data-1")
            _ = try refusal(in: actions, to: "data-1", kind: .stateChanged, address: address)
        }
        // Its own are published.
        let own = (0..<100).map { "counter/k\($0)" }.first { CoreFixture.topology.placement(ofMachine: "counter", key: String($0.dropFirst(8))) == "data-1" }!
        for address in ["sink", own] {
            let actions = fixture.fromWorker("data-1", Self.stateChanged(address, worker: "data-1"))
            #expect(actions.compactMap(\.published).map(\.topic) == ["state:" + address])
        }
    }

    static func effect(_ address: String, worker: String, phase: String = "started") -> WireMessage {
        WireMessage(Header(.effect), address: address, payload: Array(
            #"{"address":"\#(address)","worker":"\#(worker)","effect":{"reserved":"state-timeout"},"kind":"timer","phase":"\#(phase)","deadlineNs":1}"#.utf8))
    }

    @Test func anEffectOfAMachineOfAnotherWorkerIsRefusedAndNotPublished() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let other = (0..<100).map { "counter/k\($0)" }.first { CoreFixture.topology.placement(ofMachine: "counter", key: String($0.dropFirst(8))) == "data-2" }!
        for address in ["auth", other, "nothing"] {
            let actions = fixture.fromWorker("data-1", Self.effect(address, worker: "data-1"))
            noEffect(actions, besides: "data-1")
            _ = try refusal(in: actions, to: "data-1", kind: .effect, address: address)
        }
        // Its own machine's, naming another worker in the payload, or not an effect of its own work.
        for payload in [#"{"address":"sink","worker":"edge","effect":"t","kind":"timer","phase":"started"}"#,
                        #"{"address":"sink","worker":"data-1","effect":"t","request":"FetchData","phase":"lost"}"#,
                        #"{"address":"sink","worker":"data-1","effect":"t","kind":"timer","phase":"started","kind":"io"}"#] {
            let actions = fixture.fromWorker("data-1", WireMessage(Header(.effect), address: "sink", payload: Array(payload.utf8)))
            noEffect(actions, besides: "data-1")
            _ = try refusal(in: actions, to: "data-1", kind: .effect, address: "sink")
        }
        // Its own are published on effect:<address>, as sent.
        let own = Self.effect("sink", worker: "data-1")
        let published = fixture.fromWorker("data-1", own).compactMap(\.published)
        #expect(published.map(\.topic) == ["effect:sink"])
        #expect(published.first?.message.payload == own.payload)
    }

    @Test func aRefusalNamesWhereTheMachineLives() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let error = try refusal(in: fixture.fromWorker("data-1", Self.stateChanged("auth", worker: "data-1")),
                                to: "data-1", kind: .stateChanged, address: "auth")
        #expect(error.message.contains("the topology places it on edge"), "\(error.message)")
    }

    @Test func aPayloadNamingAnotherMachineOrWorkerIsRefused() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // The frame's address is edge's own, the payload's another machine's, or another worker's.
        for payload in [#"{"address":"sink","worker":"edge","state":{}}"#, #"{"address":"auth","worker":"data-1","state":{}}"#,
                        #"{"state":{},"address":"sink"}"#] {
            let message = WireMessage(Header(.stateChanged), address: "auth", payload: Array(payload.utf8))
            let actions = fixture.fromWorker("edge", message)
            noEffect(actions, besides: "edge")
            _ = try refusal(in: actions, to: "edge", kind: .stateChanged, address: "auth")
        }
        // Written another way (keys in another order, spaces) but naming itself: published.
        let spaced = WireMessage(Header(.stateChanged), address: "auth", payload: Array(#"{"state": {}, "worker": "edge", "address": "auth"}"#.utf8))
        #expect(fixture.fromWorker("edge", spaced).compactMap(\.published).count == 1)
        #expect(CoordinatorCore.begins(Array(#"{"address":"auth","worker":"edge","state":1}"#.utf8), address: "auth", worker: "edge"))
        #expect(!CoordinatorCore.begins(Array(#"{"address":"auth","worker":"edge2","state":1}"#.utf8), address: "auth", worker: "edge"))
        #expect(!CoordinatorCore.begins(Array(#"{"address":"a\"","worker":"edge","state":1}"#.utf8), address: "a\"", worker: "edge"),
                "an address that needs an escape takes the parsed road")
    }

    @Test func anOutputForAMachineOfAnotherWorkerIsNotRoutedNorPublished() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // auth(signedIn) → loader(load): from data-1 it must not reach loader.
        let output = WireMessage(Header(.output), address: "auth", payload: Array(#"{"output":"signedIn"}"#.utf8))
        let forged = fixture.fromWorker("data-1", output)
        noEffect(forged, besides: "data-1")
        _ = try refusal(in: forged, to: "data-1", kind: .output, address: "auth")
        #expect(fixture.core.pending.count == 0, "no routed event is pending")
        // From edge, the route fires.
        let real = fixture.fromWorker("edge", output)
        let routed = real.compactMap(\.sentToWorker).contains { $0.worker == "edge" && $0.message.header.kind == .event && $0.message.address == "loader" }
        #expect(routed, "\(real)")
    }

    @Test func anEndingForAMachineOfAnotherWorkerIsNotPublishedAndForgetsNothing() throws {
        let topology = Topology(
            name: "removing", coordinator: CoreFixture.topology.coordinator, workers: [.init(name: "edge"), .init(name: "data", count: 2)],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "edge"), .init(name: "loader", type: "DataLoader", worker: "edge"),
                       .init(name: "poller", type: "PollingService", worker: "edge", keyed: true),
                       .init(name: "counter", type: "Counter", worker: "data", keyed: true, onEnd: .remove),
                       .init(name: "sink", type: "Sink", worker: "data")],
            io: CoreFixture.topology.io, heartbeat: CoreFixture.topology.heartbeat, queues: CoreFixture.topology.queues)
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        let keys: [String] = (0..<100).map { "k\($0)" }.filter { topology.placement(ofMachine: "counter", key: $0) == "data-2" }
        let key = try #require(keys.first)
        _ = try fixture.sendEvent("c", to: "counter/\(key)", correlation: 1)
        #expect(counterInstances(fixture) == ["counter/\(key)"])
        let ended = WireMessage(Header(.machine), address: "counter/\(key)",
                                payload: Array(#"{"address":"counter/\#(key)","reason":"stopped","state":{},"worker":"data-1"}"#.utf8))
        let actions = fixture.fromWorker("data-1", ended)
        noEffect(actions, besides: "data-1")
        _ = try refusal(in: actions, to: "data-1", kind: .machine, address: "counter/\(key)")
        #expect(counterInstances(fixture) == ["counter/\(key)"], "still listed")
    }

    // MARK: - io calls

    @Test func anIORequestForAMachineTheSenderDoesNotHostStartsNoCall() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let actions = fixture.startCall(5, from: "data-1", address: "loader")
        noEffect(actions, besides: "data-1")
        _ = try refusal(in: actions, to: "data-1", kind: .ioRequest, address: "loader")
        #expect(fixture.core.calls.isEmpty)
        #expect(try fixture.startedCall(5).target.hasPrefix("data-"), "edge's own machine may")
    }

    @Test func onlyTheWorkerRunningACallMayFinishIt() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(5)
        for forger in ["edge", call.target == "data-1" ? "data-2" : "data-1"] {
            let actions = fixture.fromWorker(forger, ioResult(json: #"{"forged":true}"#, id: call.id))
            noEffect(actions, besides: forger)
            let error = try refusal(in: actions, to: forger, kind: .ioResult, address: "loader")
            #expect(error.message.contains("runs on worker \(call.target)"), "\(error.message)")
            #expect(fixture.core.calls[call.id] != nil, "still waiting for \(call.target)")
        }
        let real = fixture.fromWorker(call.target, ioResult(json: "1", id: call.id))
        #expect(real.compactMap(\.sentToWorker).map(\.worker) == ["edge"])
        // A result for a call no longer known answers nothing and is not refused: it may be late.
        #expect(fixture.fromWorker(call.target, ioResult(json: "1", id: call.id)) == [])
        #expect(fixture.fromWorker("edge", ioResult(json: "1", id: 999)) == [])
    }

    @Test func onlyTheWorkerRunningACancelledCallMayAnswerItsCancel() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.cancelledCall(7)
        let forged = fixture.fromWorker("edge", try cancelAnswer(call.id, IOCancelAnswer(task: .ended)))
        noEffect(forged, besides: "edge")
        _ = try refusal(in: forged, to: "edge", kind: .ioCancelled, address: "loader")
        #expect(fixture.core.cancelling[call.id] != nil, "the place stays taken until the target answers")
        #expect(try effectEvents(in: fixture.fromWorker(call.target, try cancelAnswer(call.id, IOCancelAnswer(task: .ended)))).count == 1)
    }

    @Test func anIOCancelFindsOnlyTheSendersOwnCalls() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let call = try fixture.startedCall(7)
        // data-1 and data-2 name edge's origin id: nothing of edge's is cancelled.
        for other in ["data-1", "data-2"] {
            #expect(fixture.fromWorker(other, WireMessage(Header(.ioCancel, correlation: 7), address: "loader")) == [])
        }
        #expect(fixture.core.calls[call.id] != nil && fixture.core.cancelling.isEmpty)
    }

    // MARK: - Instances, replies, batches

    @Test func anInstancesReportListsOnlyWhatIsPlacedOnTheSenderAndIsRefusedForTheRest() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let keys = (0..<40).map { "k\($0)" }
        let onData2 = keys.filter { CoreFixture.topology.placement(ofMachine: "counter", key: $0) == "data-2" }.map { "counter/\($0)" }
        let report = InstancesReport(instances: onData2 + ["poller/eu-1"])
        let actions = fixture.fromWorker("data-1", WireMessage(Header(.instances), address: "data-1", payload: try WireJSON.encode(report)))
        let error = try refusal(in: actions, to: "data-1", kind: .instances, address: "data-1")
        #expect(error.message.contains("\(onData2.count + 1) keyed instance(s)"), "\(error.message)")
        let listed = fixture.listing().machines.flatMap(\.instances)
        #expect(listed.isEmpty, "nothing listed")
    }

    @Test func aReplyFromAnotherWorkerThanTheOneAskedIsDroppedAndTheRequestStillWaits() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let sent = try fixture.sendEvent("c", to: "auth", correlation: 3)
        #expect(fixture.fromWorker("data-1", WireMessage(Header(.state, correlation: sent.id), address: "auth", payload: Array("{}".utf8))) == [])
        #expect(fixture.core.pending.count == 1)
        #expect(fixture.fromWorker("edge", WireMessage(Header(.state, correlation: sent.id), address: "auth")).compactMap(\.sentToClient).count == 1)
    }

    @Test func aBatchIsCheckedEnvelopeByEnvelope() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var builder = BatchBuilder()
        builder.append(Self.stateChanged("auth", worker: "data-1"))
        builder.append(Self.stateChanged("sink", worker: "data-1"))
        let batch = WireMessage(Header(.batch, correlation: UInt64(builder.count)), payload: builder.payload)
        let actions = fixture.fromWorker("data-1", batch)
        #expect(actions.compactMap(\.published).map(\.topic) == ["state:sink"])
        _ = try refusal(in: actions, to: "data-1", kind: .stateChanged, address: "auth")
    }

    // MARK: - The log

    @Test func refusalsAreLoggedOncePerWorkerAndKindThenCounted() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let secret = #"{"password":"hunter2"}"#
        var logged: [String] = []
        for offset in 0..<4 {
            logged += warnings(in: fixture.fromWorker("data-1", Self.stateChanged("auth", worker: "data-1", secret), after: .milliseconds(offset)))
        }
        logged += warnings(in: fixture.fromWorker("data-1", WireMessage(Header(.output), address: "auth", payload: Array(secret.utf8))))
        logged += warnings(in: fixture.fromWorker("data-2", Self.stateChanged("auth", worker: "data-2", secret)))
        #expect(logged.count == 3, "one line per worker and kind: \(logged)")
        let secretFree = logged.allSatisfy { !$0.contains("hunter2") }
        #expect(secretFree, "never a payload")
        let first = logged.first ?? ""
        #expect(first.contains("state-changed") && first.contains("data-1") && first.contains(#""auth""#), "\(logged)")

        // The window ends: the three refusals not logged are counted in one line, then forgotten.
        // (The workers, silent meanwhile, are lost too: their lines are not the refusals'.)
        let counted = warnings(in: fixture.core.tick(now: fixture.t0 + .seconds(6))).filter { $0.hasPrefix("refused") }
        #expect(counted.count == 1 && counted[0].contains("refused 3 more state-changed message(s) from worker data-1"), "\(counted)")
        let later = warnings(in: fixture.core.tick(now: fixture.t0 + .seconds(12))).filter { $0.hasPrefix("refused") }
        #expect(later.isEmpty)
        #expect(fixture.core.refusals.isEmpty)
    }
}
