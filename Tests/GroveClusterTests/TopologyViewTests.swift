import Foundation
@testable import GroveCluster
import Testing

/// The topology's `view` key (docs/ARCHITECTURE.md, "Live view"): off unless set, loopback only.
@Suite(.timeLimit(.minutes(2)))
struct TopologyViewTests {
    static func document(_ view: String?) -> String {
        """
        {
          "name": "t",
          "coordinator": { "clients": "ipc:///run/t/clients", "workers": "ipc:///run/t/workers", "events": "ipc:///run/t/events" },
          "workers": [ { "name": "edge" } ],
          "machines": [ { "name": "auth", "type": "AuthFlow", "worker": "edge" } ]\(view.map { ",\n  \"view\": \($0)" } ?? "")
        }
        """
    }

    static func issues(_ json: String) -> [String] {
        do {
            _ = try Topology(json: Data(json.utf8), source: "t.json")
            Issue.record("expected the topology to be refused")
            return []
        } catch {
            return error.issues.map { "\($0.code) \($0.path)" }
        }
    }

    @Test func theViewIsOffUnlessListenIsSet() throws {
        #expect(try Topology(json: Data(Self.document(nil).utf8), source: "t.json").view.listen == nil)
        #expect(try Topology(json: Data(Self.document("{}").utf8), source: "t.json").view.hostAndPort == nil)
        let on = try Topology(json: Data(Self.document(#"{ "listen": "127.0.0.1:8420" }"#).utf8), source: "t.json")
        #expect(on.view.hostAndPort?.host == "127.0.0.1")
        #expect(on.view.hostAndPort?.port == 8420)
    }

    @Test func aViewOffLoopbackOrMalformedIsRefusedWhereItStands() throws {
        #expect(Self.issues(Self.document(#"{ "listen": "0.0.0.0:8420" }"#)) == ["invalid-value $.view.listen"])
        #expect(Self.issues(Self.document(#"{ "listen": "127.0.0.1" }"#)) == ["invalid-value $.view.listen"])
        #expect(Self.issues(Self.document(#"{ "listen": "127.0.0.1:70000" }"#)) == ["invalid-value $.view.listen"])
        #expect(Self.issues(Self.document(#"{ "listen": 8420 }"#)).map { $0.hasSuffix("$.view.listen") } == [true])
        #expect(Self.issues(Self.document(#"{ "lsten": "127.0.0.1:8420" }"#)) == ["unknown-key $.view.lsten"])
        #expect(Self.issues(Self.document(#""127.0.0.1:8420""#)).map { $0.hasSuffix("$.view") } == [true])
    }
}
