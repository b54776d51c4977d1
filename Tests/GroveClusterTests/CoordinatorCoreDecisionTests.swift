@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// The core's one road: `decide(client:)` and `decide(worker:)` give the same answer for a
/// message whether it came on its own or inside a batch, and every kind has its rule.
@Suite("CoordinatorCore: decisions", .timeLimit(.minutes(2)))
struct CoordinatorCoreDecisionTests {
    static let client: [UInt8] = Array("client-A".utf8)

    /// Calls `body` with the same message three ways: parsed, as a lone message's frames, and as
    /// a batch's envelope (index 0, 1, 2).
    static func eachView(of message: WireMessage, _ body: (Int, MessageView) throws -> Void) throws {
        try MessageView.with(message) { view in Result { try body(0, view) } }.get()
        let frames = message.frames
        try MessageView.with(message.header, address: frames[1], payload: frames[2]) { view in Result { try body(1, view) } }.get()
        var batch: [UInt8] = []
        Batch.append(message, to: &batch)
        let envelope = try #require(try Batch.envelopes(in: batch).first)
        try batch.withUnsafeBytes { try body(2, MessageView(envelope, in: $0)) }
    }

    @Test func aRequestIsForwardedAlikeLoneOrBatched() throws {
        try Self.eachView(of: WireMessage(Header(.event, correlation: 7), address: "counter/x", payload: Array("1".utf8))) { _, view in
            var fixture = CoreFixture()
            fixture.registerAll()
            guard case .forward(let worker, let id) = fixture.core.decide(client: Self.client, view) else {
                Issue.record("expected a forward")
                return
            }
            #expect(fixture.core.workerNames[worker] == fixture.core.topology.placement(ofMachine: "counter", key: "x"))
            #expect(fixture.core.pending.count == 1)
            // Forwarded bytes carry the new id, the rest as they came.
            var batch = BatchBuilder()
            view.append(to: &batch, correlation: id)
            let forwarded = try #require(try Batch.unpack(batch.payload).first)
            #expect(forwarded == WireMessage(Header(.event, correlation: id), address: "counter/x", payload: Array("1".utf8)))
        }
    }

    @Test func aRefusalIsTheSameLoneOrBatched() throws {
        var seen: [[CoordinatorAction]] = []
        try Self.eachView(of: WireMessage(Header(.get, correlation: 9), address: "ghost")) { _, view in
            var fixture = CoreFixture()
            fixture.registerAll()
            guard case .act(let actions) = fixture.core.decide(client: Self.client, view) else {
                Issue.record("expected a refusal")
                return
            }
            seen.append(actions)
        }
        let actions = try #require(seen.first)
        #expect(seen.count == 3)
        #expect(seen.allSatisfy { $0 == actions }, "three roads gave different answers: \(seen)")
        let reply = try #require(actions.compactMap(\.sentToClient).first)
        #expect(reply.message.header.correlation == 9)
        #expect(try payload(WireError.self, of: reply.message).code == .unknownMachine)
    }

    @Test func everyKindAClientMaySendOrNot() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for kind in MessageKind.allCases {
            let decision = MessageView.with(WireMessage(Header(kind, correlation: 5), address: "counter/x")) {
                fixture.core.decide(client: Self.client, $0)
            }
            switch kind {
            case .event, .get, .cancel, .stop, .restart, .echo:
                guard case .forward = decision else { Issue.record("\(kind) should be forwarded, got \(decision)"); continue }
            case .list:
                guard case .act(let actions) = decision, actions.compactMap(\.sentToClient).first?.message.header.kind == .listing else {
                    Issue.record("list should be answered with a listing, got \(decision)")
                    continue
                }
            case .deadLetters:
                // Addressed to a machine, not a worker: refused as such (CoordinatorCoreDeadLetterTests).
                guard case .act(let actions) = decision, let reply = actions.compactMap(\.sentToClient).first else {
                    Issue.record("dead-letters to a machine should be refused, got \(decision)")
                    continue
                }
                #expect(try payload(WireError.self, of: reply.message).code == .unknownMachine)
            case .snapshot:
                // An empty payload is not a snapshot request: refused, saying how to write one.
                guard case .act(let actions) = decision, let reply = actions.compactMap(\.sentToClient).first else {
                    Issue.record("snapshot should be answered, got \(decision)")
                    continue
                }
                #expect(try payload(WireError.self, of: reply.message).code == .malformedJSON)
                #expect(reply.message.header.correlation == 5)
            case .poison:
                // Answered by the coordinator itself; an empty payload is not a poison request.
                guard case .act(let actions) = decision, let reply = actions.compactMap(\.sentToClient).first else {
                    Issue.record("poison should be answered, got \(decision)")
                    continue
                }
                #expect(try payload(WireError.self, of: reply.message).code == .malformedJSON)
            case .locate:
                // Answered by the coordinator itself, for the machine, whatever the key.
                guard case .act(let actions) = decision, let reply = actions.compactMap(\.sentToClient).first else {
                    Issue.record("locate should be answered, got \(decision)")
                    continue
                }
                #expect(reply.message.header.kind == .location && reply.message.header.correlation == 5)
            case .batch, .state, .accepted, .error, .listing, .deadLetterList, .states, .poisonList, .location, .quarantine, .release, .returned, .access, .placement, .register, .welcome, .heartbeat,
                 .observe, .instances,
                 .ioRequest, .ioResult, .ioCancel, .ioCancelled, .stateChanged, .effect, .worker, .output, .machine:
                guard case .act(let actions) = decision, let reply = actions.compactMap(\.sentToClient).first else {
                    Issue.record("\(kind) should be refused, got \(decision)")
                    continue
                }
                let error = try payload(WireError.self, of: reply.message)
                #expect(error.code == .unknownKind, "\(kind)")
                #expect(error.message.contains(kind.name), "\(kind): \(error.message)")
                #expect(reply.message.header.correlation == 5)
            }
        }
    }

    @Test func aReplyGoesBackToItsClientAlikeLoneOrBatched() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        var ids: [UInt64] = []
        for _ in 0..<3 {
            let request = WireMessage(Header(.event, correlation: 40 + UInt64(ids.count)), address: "auth")
            guard case .forward(_, let id) = MessageView.with(request, { fixture.core.decide(client: Self.client, $0) }) else {
                Issue.record("expected a forward")
                return
            }
            ids.append(id)
        }
        let edge = try #require(fixture.core.workerNumbers["edge"])
        // The first reply parsed, the second as a lone message's frames, the third from a batch.
        for (index, id) in ids.enumerated() {
            try Self.eachView(of: WireMessage(Header(.state, correlation: id), address: "auth")) { road, view in
                guard road == index else { return }
                #expect(fixture.core.decide(worker: edge, view) == .reply(client: Self.client, correlation: 40 + UInt64(index)))
            }
        }
        // Answered once: a second reply under the same id finds nobody waiting.
        let again = WireMessage(Header(.state, correlation: ids[0]), address: "auth")
        #expect(MessageView.with(again, { fixture.core.decide(worker: edge, $0) }) == .act([]))
    }

    @Test func onlyTheWorkerARequestWentToMayAnswerIt() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let get = WireMessage(Header(.get, correlation: 1), address: "auth")
        guard case .forward(_, let id) = MessageView.with(get, { fixture.core.decide(client: Self.client, $0) }) else {
            Issue.record("expected a forward")
            return
        }
        let other = try #require(fixture.core.workerNumbers["data-1"])
        let reply = WireMessage(Header(.state, correlation: id), address: "auth")
        #expect(MessageView.with(reply, { fixture.core.decide(worker: other, $0) }) == .act([]))
        #expect(fixture.core.pending.count == 1, "still waiting for edge")
    }

    @Test func everyKindAWorkerMaySendOrNot() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let worker = try #require(fixture.core.workerNumbers["edge"])
        for kind in MessageKind.allCases {
            // A state change or an ending is one JSON object (CoordinatorCoreWorkerInputTests).
            let body = kind == .stateChanged || kind == .machine ? Array("{}".utf8)
                : kind == .effect ? Array(#"{"address":"auth","worker":"edge","effect":"tick","kind":"timer","phase":"started"}"#.utf8) : []
            let decision = MessageView.with(WireMessage(Header(kind, correlation: 77), address: "auth", payload: body)) {
                fixture.core.decide(worker: worker, $0)
            }
            switch kind {
            case .heartbeat, .state, .accepted, .error, .deadLetterList:
                // A heartbeat needs nothing; a reply nobody waits for is dropped.
                #expect(decision == .act([]), "\(kind)")
            case .stateChanged, .machine, .effect:
                guard case .act(let actions) = decision, case .publish? = actions.first else {
                    Issue.record("\(kind) should be published, got \(decision)")
                    continue
                }
            case .output, .ioRequest, .ioResult, .ioCancel, .ioCancelled, .instances, .release:
                // Their rules read the payload (an empty one here); what they do is tested in
                // CoordinatorCoreIOTests and the routes' tests.
                guard case .act = decision else { Issue.record("\(kind) got \(decision)"); continue }
            case .register, .batch, .worker, .event, .get, .cancel, .stop, .restart, .list, .echo, .deadLetters, .snapshot, .listing,
                 .welcome, .observe, .states, .poison, .poisonList, .locate, .location, .quarantine, .returned, .access, .placement:
                guard case .act(let actions) = decision, case .toWorker("edge", let reply)? = actions.first else {
                    Issue.record("\(kind) should be refused, got \(decision)")
                    continue
                }
                let error = try payload(WireError.self, of: reply)
                #expect(error.code == .unknownKind, "\(kind)")
                #expect(error.message.contains(kind.name), "\(kind): \(error.message)")
            }
        }
    }
}
