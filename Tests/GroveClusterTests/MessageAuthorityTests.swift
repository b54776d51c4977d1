import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// The table of message kinds (issue 34): the roles, the refusals and docs/PROTOCOL.md come from
/// it, so none of them can say something else than the coordinator checks.
@Suite("The table of message kinds", .timeLimit(.minutes(2)))
struct MessageAuthorityTests {
    static let page: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)) ?? ""
    }()

    @Test("docs/PROTOCOL.md shows the table the code holds")
    func protocolPageShowsTheTable() throws {
        try #require(!Self.page.isEmpty, "docs/PROTOCOL.md not found beside the tests")
        let table = MessageAuthority.markdownTable
        #expect(Self.page.contains("\n" + table + "\n"), "docs/PROTOCOL.md, 'Who may send what', should hold this table:\n\(table)")
    }

    @Test("the table has a row for every kind, in the order of their numbers")
    func everyKindHasARow() {
        let rows = MessageAuthority.markdownTable.split(separator: "\n").dropFirst(2)
        #expect(rows.count == MessageKind.allCases.count)
        let names = rows.map { $0.split(separator: "|")[1].trimmingCharacters(in: .whitespaces) }
        // Closures are kept out of #expect: Swift 6.3 may run the wrong one (EventWatcher.effects).
        let numbered = MessageKind.allCases.sorted { $0.rawValue < $1.rawValue }.map(\.name)
        #expect(names == numbered)
    }

    @Test("a client request needs the role the table names, and only client kinds need one")
    func rolesComeFromTheTable() {
        for kind in MessageKind.allCases {
            switch kind.authority.client {
            case .role(let role, _)?: #expect(Topology.Role.needed(for: kind) == role, "\(kind)")
            case .anyRole?, .eachEnvelope?, nil: #expect(Topology.Role.needed(for: kind) == nil, "\(kind)")
            }
        }
        // The roles as docs/PROTOCOL.md's Security section names them.
        #expect(Topology.Role.needed(for: .event) == .send && Topology.Role.needed(for: .echo) == .send)
        #expect(Topology.Role.needed(for: .get) == .read && Topology.Role.needed(for: .snapshot) == .read)
        #expect(Topology.Role.needed(for: .restart) == .admin && Topology.Role.needed(for: .deadLetters) == .admin)
        // A locate needs a role, any of them, on the machine addressed.
        #expect(MessageKind.locate.authority.client == .anyRole(.addressedMachine))
    }

    @Test("a grant limited to some machines never covers a request over every machine")
    func everyMachineScopeIgnoresTheAddress() {
        let limited = Gatekeeper.Principal.client([Topology.ClientGrant(key: "k", roles: [.read, .admin], machines: ["counter*"])])
        // Even when a request carries an address the grant covers.
        #expect(ClientAccess.forbidden(.list, address: "counter/a", for: limited)?.code == .forbidden)
        #expect(ClientAccess.forbidden(.deadLetters, address: "counter/a", for: limited)?.code == .forbidden)
        #expect(ClientAccess.forbidden(.get, address: "counter/a", for: limited) == nil)
    }

    @Test("a client is refused every kind the table keeps from clients, saying why")
    func clientsAreRefusedWhatTheTableRefusesThem() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for kind in MessageKind.allCases where kind != .batch {
            let actions = fixture.fromClient("c", WireMessage(Header(kind, correlation: 5), address: "counter/x",
                                                               payload: Array(#"{"prefixes":[],"action":"list"}"#.utf8)))
            let refusal = actions.compactMap(\.sentToClient).compactMap { try? payload(WireError.self, of: $0.message) }
                .first { $0.code == .unknownKind }
            if let why = kind.refusalForClients {
                #expect(refusal?.message == why, "\(kind): \(actions)")
                #expect(why.contains(kind.name))
            } else {
                #expect(refusal == nil, "\(kind) is refused as a kind, though the table lets clients send it: \(actions)")
            }
        }
    }

    @Test("a worker is refused every kind the table keeps from workers, saying why")
    func workersAreRefusedWhatTheTableRefusesThem() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for kind in MessageKind.allCases where kind != .register && kind != .batch {
            let actions = fixture.fromWorker("edge", WireMessage(Header(kind, correlation: 5), address: "auth"))
            let refusal = actions.compactMap(\.sentToWorker).filter { $0.worker == "edge" }
                .compactMap { try? payload(WireError.self, of: $0.message) }.first { $0.code == .unknownKind }
            if let why = kind.refusalForWorkers {
                #expect(refusal?.message == why, "\(kind): \(actions)")
                let inert = actions.allSatisfy { $0.published == nil && $0.sentToClient == nil }
                #expect(inert, "\(kind) had an effect: \(actions)")
            } else {
                #expect(refusal == nil, "\(kind) is refused as a kind, though the table lets workers send it: \(actions)")
            }
        }
    }

    @Test("every kind a worker sends has a check, and what only the coordinator sends has none")
    func theChecksAreTheTables() {
        for kind in MessageKind.allCases {
            let authority = kind.authority
            switch kind {
            case .stateChanged, .output, .machine, .ioRequest, .effect: #expect(authority.worker == .hostsAddress, "\(kind)")
            case .ioResult, .ioCancelled: #expect(authority.worker == .runsCall, "\(kind)")
            case .ioCancel: #expect(authority.worker == .startedCall)
            case .instances: #expect(authority.worker == .placedOnSender)
            case .state, .accepted, .error, .deadLetterList: #expect(authority.worker == .answersItsRequest, "\(kind)")
            case .register: #expect(authority.worker == .groupKey)
            case .heartbeat: #expect(authority.worker == .registered)
            // The release handler takes from a worker only what it asked that worker to release.
            case .release: #expect(authority.worker == .registered && authority.client == nil)
            case .batch: #expect(authority.worker == .eachEnvelope && authority.client == .eachEnvelope)
            case .worker, .welcome, .observe, .listing, .states, .poisonList, .location, .quarantine, .returned, .access, .placement:
                #expect(authority.worker == nil && authority.client == nil, "only the coordinator sends \(kind)")
            case .event, .get, .cancel, .stop, .restart, .list, .echo, .deadLetters, .snapshot, .poison, .locate:
                #expect(authority.worker == nil && authority.client != nil, "\(kind)")
            }
        }
    }
}
