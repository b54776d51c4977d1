import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// `dead-letters` through the coordinator's core: addressed to a worker, forwarded to it under
/// a new id, its reply passed back; admins only.
@Suite("Coordinator core dead letters", .timeLimit(.minutes(2)))
struct CoordinatorCoreDeadLetterTests {
    static func request(to worker: String, _ action: DeadLetterRequest.Action = .list, id: Int64? = nil) -> WireMessage {
        WireMessage(Header(.deadLetters, correlation: 7), address: worker, payload: try! WireJSON.encode(DeadLetterRequest(action, id: id)))
    }

    @Test func aRequestGoesToTheNamedWorkerAndItsListComesBack() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let forwarded = try #require(fixture.fromClient("c", Self.request(to: "data-2", .drop, id: 3)).compactMap(\.sentToWorker).first)
        #expect(forwarded.worker == "data-2")
        #expect(forwarded.message.header.kind == .deadLetters)
        #expect(try WireJSON.decode(DeadLetterRequest.self, from: forwarded.message.payload) == DeadLetterRequest(.drop, id: 3))
        let list = try WireJSON.encode(DeadLetterList(worker: "data-2", deadLetters: []))
        let reply = WireMessage(Header(.deadLetterList, correlation: forwarded.message.header.correlation), address: "data-2", payload: list)
        let back = try #require(fixture.fromWorker("data-2", reply).compactMap(\.sentToClient).first)
        #expect(back.client == "c")
        #expect(back.message.header.kind == .deadLetterList)
        #expect(back.message.header.correlation == 7)
    }

    @Test func anUnknownOrUnregisteredWorkerIsRefused() throws {
        var fixture = CoreFixture()
        fixture.register("edge")
        let unknown = try #require(fixture.fromClient("c", Self.request(to: "counter")).compactMap(\.sentToClient).first)
        let error = try WireJSON.decode(WireError.self, from: unknown.message.payload)
        #expect(error.code == .unknownMachine)
        #expect(error.message.contains("edge, data-1, data-2"), "\(error.message)")
        let down = try #require(fixture.fromClient("c", Self.request(to: "data-1")).compactMap(\.sentToClient).first)
        #expect(try WireJSON.decode(WireError.self, from: down.message.payload).code == .unavailable)
    }

    @Test func onlyAnAdminOverEveryMachineMayAsk() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        func refusal(_ principal: Gatekeeper.Principal) throws -> WireError? {
            let decision = MessageView.with(Self.request(to: "edge")) { fixture.core.decide(client: Array("c".utf8), $0, as: principal) }
            guard case .act(let actions) = decision, let reply = actions.first?.sentToClient else { return nil }
            return try WireJSON.decode(WireError.self, from: reply.message.payload)
        }
        #expect(try refusal(.client([.init(key: "a.key", roles: [.admin])])) == nil)
        let reader = try #require(try refusal(.client([.init(key: "r.key", roles: [.read, .send])])))
        #expect(reader.code == .forbidden)
        #expect(reader.message.contains("admin role over every machine"), "\(reader.message)")
        #expect(try refusal(.client([.init(key: "p.key", roles: [.admin], machines: ["counter*"])]))?.code == .forbidden)
    }
}
