import Foundation
@_spi(GroveInternal) import GroveWire
import Testing

extension EndToEnd {
    /// `locate` (issue 39, docs/DIRECT-ROUTES.md step 2): a raw client asks the coordinator where
    /// a machine lives and gets its pool, in placement order, with each worker's state. No worker
    /// serves a direct route yet, so each registered one is `no-direct`. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct LocateTests {
        static let topology = TopologyFile(
            name: "locate", transport: .ipc,
            workers: [.init(name: "edge", count: 2)],
            machines: [
                .init(name: "counter", type: "Counter", worker: "edge", keyed: true),
                .init(name: "single", type: "Counter", worker: "edge"),
            ]
        )

        /// The coordinator's answer to a `locate` of `address`: its location, or the error.
        static func locate(_ address: String, at endpoint: String) async throws -> Result<Location, WireError> {
            let reply = try await onThread { () throws -> WireMessage in
                try RawClient(endpoint: endpoint).request(WireMessage(Header(.locate, correlation: 41), address: address))
            }
            #expect(reply.header.correlation == 41)
            switch reply.header.kind {
            case .location: return .success(try WireJSON.decode(Location.self, from: reply.payload))
            case .error: return .failure(try WireJSON.decode(WireError.self, from: reply.payload))
            default: throw HarnessError("a locate was answered \(reply.header.kind)")
            }
        }

        @Test func aRawClientLocatesAMachinesPoolAndItsWorkers() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let counter = try await Self.locate("counter/7", at: endpoint).get()
                #expect(counter.machine == "counter" && counter.keyed)
                #expect(counter.workers.map(\.name) == ["edge-1", "edge-2"])
                #expect(counter.workers.map(\.state) == [.noDirect, .noDirect])
                #expect(counter.heartbeatMs == 1500)
                #expect(counter.handingBack.isEmpty)
                // Per machine: the same answer without a key.
                #expect(try await Self.locate("counter", at: endpoint).get() == counter)

                let single = try await Self.locate("single", at: endpoint).get()
                #expect(!single.keyed)
                #expect(single.workers.map(\.name) == ["edge-1"])

                let unknown = try #require(try await Self.locate("nothing", at: endpoint).failure)
                #expect(unknown.code == .unknownMachine && unknown.message.contains("known machines"), "\(unknown.message)")

                // As an envelope of a batch, beside an event: each answered under its own id.
                let replies = try await onThread { () throws -> [WireMessage] in
                    let client = try RawClient(endpoint: endpoint)
                    try client.send(Batch.pack([
                        WireMessage(Header(.locate, correlation: 1), address: "counter/a"),
                        WireMessage(Header(.event, correlation: 2), address: "counter/a", payload: Array(#""increment""#.utf8)),
                    ]))
                    return try client.receiveReplies(2)
                }
                let byCorrelation = Dictionary(replies.map { ($0.header.correlation, $0) }, uniquingKeysWith: { first, _ in first })
                let located = try #require(byCorrelation[1])
                #expect(located.header.kind == .location)
                #expect(try WireJSON.decode(Location.self, from: located.payload).workers.map(\.name) == ["edge-1", "edge-2"])
                #expect(byCorrelation[2].map { String(decoding: $0.payload, as: UTF8.self) } == #"{"count":1}"#)
            }
        }

        @Test func aRestartedWorkerMovesTheGenerationOn() async throws {
            try await withCluster(Self.topology) { cluster in
                let endpoint = cluster.clients
                let before = try await Self.locate("counter", at: endpoint).get()
                let pid = try await cluster.workerPID("edge-2")
                kill(pid, SIGKILL)
                // fsm-launch restarts it. Whether a locate falls between its loss and its new
                // registration is the scheduler's business; that the generation moved on is not.
                try await waitUntil("edge-2 to run as a new process", timeout: .seconds(30)) {
                    (try? await cluster.workerPID("edge-2")).map { $0 != pid } ?? false
                }
                let after = try await Self.locate("counter", at: endpoint).get()
                #expect(after.generation > before.generation)
                #expect(after.workers.map(\.state) == [.noDirect, .noDirect])
            }
        }
    }
}

extension Result {
    /// The error, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
