import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// `limits`: defaults, values, a clear error with its JSON path for each bad one; and names,
/// route addresses and grant patterns in NFC, the form the coordinator accepts addresses in.
@Suite("Topology limits", .timeLimit(.minutes(2)))
struct TopologyLimitsTests {
    static func document(_ extra: String = "", machine: String = "counter", pattern: String = "counter*", to: String = "counter/7") -> String {
        """
        {
          "name": "t",
          "coordinator": { "clients": "ipc://@t/clients", "workers": "ipc://@t/workers", "events": "ipc://@t/events" },
          "workers": [ { "name": "edge" } ],
          "machines": [ { "name": "auth", "type": "AuthFlow", "worker": "edge" },
                        { "name": \(JSONValue.string(machine)), "type": "Counter", "worker": "edge", "keyed": true } ],
          "routes": [ { "from": "auth", "to": \(JSONValue.string(to)) } ],
          "security": { "coordinatorKey": "c.key_secret", "clients": [ { "key": "a.key", "roles": ["send"], "machines": [\(JSONValue.string(pattern))] } ] }\(extra.isEmpty ? "" : ",\n  " + extra)
        }
        """
    }

    static func issues(_ json: String) -> [String] {
        do {
            _ = try Topology(json: Data(json.utf8), source: "t.json")
            Issue.record("expected the topology to be refused")
            return []
        } catch {
            return error.issues.map { "\($0.code) \($0.path): \($0.message)" }
        }
    }

    @Test func withoutTheSectionEveryLimitHasItsDefault() throws {
        let topology = try Topology(json: Data(Self.document().utf8), source: "t.json")
        #expect(topology.limits == Topology.Limits())
        let limits = topology.limits
        #expect(limits.addressBytes == 1024 && limits.payloadBytes == 1 << 20 && limits.messageBytes == 16 << 20)
        #expect(limits.instancesPerMachine == 100_000 && limits.watcherSubscriptions == 128 && limits.subscriptions == 1024)
        #expect(limits.owedBytesPerClient == 1 << 20 && limits.owedBytes == 32 << 20 && limits.watchedStateBytes == 64 << 20)
        #expect(limits.publicationBytes == 64 << 10)
        #expect(limits.subscriptionBytes == 1032 && limits.subscriptionFrameBytes == 1042)
        #expect(limits.batchEnvelopes == 10_000)
        #expect(limits.summary == "limits: addressBytes 1024, payloadBytes 1048576, messageBytes 16777216, batchEnvelopes 10000; instancesPerMachine 100000; "
                + "watcherSubscriptions 128, subscriptions 1024; owedBytesPerClient 1048576, owedBytes 33554432; watchedStateBytes 67108864; "
                + "publicationBytes 65536")
    }

    @Test func theSectionSetsEachLimit() throws {
        let json = Self.document(#"""
            "limits": { "addressBytes": 200, "payloadBytes": 4096, "messageBytes": 65536, "batchEnvelopes": 250, "instancesPerMachine": 1000000,
                        "watcherSubscriptions": 8, "subscriptions": 64, "owedBytesPerClient": 4096, "owedBytes": 65536,
                        "watchedStateBytes": 1048576, "publicationBytes": 2048 }
            """#)
        let topology = try Topology(json: Data(json.utf8), source: "t.json")
        #expect(topology.limits == Topology.Limits(addressBytes: 200, payloadBytes: 4096, messageBytes: 65536, batchEnvelopes: 250,
                                                   instancesPerMachine: 1_000_000,
                                                   watcherSubscriptions: 8, subscriptions: 64, owedBytesPerClient: 4096, owedBytes: 65536,
                                                   watchedStateBytes: 1 << 20, publicationBytes: 2048))
    }

    @Test func badValuesAreReportedWithTheirPaths() {
        let found = Self.issues(Self.document(#""limits": { "addressBytes": 2000, "payloadBytes": "big", "instancesPerMachine": 0, "subscriptionz": 3 }"#))
        #expect(found.map { String($0.prefix { $0 != ":" }) } == [
            "unknown-key $.limits.subscriptionz",
            "wrong-type $.limits.payloadBytes",
            "invalid-value $.limits.instancesPerMachine",
        ], "\(found)")
        let tooLong = Self.issues(Self.document(#""limits": { "addressBytes": 2000 }"#))
        #expect(tooLong.count == 1 && tooLong[0].hasPrefix("invalid-value $.limits.addressBytes") && tooLong[0].contains("at most 1024"))
        let small = Self.issues(Self.document(#""limits": { "payloadBytes": 4096, "messageBytes": 4096 }"#))
        #expect(small.count == 1 && small[0].hasPrefix("invalid-value $.limits.messageBytes") && small[0].contains("5135"), "\(small)")
        let crossed = Self.issues(Self.document(#""limits": { "owedBytesPerClient": 10, "owedBytes": 5, "watcherSubscriptions": 9, "subscriptions": 8 }"#))
        #expect(crossed.map { String($0.prefix { $0 != ":" }) } == ["invalid-value $.limits.owedBytesPerClient",
                                                                     "invalid-value $.limits.watcherSubscriptions"], "\(crossed)")
        #expect(Self.issues(Self.document(#""limits": 3"#)).first?.hasPrefix("wrong-type $.limits") == true)
    }

    /// `batchEnvelopes` from 1 to 100,000: past that one batch holds a loop for a good part of a
    /// second; each bad value is reported at its path with what to write.
    @Test func batchEnvelopesIsBoundedAtItsPath() throws {
        let zero = Self.issues(Self.document(#""limits": { "batchEnvelopes": 0 }"#))
        #expect(zero.count == 1 && zero[0].hasPrefix("invalid-value $.limits.batchEnvelopes") && zero[0].contains("at least 1"), "\(zero)")
        let over = Self.issues(Self.document(#""limits": { "batchEnvelopes": 100001 }"#))
        #expect(over.count == 1 && over[0].hasPrefix("invalid-value $.limits.batchEnvelopes") && over[0].contains("at most 100000")
                && over[0].contains("\"batchEnvelopes\": 10000"), "\(over)")
        let text = Self.issues(Self.document(#""limits": { "batchEnvelopes": "many" }"#))
        #expect(text.count == 1 && text[0].hasPrefix("wrong-type $.limits.batchEnvelopes"), "\(text)")
        for bound in [1, 100_000] {
            let topology = try Topology(json: Data(Self.document(#""limits": { "batchEnvelopes": \#(bound) }"#).utf8), source: "t.json")
            #expect(topology.limits.batchEnvelopes == bound)
        }
    }

    /// The coordinator refuses addresses not in NFC; names, route addresses and grant patterns
    /// that are not could never match one, so the topology says so where they are written.
    @Test func namesAddressesAndPatternsMustBeInNFC() {
        let decomposed = "compte\u{301}"  // "compté" decomposed
        #expect(Self.issues(Self.document(machine: decomposed, to: "\(decomposed)/7"))
            .contains { $0.hasPrefix("invalid-value $.machines[1].name") && $0.contains("NFC") && $0.contains("\"compté\"") })
        let pattern = Self.issues(Self.document(pattern: "counter/e\u{301}*"))
        #expect(pattern.count == 1 && pattern[0].hasPrefix("invalid-value $.security.clients[0].machines[0]"), "\(pattern)")
        let route = Self.issues(Self.document(to: "counter/e\u{301}"))
        #expect(route.count == 1 && route[0].hasPrefix("invalid-value $.routes[0].to"), "\(route)")
        #expect((try? Topology(json: Data(Self.document(pattern: "counter/é*", to: "counter/é").utf8), source: "t.json")) != nil)
    }
}
