import Foundation
@_spi(GroveInternal) import GroveWire
import Testing

extension EndToEnd {
    /// Old peers on direct routes (docs/DIRECT-ROUTES.md, 5.9), no flag day: a worker that serves
    /// no direct endpoint is listed `no-direct` and a direct client reaches it through the
    /// coordinator; a coordinator that predates `locate` answers it `unknown-kind`, and the
    /// client sends everything through it for the rest of its life.
    @Suite(.timeLimit(.minutes(2)))
    struct DirectFallbackTests {
        static let topology = TopologyFile(
            name: "nodirect", transport: .runtimeDirectory,
            workers: [.init(name: "edge")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true)]
        )

        @Test func aWorkerWithoutDirectIsListedSoAndAnsweredThroughTheCoordinator() async throws {
            try await withCluster(Self.topology) { cluster in
                let location = try await DirectRouteTests.locate("counter", at: cluster.clients)
                #expect(location.workers.map(\.state) == [.noDirect], "\(location)")
                #expect(location.workers.allSatisfy { $0.endpoint == nil }, "\(location)")

                for expected in 1...3 {
                    let result = try await cluster.fsmSend(["send", "counter/a", "increment", "--route", "direct"], as: nil)
                    #expect(result.status == 0, "\(result)")
                    #expect(try JSONValue(parsing: Data(result.stdout.utf8))["count"] == .integer(Int64(expected)), "\(result)")
                }
                let direct = try await cluster.fsmSend(["state", "counter/a", "--route", "direct"], as: nil)
                #expect(direct.status == 0, "\(direct)")
                #expect(try JSONValue(parsing: Data(direct.stdout.utf8)) == (try await cluster.state("counter/a")),
                        "the same state on both routes")
                #expect(try await cluster.state("counter/a")["count"] == .integer(3))
            }
        }

        /// A coordinator from before direct routes, in pyzmq: `locate` (0x0C) is a kind it does
        /// not know, answered `unknown-kind`; an event is answered `already-applied` (so that
        /// fsm-send asks for the state next, in the same client's life) and a `get` with a
        /// state. It prints `<kind> <flags> <address>` per request. Scripts/test.sh installs pyzmq.
        static let oldCoordinator = #"""
        import json, struct, sys, zmq
        socket = zmq.Context().socket(zmq.ROUTER)
        socket.setsockopt(zmq.RCVTIMEO, 20000)
        socket.bind(sys.argv[1])
        print("bound", flush=True)
        def error(code, message, address):
            return json.dumps({"code": code, "message": message, "address": address}).encode()
        while True:
            peer, header, address, payload = socket.recv_multipart()
            magic, version, kind, flags, correlation = struct.unpack(">BBBBQ", header)
            print(hex(kind), flags, address.decode(), flush=True)
            reply = struct.pack(">BBBBQ", 0x47, 1, 0x12, 0, correlation)
            if kind == 0x01:
                socket.send_multipart([peer, reply, address, error("already-applied", "applied long ago", address.decode())])
            elif kind == 0x02:
                socket.send_multipart([peer, struct.pack(">BBBBQ", 0x47, 1, 0x10, 0, correlation), address, b'{"count":7}'])
            else:
                socket.send_multipart([peer, reply, address, error("unknown-kind", "kind %d is not known here" % kind, address.decode())])
        """#

        @Test func aClientWhoseLocateIsUnknownSendsThroughTheCoordinatorForItsLife() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (fake, endpoint) = try await startFakeCoordinator(Self.oldCoordinator, in: directory)
            defer { _ = fake.stop() }

            let result = try await runCommand(Products.send, ["counter/a", "increment", "--endpoint", endpoint, "--route", "direct",
                                                              "--timeout", "20"], in: directory)

            #expect(result.status == 0, "\(result)\nthe test's coordinator saw:\n\(fake.stdout)\(fake.stderr)")
            #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"count":7}"#, "\(result)")
            // One locate, refused; the event and the get that follows it both by the coordinator,
            // with no second locate: the client does not ask again.
            let requests = fake.stdout.split(separator: "\n").dropFirst().map(String.init)
            #expect(requests == ["0xc 0 counter", "0x1 16 counter/a", "0x2 0 counter/a"], "\(fake.stdout)")
        }
    }
}
