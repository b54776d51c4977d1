import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 34, what the second attacker's review left open, tried with real processes over tcp
    /// with CURVE: a worker key (group `edge`, hosting keyed `Counter`s as `tally`) lies about the
    /// case of a request lost with its machine, writes a key twice in what the coordinator checks,
    /// and writes addresses clients could not. The hostile worker is a pyzmq peer holding edge's
    /// real key (``RoguePeer``, ``CaseClaimer``); the topology is ``WorkerAuthorityTests/topology``.
    @Suite(.timeLimit(.minutes(3)))
    struct WorkerInputTests {
        typealias Authority = WorkerAuthorityTests

        /// The authority topology with a second client key, `alice`, whose requests edge loses:
        /// the crashes count against her key (the losses witness them), so she is suspended and
        /// `ops` is left to look.
        static let topology = {
            var topology = Authority.topology
            topology.security = """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                               { "key": "keys/alice.key", "roles": ["send"] } ] }
                """
            topology.keyPairs.append("alice")
            return topology
        }()

        /// The review's attack: each time a client's `increment` reached it, edge "died" and
        /// reported that request as an `add`. On main the two would have quarantined
        /// `Counter.add` for every address of the type, main's `counter` too.
        @Test func aWorkerCannotClaimAnotherCaseForARequestLostWithIt() async throws {
            try await withCluster(Self.topology) { cluster in
                try await Authority.kill("edge", in: cluster)
                let claimer = try await CaseClaimer.run(cluster, key: "edge", clientKey: "alice", name: "edge", machineTypes: ["Counter"],
                                                        type: "Counter", addresses: ["tally/k-1", "tally/k-2"], event: #""increment""#,
                                                        claimed: "add")
                #expect(claimer.welcomed == 3 && claimer.claims == 2, "\(claimer)")
                #expect(claimer.clientErrors == ["worker-lost", "worker-lost"], "the requests were really lost: \(claimer)")
                try await cluster.waitForLog(#"reported case "add" for the request it lost"#, #"which carried case "increment""#, count: 2)
                // Counter.add is not quarantined: main's counters still add.
                #expect(try await cluster.send("counter/a", #"{"add":{"_0":2}}"#)["count"] == .integer(2))
                #expect(!cluster.log.contains("quarantined Counter.add"), "\(cluster.log.suffix(3000))")
            }
        }

        /// A state change for edge's own tally that gives `address` twice, and one whose state
        /// closes the payload early: a snapshot splices what was published, so the second would
        /// have added an entry for `auth`, signed in as Admin.
        @Test func aKeyTwiceOrAStateThatClosesThePayloadIsRefused() async throws {
            try await withCluster(Authority.topology) { cluster in
                let watcher = try await cluster.watch()
                try await Authority.kill("edge", in: cluster)
                let admin = #"{"authenticated":{"_0":\#(Authority.admin)}}"#
                let twice = #"{"address":"tally/x","worker":"edge","state":\#(admin),"address":"auth","worker":"main"}"#
                let early = #"{"address":"tally/y","worker":"edge","state":1},{"topic":"state:auth","sequence":99,"#
                    + #""payload":{"address":"auth","worker":"main","state":\#(admin)}}"#
                let rogue = try await RoguePeer.run(cluster, mode: "worker", key: "edge", endpoint: try await cluster.workersEndpoint(),
                                                    routingID: "edge", name: "edge", machineTypes: ["Counter"],
                                                    steps: [.init(kind: 0x40, address: "tally/x", payload: twice),
                                                            .init(kind: 0x40, address: "tally/y", payload: early)], hold: 2)
                try #require(rogue.welcomed, "\(rogue)")
                #expect(rogue.refusals(of: "the key $.address twice").count == 1, "\(rogue)")
                #expect(rogue.refusals(of: "not JSON").count == 1, "\(rogue)")
                let snapshot = try await RoguePeer.run(cluster, mode: "client", key: "ops", endpoint: cluster.clients,
                                                       steps: [.init(kind: 0x0A, address: "", payload: #"{"prefixes":[]}"#)], hold: 0)
                let states = try #require(snapshot.answer, "no snapshot: \(snapshot)")
                #expect(!states.contains("Admin"), "\(states)")
                #expect(try JSONSerialization.jsonObject(with: Data(states.utf8)) is [String: Any])
                #expect(watcher.events.filter { $0.topic.hasPrefix("state:tally/") }.isEmpty, "\(watcher.events)")
            }
        }

        /// Addresses a client could not send (decomposed, a line break, a C1 control) in a state
        /// change and an io request from edge: refused, and logged escaped, never as lines of
        /// their own.
        @Test func addressesAWorkerWritesAreHeldToTheFormClientsAre() async throws {
            try await withCluster(Authority.topology) { cluster in
                let watcher = try await cluster.watch()
                try await Authority.kill("edge", in: cluster)
                func head(_ text: String) -> String { "\u{0}" + String(UnicodeScalar(UInt8(text.utf8.count))) + text }
                let decomposed = "tally/e\u{301}"
                let forged = "tally/k\nFORGED worker main lost"
                let steps: [RoguePeer.Step] = [
                    .init(kind: 0x40, address: decomposed, payload: #"{"address":"\#(decomposed)","worker":"edge","state":{"count":1}}"#),
                    .init(kind: 0x40, address: "tally/x\u{85}", payload: #"{"state":{"count":1}}"#),
                    .init(kind: 0x30, address: forged, payload: head("FetchData") + head(#""f""#) + "{}"),
                ]
                let rogue = try await RoguePeer.run(cluster, mode: "worker", key: "edge", endpoint: try await cluster.workersEndpoint(),
                                                    routingID: "edge", name: "edge", machineTypes: ["Counter"], steps: steps, hold: 2)
                try #require(rogue.welcomed, "\(rogue)")
                #expect(rogue.refusals(of: "not a well-formed address").count == 3, "\(rogue)")
                try await cluster.waitForLog("refused io-request from worker edge", "not a well-formed address")
                let lines = cluster.log.split(separator: "\n")
                #expect(!lines.contains { $0.hasPrefix("FORGED") }, "a worker's address wrote a log line")
                #expect(watcher.events.filter { $0.topic.hasPrefix("state:tally/") || $0.topic.hasPrefix("effect:tally") }.isEmpty,
                        "\(watcher.events)")
            }
        }
    }
}
