import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// `get`, `stop` and `cancel` keep their place among a machine's events: a read sees what was
    /// sent before it and nothing after; a stop ends the machine after the events before it, so
    /// nothing accepted before it is lost. Over ipc, batched and pipelined.
    @Suite(.timeLimit(.minutes(2)))
    struct RequestOrderTests {
        static let topology = TopologyFile(
            name: "request-order", transport: .ipc,
            workers: [.init(name: "edge", count: 2)],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true)]
        )

        static func envelope(_ kind: MessageKind, _ correlation: UInt64, _ address: String, _ payload: String = "",
                             flags: Header.Flags = []) -> WireMessage {
            WireMessage(Header(kind, flags: flags, correlation: correlation), address: address, payload: Array(payload.utf8))
        }

        /// Sends `messages` as one batch and returns the replies by correlation.
        static func batch(_ messages: [WireMessage], endpoint: String) async throws -> [UInt64: WireMessage] {
            Dictionary(try await arrivals(messages, endpoint: endpoint).map { ($0.header.correlation, $0) },
                       uniquingKeysWith: { first, _ in first })
        }

        /// Sends `messages` as one batch and returns the replies in the order they arrived.
        static func arrivals(_ messages: [WireMessage], endpoint: String) async throws -> [WireMessage] {
            try await onThread {
                let client = try RawClient(endpoint: endpoint)
                try client.send(Batch.pack(messages))
                return try client.receiveReplies(messages.count)
            }
        }

        @Test func repliesAroundAStopComeBackInTheOrderSent() async throws {
            try await withCluster(Self.topology) { cluster in
                for round in 0..<3 {
                    let address = "counter/t\(round)"
                    let replies = try await Self.arrivals([
                        Self.envelope(.event, 10, address, #""increment""#), Self.envelope(.stop, 11, address),
                        Self.envelope(.event, 12, address, #""increment""#), Self.envelope(.get, 13, address),
                        Self.envelope(.event, 14, address, #""increment""#), Self.envelope(.cancel, 15, address, #""x""#),
                        Self.envelope(.stop, 16, address),
                    ], endpoint: cluster.clients)
                    #expect(replies.map(\.header.correlation) == Array(10...16), "round \(round)")
                    #expect(replies.map(\.header.kind) == [.state, .state, .error, .state, .error, .accepted, .state])
                }
            }
        }

        @Test func requestsToAnEndedMachineAreAnsweredInOrder() async throws {
            try await withCluster(Self.topology) { cluster in
                _ = try await Self.arrivals([Self.envelope(.event, 1, "counter/ended", #""increment""#),
                                             Self.envelope(.stop, 2, "counter/ended")], endpoint: cluster.clients)
                for _ in 0..<10 {
                    var messages: [WireMessage] = []
                    for index in 0..<50 {
                        messages.append(index.isMultiple(of: 2) ? Self.envelope(.get, UInt64(100 + index), "counter/ended")
                                                                : Self.envelope(.event, UInt64(100 + index), "counter/ended", #""increment""#))
                    }
                    let replies = try await Self.arrivals(messages, endpoint: cluster.clients)
                    #expect(replies.map(\.header.correlation) == (100..<150).map(UInt64.init))
                }
            }
        }

        /// A refusal (an event or a cancel that does not decode) waits for its turn too.
        @Test func refusalsDoNotOvertakeEarlierReplies() async throws {
            try await withCluster(Self.topology) { cluster in
                var messages = (1...300).map { Self.envelope(.event, UInt64($0), "counter/r", #""increment""#) }
                messages.append(Self.envelope(.cancel, 301, "counter/r", "{bad"))
                messages.append(Self.envelope(.event, 302, "counter/r", #"{"teleport":{}}"#))
                messages.append(Self.envelope(.event, 303, "counter/r", #""increment""#, flags: .noWait))
                messages.append(Self.envelope(.event, 304, "counter/r", #"{"teleport":{}}"#, flags: .noWait))
                messages.append(Self.envelope(.get, 305, "counter/r"))
                let replies = try await Self.arrivals(messages, endpoint: cluster.clients)
                // No-wait events are answered as soon as they are queued (or refused): not in turn.
                let inTurn = replies.filter { ![303, 304].contains($0.header.correlation) }
                #expect(inTurn.map(\.header.correlation) == (1...302).map(UInt64.init) + [305])
                #expect(inTurn.suffix(3).map(\.header.kind) == [.error, .error, .state])
                #expect(replies.first { $0.header.correlation == 303 }?.header.kind == .accepted)
                #expect(replies.first { $0.header.correlation == 304 }?.header.kind == .error)
                #expect(inTurn.last?.json == json(#"{"count":301}"#))
            }
        }

        @Test func aStopInABatchEndsTheMachineAfterTheEventsBeforeIt() async throws {
            try await withCluster(Self.topology) { cluster in
                let replies = try await Self.batch([
                    Self.envelope(.event, 1, "counter/s", #""increment""#),
                    Self.envelope(.event, 2, "counter/s", #""increment""#),
                    Self.envelope(.stop, 3, "counter/s"),
                    Self.envelope(.event, 4, "counter/s", #""increment""#),
                ], endpoint: cluster.clients)
                #expect(replies[1]?.json == json(#"{"count":1}"#))
                #expect(replies[2]?.json == json(#"{"count":2}"#))
                #expect(replies[3]?.header.kind == .state)
                #expect(replies[3]?.json == json(#"{"count":2}"#))
                #expect(replies[4]?.header.kind == .error)
                let error = try WireJSON.decode(WireError.self, from: replies[4]?.payload ?? [])
                #expect(error.code == .machineEnded)
            }
        }

        @Test func aGetInABatchSeesOnlyTheEventsBeforeIt() async throws {
            try await withCluster(Self.topology) { cluster in
                var messages = [Self.envelope(.event, 1, "counter/g", #""increment""#), Self.envelope(.get, 2, "counter/g")]
                messages += (3...202).map { Self.envelope(.event, UInt64($0), "counter/g", #""increment""#) }
                let replies = try await Self.batch(messages, endpoint: cluster.clients)
                #expect(replies[2]?.header.kind == .state)
                #expect(replies[2]?.json == json(#"{"count":1}"#))
                #expect(replies[202]?.json == json(#"{"count":201}"#))
            }
        }

        @Test func acceptedNoWaitEventsAreNotLostToAStopThatFollows() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let (accepted, stopped) = try await onThread { () throws -> (Int, WireMessage) in
                    let client = try RawClient(endpoint: endpoint)
                    for i in 1...50 { try client.sendEvent(#""increment""#, to: "counter/n", correlation: UInt64(i), flags: .noWait) }
                    try client.send(Self.envelope(.stop, 99, "counter/n"))
                    var accepted = 0
                    var stopped: WireMessage?
                    while stopped == nil {
                        let reply = try client.receive()
                        if reply.header.correlation == 99 { stopped = reply } else if reply.header.kind == .accepted { accepted += 1 }
                    }
                    return (accepted, stopped!)
                }
                #expect(accepted == 50)
                #expect(stopped.json == json(#"{"count":50}"#))
            }
        }

        @Test func aCancelAndAGetOfAnEndedMachineAreStillAnswered() async throws {
            try await withCluster(Self.topology) { cluster in
                let replies = try await Self.batch([
                    Self.envelope(.event, 1, "counter/c", #""increment""#),
                    Self.envelope(.stop, 2, "counter/c"),
                    Self.envelope(.get, 3, "counter/c"),
                    Self.envelope(.cancel, 4, "counter/c", #""nothing-running""#),
                ], endpoint: cluster.clients)
                #expect(replies[2]?.json == json(#"{"count":1}"#))
                #expect(replies[3]?.json == json(#"{"count":1}"#))   // the final state
                #expect(replies[4]?.header.kind == .accepted)
            }
        }
    }
}
