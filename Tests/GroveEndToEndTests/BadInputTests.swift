import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 30: bad input from a raw ZeroMQ client gets a clear error reply, the
    /// coordinator keeps running, and no accepted event is lost. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct BadInputTests {
        static let topology = TopologyFile(
            name: "bad-input", transport: .ipc,
            workers: [.init(name: "edge")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true),
                       .init(name: "auth", type: "AuthFlow", worker: "edge")]
        )

        /// One piece of bad input and the error it must get.
        struct Case: Sendable {
            var name: String
            var frames: [[UInt8]]
            var code: WireError.Code
            /// The correlation id the reply must echo (0 when the header could not be read).
            var correlation: UInt64
            var path: String? = nil
            /// Words the error's message must hold.
            var says: String? = nil
        }

        static func header(version: UInt8 = 1, kind: UInt8 = MessageKind.event.rawValue, correlation: UInt64) -> [UInt8] {
            var bytes: [UInt8] = [0x47, version, kind, 0]
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: correlation >> UInt64(shift))) }
            return bytes
        }

        static func oneEnvelope(correlation: UInt64) -> [UInt8] {
            var payload: [UInt8] = []
            Batch.append(WireMessage(Header(.event, correlation: correlation), address: "counter/k", payload: Array("\"increment\"".utf8)),
                         to: &payload)
            return payload
        }

        static func event(_ payload: String, to address: String = "counter/k", correlation: UInt64) -> [[UInt8]] {
            WireMessage(Header(.event, correlation: correlation), address: address, payload: Array(payload.utf8)).frames
        }

        static let cases: [Case] = [
            Case(name: "malformed JSON", frames: event(#"{"add":"#, correlation: 11), code: .malformedJSON, correlation: 11),
            Case(name: "a value missing after a key", frames: event(#"{"add":}"#, correlation: 27), code: .malformedJSON, correlation: 27,
                 path: "$.add", says: "is not valid JSON: at column 8 ($.add)"),
            Case(name: "JSON nested 600 deep", frames: event(String(repeating: "[", count: 600) + String(repeating: "]", count: 600), correlation: 28),
                 code: .malformedJSON, correlation: 28, path: "$", says: "nesting deeper than 512 levels"),
            // Deep, but within what Foundation's decoder and the worker allow: only not an event.
            Case(name: "JSON nested 300 deep", frames: event(String(repeating: "[", count: 300) + String(repeating: "]", count: 300), correlation: 30),
                 code: .undecodableEvent, correlation: 30),
            Case(name: "unknown machine", frames: event("\"increment\"", to: "ghost", correlation: 12), code: .unknownMachine, correlation: 12),
            Case(name: "keyed machine without a key", frames: event("\"increment\"", to: "counter", correlation: 13),
                 code: .unknownMachine, correlation: 13),
            Case(name: "unknown event case", frames: event(#"{"explode":{}}"#, correlation: 14), code: .undecodableEvent, correlation: 14),
            Case(name: "wrong payload type", frames: event(#"{"add":{"_0":"five"}}"#, correlation: 15), code: .undecodableEvent,
                 correlation: 15, path: "$.add._0"),
            Case(name: "protocol version 2", frames: [header(version: 2, correlation: 16), Array("counter/k".utf8), Array("\"increment\"".utf8)],
                 code: .unsupportedVersion, correlation: 16),
            Case(name: "unknown kind", frames: [header(kind: 0x7f, correlation: 17), Array("counter/k".utf8), []],
                 code: .unknownKind, correlation: 17),
            Case(name: "a worker's kind from a client", frames: [header(kind: MessageKind.register.rawValue, correlation: 18), [], Array("{}".utf8)],
                 code: .unknownKind, correlation: 18),
            Case(name: "two frames", frames: [header(correlation: 19), Array("counter/k".utf8)], code: .malformedFrame, correlation: 19),
            Case(name: "four frames", frames: [header(correlation: 20), Array("counter/k".utf8), Array("\"increment\"".utf8), [1]],
                 code: .malformedFrame, correlation: 20),
            Case(name: "address not UTF-8", frames: [header(correlation: 21), [0xff, 0xfe], Array("\"increment\"".utf8)],
                 code: .malformedFrame, correlation: 21),
            Case(name: "bad magic", frames: [[0x48] + header(correlation: 22).dropFirst(), Array("counter/k".utf8), []],
                 code: .malformedFrame, correlation: 0),
            Case(name: "short header", frames: [[0x47, 1, 1], Array("counter/k".utf8), []], code: .malformedFrame, correlation: 0),
            Case(name: "a single garbage frame", frames: [Array("hello, grove".utf8)], code: .malformedFrame, correlation: 0),
            Case(name: "an empty frame", frames: [[]], code: .malformedFrame, correlation: 0),
            Case(name: "oversized payload", frames: event(#"{"add":{"_0":1},"pad":""# + String(repeating: "x", count: 1_500_000) + "\"}",
                                                          correlation: 23),
                 code: .oversized, correlation: 23),
            Case(name: "an address of 70,000 bytes", frames: event("\"increment\"", to: "counter/" + String(repeating: "k", count: 70_000), correlation: 25),
                 code: .malformedFrame, correlation: 25),
            Case(name: "an empty batch", frames: [header(kind: MessageKind.batch.rawValue, correlation: 0), [], []],
                 code: .malformedFrame, correlation: 0),
            Case(name: "a batch whose header counts 3 envelopes for 1",
                 frames: [header(kind: MessageKind.batch.rawValue, correlation: 3), [], oneEnvelope(correlation: 26)],
                 code: .malformedFrame, correlation: 0),
            Case(name: "a batch nested in a batch", frames: [header(kind: MessageKind.batch.rawValue, correlation: 1), [],
                                                               [MessageKind.batch.rawValue] + oneEnvelope(correlation: 29).dropFirst()],
                 code: .malformedFrame, correlation: 0, says: "nested batch"),
            Case(name: "cancel with a payload that is not JSON",
                 frames: WireMessage(Header(.cancel, correlation: 24), address: "counter/k", payload: Array("fetch".utf8)).frames,
                 code: .malformedJSON, correlation: 24),
        ]

        @Test func everyKindOfGarbageGetsAnErrorAndNothingIsLost() async throws {
            try await withCluster(Self.topology) { cluster in
                let pidsBefore = try await cluster.list().workers.compactMap(\.pid)
                let endpoint = cluster.clients
                let outcome = try await onThread { () throws -> (first: JSONValue?, failures: [String], last: JSONValue?, read: JSONValue?) in
                    let client = try RawClient(endpoint: endpoint)
                    let first = try client.request(WireMessage(Header(.event, correlation: 1), address: "counter/k",
                                                               payload: Array(#"{"add":{"_0":5}}"#.utf8))).json
                    var failures: [String] = []
                    for bad in Self.cases {
                        try client.send(frames: bad.frames)
                        let reply = try client.receive()
                        guard let error = reply.error else {
                            failures.append("\(bad.name): got \(reply.header.kind), not an error")
                            continue
                        }
                        if error.code != bad.code { failures.append("\(bad.name): code \(error.code.rawValue), expected \(bad.code.rawValue)") }
                        if reply.header.correlation != bad.correlation {
                            failures.append("\(bad.name): correlation \(reply.header.correlation), expected \(bad.correlation)")
                        }
                        if let path = bad.path, error.path != path { failures.append("\(bad.name): path \(error.path ?? "none"), expected \(path)") }
                        if let says = bad.says, !error.message.contains(says) { failures.append("\(bad.name): '\(error.message)' does not say '\(says)'") }
                        if error.message.isEmpty { failures.append("\(bad.name): no message") }
                    }
                    let last = try client.request(WireMessage(Header(.event, correlation: 100), address: "counter/k",
                                                              payload: Array(#"{"add":{"_0":1}}"#.utf8))).json
                    let read = try client.request(WireMessage(Header(.get, correlation: 101), address: "counter/k")).json
                    return (first, failures, last, read)
                }
                #expect(outcome.first == json(#"{"count":5}"#))
                #expect(outcome.failures.isEmpty, "\(outcome.failures.joined(separator: "\n"))")
                // The state accepted before the garbage is intact, and the machine still works.
                #expect(outcome.last == json(#"{"count":6}"#))
                #expect(outcome.read == json(#"{"count":6}"#))

                // The coordinator and the workers lived through it: nothing was restarted.
                #expect(cluster.launch.isRunning)
                #expect(try await cluster.list().workers.compactMap(\.pid) == pidsBefore)
                #expect(try await cluster.send("auth", "startLogin")["step"]?.caseName == "enteringCredentials")
            }
        }

        /// An address too long for the protocol, inside a batch: that envelope is refused, the
        /// others in the batch are answered.
        @Test func aTooLongAddressInABatchIsRefusedAlone() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let replies = try await onThread { () throws -> [UInt64: WireMessage] in
                    let client = try RawClient(endpoint: endpoint)
                    try client.send(Batch.pack([
                        WireMessage(Header(.event, correlation: 1), address: "counter/" + String(repeating: "k", count: 1017),
                                    payload: Array("\"increment\"".utf8)),
                        WireMessage(Header(.event, correlation: 2), address: "counter/short", payload: Array("\"increment\"".utf8)),
                    ]))
                    return Dictionary(try client.receiveReplies(2).map { ($0.header.correlation, $0) }, uniquingKeysWith: { first, _ in first })
                }
                #expect(replies[1]?.error?.code == .malformedFrame)
                #expect(replies[1]?.error?.message.contains("1025 bytes") == true)
                #expect(replies[2]?.json == json(#"{"count":1}"#))
            }
        }

        /// Valid events and garbage interleaved on one connection without waiting: every valid
        /// event is applied in order, every piece of garbage is answered.
        @Test func garbageBetweenPipelinedEventsLosesNoEvent() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let rounds = 60
                let replies = try await onThread { () throws -> [UInt64: WireMessage] in
                    let client = try RawClient(endpoint: endpoint)
                    for round in 0..<rounds {
                        let bad = Self.cases[round % Self.cases.count]
                        try client.sendEvent("\"increment\"", to: "counter/mixed", correlation: UInt64(1000 + round))
                        try client.send(frames: bad.frames)
                    }
                    var replies: [UInt64: WireMessage] = [:]
                    var garbage = 0
                    while replies.count < rounds || garbage < rounds {
                        let reply = try client.receive()
                        if reply.header.kind == .error { garbage += 1 } else { replies[reply.header.correlation] = reply }
                    }
                    return replies
                }
                for round in 0..<rounds {
                    let reply = replies[UInt64(1000 + round)]
                    #expect(reply?.header.kind == .state)
                    #expect(reply?.json == json(#"{"count":\#(round + 1)}"#), "event \(round + 1) of the pipeline")
                }
                #expect(try await cluster.state("counter/mixed") == json(#"{"count":\#(rounds)}"#))
            }
        }

        /// A route whose event is not one of its target's is reported at launch, with its place
        /// in the topology file, and the topology runs on.
        @Test func aMisspelledRouteEventIsReportedAtLaunch() async throws {
            let topology = TopologyFile(
                name: "bad-route", transport: .ipc,
                workers: [.init(name: "edge")],
                machines: [.init(name: "auth", type: "AuthFlow", worker: "edge"),
                           .init(name: "loader", type: "DataLoader", worker: "edge")],
                routes: [.init(from: "auth", when: "signedIn", to: "loader", event: "lod")]
            )
            try await withCluster(topology) { cluster in
                try await cluster.waitForLog("$.routes[0].event", "'lod' is not a case of DataLoader.Event")
                _ = try await cluster.state("loader")  // still answers

                // When the route fires, the loader's worker refuses the event in a reply of its
                // own; the coordinator publishes the failed route on route:auth.
                let watcher = try await cluster.watch(["route:auth"])
                try await cluster.login("auth", email: "grace@example.com", password: "compiler")
                _ = try await cluster.waitForState("auth", "asked for a code") { $0.step == "requiresTwoFactor" }
                _ = try await cluster.submitCode("auth", "424242")
                let failed = try await watcher.waitFor("the failed route") { $0.topic == "route:auth" }
                #expect(failed.first?.payload.description.contains("undecodable-event") == true, "\(failed)")
                #expect(try await cluster.state("loader") == json(#"{"idle":{}}"#))
            }
        }
    }
}
