import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// Roles and worker keys as the core applies them: a client's grants against each request, a
/// registration's key against the group of the name it claims.
@Suite("Coordinator core access", .timeLimit(.minutes(2)))
struct CoordinatorCoreAccessTests {
    static let reader = Gatekeeper.Principal.client([.init(key: "r.key", roles: [.read])])
    static let sender = Gatekeeper.Principal.client([.init(key: "s.key", roles: [.read, .send], machines: ["counter*"])])
    static let admin = Gatekeeper.Principal.client([.init(key: "a.key", roles: [.admin])])

    func request(_ kind: MessageKind, _ address: String, payload: String = #"{"go":{}}"#) -> WireMessage {
        WireMessage(Header(kind, correlation: 9), address: address, payload: Array(payload.utf8))
    }

    /// What the core decides for `message` from client `c` holding `principal`: the refusal,
    /// or `nil` when it went on to a worker or was answered.
    func refusal(_ message: WireMessage, as principal: Gatekeeper.Principal?, in fixture: inout CoreFixture) throws -> WireError? {
        let decision = MessageView.with(message) { fixture.core.decide(client: Array("c".utf8), $0, as: principal) }
        guard case .act(let actions) = decision, let reply = actions.first?.sentToClient, reply.message.header.kind == .error else { return nil }
        return try payload(WireError.self, of: reply.message)
    }

    @Test func eachRequestNeedsItsRole() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // read: get and list, not events, stop or cancel.
        #expect(try refusal(request(.get, "auth"), as: Self.reader, in: &fixture) == nil)
        #expect(try refusal(WireMessage(Header(.list, correlation: 9)), as: Self.reader, in: &fixture) == nil)
        let event = try #require(try refusal(request(.event, "auth"), as: Self.reader, in: &fixture))
        #expect(event.code == .forbidden)
        #expect(event.message.contains("send role on auth"), "\(event.message)")
        #expect(event.address == "auth")
        #expect(try refusal(request(.stop, "auth"), as: Self.reader, in: &fixture)?.code == .forbidden)
        #expect(try refusal(request(.cancel, "auth", payload: #""x""#), as: Self.reader, in: &fixture)?.code == .forbidden)
        // admin: stop and cancel only.
        #expect(try refusal(request(.stop, "auth"), as: Self.admin, in: &fixture) == nil)
        #expect(try refusal(request(.event, "auth"), as: Self.admin, in: &fixture)?.message.contains("send role") == true)
    }

    @Test func patternsLimitWhereRolesApply() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        #expect(try refusal(request(.event, "counter/7"), as: Self.sender, in: &fixture) == nil)
        #expect(try refusal(request(.echo, "counter/7"), as: Self.sender, in: &fixture) == nil)
        let elsewhere = try #require(try refusal(request(.event, "auth"), as: Self.sender, in: &fixture))
        #expect(elsewhere.message.contains("read+send on counter*"), "\(elsewhere.message)")
        // A list names every machine: it takes read over all of them.
        #expect(try refusal(WireMessage(Header(.list, correlation: 9)), as: Self.sender, in: &fixture)?.code == .forbidden)
    }

    @Test func aSnapshotTakesReadOverEveryMachineAsWatchingDoes() throws {
        var fixture = CoreFixture()
        let snapshot = WireMessage(Header(.snapshot, correlation: 9), payload: Array(#"{"prefixes":["state:counter/"]}"#.utf8))
        #expect(try refusal(snapshot, as: Self.reader, in: &fixture) == nil)
        let limited = try #require(try refusal(snapshot, as: Self.sender, in: &fixture))
        #expect(limited.code == .forbidden)
        #expect(limited.message.contains("read role over every machine"), "\(limited.message)")
        #expect(try refusal(snapshot, as: Self.admin, in: &fixture)?.code == .forbidden)
    }

    @Test func unknownKeysAndWorkerKeysAreRefusedTrustedPassesAll() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        #expect(try refusal(request(.get, "auth"), as: nil, in: &fixture)?.code == .forbidden)
        #expect(try refusal(request(.get, "auth"), as: .worker(group: "edge"), in: &fixture)?.code == .forbidden)
        #expect(try refusal(request(.stop, "auth"), as: .trusted, in: &fixture) == nil)
    }

    @Test func aRegistrationWithAnotherGroupsKeyIsRefusedAndKeepsTheRegisteredWorker() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let payload = try WireJSON.encode(CoreFixture.registration("edge"))
        let message = WireMessage(Header(.register, correlation: 3), address: "edge", payload: payload)
        let actions = fixture.core.fromWorker(Array("edge".utf8), message.frames[...], now: fixture.t0,
                                              principal: .worker(group: "data"), peer: "KEY 10.0.0.9")
        let warning = try #require(actions.compactMap { if case .warn(let text) = $0 { text } else { nil } }.first)
        #expect(warning.contains("group 'data'") && warning.contains("10.0.0.9"), "\(warning)")
        let reply = try #require(actions.compactMap(\.sentToWorker).first)
        let refusal = try GroveWire.WireJSON.decode(WireError.self, from: reply.message.payload)
        #expect(refusal.code == WireError.Code.forbidden)
        // Nothing was lost: the registered edge still serves, no worker event was published.
        #expect(try workerEvents(in: actions).isEmpty)
        #expect(fixture.listing().workers.first { $0.name == "edge" }?.registered == true)
        // The right group's key registers (again) as before.
        let accepted = fixture.core.fromWorker(Array("edge".utf8), message.frames[...], now: fixture.t0, principal: .worker(group: "edge"))
        #expect(accepted.contains { if case .toWorker(_, let m) = $0 { m.header.kind == .welcome } else { false } })
    }

    @Test(arguments: [Gatekeeper.Principal.client([]), nil])
    func aRegistrationWithoutAWorkerKeyIsRefused(principal: Gatekeeper.Principal?) throws {
        var fixture = CoreFixture()
        let payload = try WireJSON.encode(CoreFixture.registration("edge"))
        let message = WireMessage(Header(.register, correlation: 3), address: "edge", payload: payload)
        let actions = fixture.core.fromWorker(Array("edge".utf8), message.frames[...], now: fixture.t0, principal: principal)
        #expect(actions.contains { if case .warn = $0 { true } else { false } })
        #expect(fixture.listing().workers.first { $0.name == "edge" }?.registered == false)
    }
}
