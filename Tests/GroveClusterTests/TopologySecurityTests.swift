import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// A topology over `scheme` endpoints with `security` (a JSON member, or nothing) and the
/// worker group members `group`.
private func topology(tcp: Bool, security: String? = nil, group: String = "") -> String {
    let endpoints = tcp
        ? #"{ "clients": "tcp://127.0.0.1:5555", "workers": "tcp://127.0.0.1:5556", "events": "ipc:///run/t/events" }"#
        : #"{ "clients": "ipc:///run/t/clients", "workers": "ipc:///run/t/workers", "events": "ipc:///run/t/events" }"#
    return """
        {
          "name": "t", "coordinator": \(endpoints),
          "workers": [ { "name": "edge"\(group) } ], "machines": []\(security.map { ", \"security\": \($0)" } ?? "")
        }
        """
}

private func problems(_ json: String) -> [String] {
    do {
        _ = try Topology(json: Data(json.utf8), source: "t.json")
        return []
    } catch {
        return error.issues.map { "\($0.code) \($0.path)" }
    }
}

@Suite("Topology security", .timeLimit(.minutes(2)))
struct TopologySecurityTests {
    @Test func ipcNeedsNoKeys() throws {
        let loaded = try Topology(json: Data(topology(tcp: false).utf8), source: "t.json")
        #expect(loaded.security == Topology.Security())
        #expect(!loaded.security.usesCurve)
    }

    @Test func tcpWithoutKeysIsRefusedUnlessInsecureIsSaid() throws {
        #expect(problems(topology(tcp: true)) == ["insecure $.security"])
        let insecure = try Topology(json: Data(topology(tcp: true, security: #"{ "insecure": true }"#).utf8), source: "t.json")
        #expect(insecure.security.insecure)
        #expect(insecure.tcpEndpoints == ["tcp://127.0.0.1:5555", "tcp://127.0.0.1:5556"])
    }

    @Test func everyKeyIsRead() throws {
        let json = topology(tcp: true, security: """
            { "coordinatorKey": "keys/coordinator.key_secret",
              "clients": [ { "key": "keys/ops.key", "roles": ["admin", "read"] },
                           { "key": "keys/board.key", "roles": ["read"], "machines": ["auth", "poller*"] } ] }
            """, group: #", "external": true, "key": "keys/edge.key""#)
        let loaded = try Topology(json: Data(json.utf8), source: "t.json")
        #expect(loaded.security == Topology.Security(coordinatorKey: "keys/coordinator.key_secret", clients: [
            .init(key: "keys/ops.key", roles: [.admin, .read]),
            .init(key: "keys/board.key", roles: [.read], machines: ["auth", "poller*"]),
        ]))
        #expect(loaded.workers.first?.key == "keys/edge.key")
    }

    @Test func mistakesAreNamedWithTheirPaths() {
        let json = topology(tcp: true, security: """
            { "coordinatorKey": "k.key_secret", "insecure": true, "client": [],
              "clients": [ { "key": "a.key", "roles": ["raed"] }, { "key": "b.key" }, { "key": "c.key", "roles": [] } ] }
            """, group: #", "external": true"#)
        #expect(problems(json) == [
            "unknown-key $.security.client",
            "invalid-value $.security.clients[0].roles[0]",
            "missing-key $.security.clients[1].roles",
            "invalid-value $.security.clients[2].roles",
            "invalid-value $.security.insecure",
            "missing-key $.workers[0].key",
        ])
    }

    @Test func insecureAndKeysContradict() {
        let json = topology(tcp: true, security: #"{ "coordinatorKey": "k.key_secret", "insecure": true }"#)
        #expect(problems(json) == ["invalid-value $.security.insecure"])
    }

    @Test func clientKeysNeedTheCoordinatorKey() {
        let json = topology(tcp: false, security: #"{ "clients": [ { "key": "a.key", "roles": ["read"] } ] }"#)
        #expect(problems(json) == ["invalid-value $.security.clients"])
    }

    @Test(arguments: [
        ("auth", ["auth"], true), ("auth/x", ["auth"], false), ("poller/eu", ["poller*"], true),
        ("pollers", ["poller/*"], false), ("a/b/c", ["*c"], true), ("auth", [], true), ("x", ["a*", "x"], true),
    ])
    func patternsCoverAddresses(address: String, machines: [String], covered: Bool) {
        #expect(Topology.ClientGrant(key: "k", roles: [.read], machines: machines).covers(address: address) == covered)
    }
}
