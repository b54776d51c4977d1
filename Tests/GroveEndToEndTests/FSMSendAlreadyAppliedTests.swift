import Foundation
import Testing

extension EndToEnd {
    /// What fsm-send does with `already-applied`: the event was applied on an earlier send whose
    /// answer is gone, so it is a success (exit 0), with a note on stderr and, for an event that
    /// waits, the state read now. A real worker answers so only when a retry comes back after
    /// more than its window of newer answers (RetryTests shows that under kill -9); here a
    /// pyzmq coordinator of the test's own answers every event so, as PROTOCOL.md writes the
    /// reply, and a `get` with a state. Scripts/test.sh installs pyzmq.
    @Suite(.timeLimit(.minutes(2)))
    struct FSMSendAlreadyAppliedTests {
        /// Binds a ROUTER at `endpoint`; answers each event `already-applied` and each `get`
        /// `{"count":7}`, printing `<kind> <flags> <address>` per request, until the test stops
        /// it. (It used to exit after the `get`'s reply: 1 run in 4, fsm-send never read that
        /// reply, the connection closing under it, even with a linger.)
        static let coordinator = #"""
        import json, struct, sys, zmq
        socket = zmq.Context().socket(zmq.ROUTER)
        socket.setsockopt(zmq.RCVTIMEO, 20000)
        socket.bind(sys.argv[1])
        print("bound", flush=True)
        while True:
            peer, header, address, payload = socket.recv_multipart()
            magic, version, kind, flags, correlation = struct.unpack(">BBBBQ", header)
            print(hex(kind), flags, address.decode(), flush=True)
            if kind == 0x01:
                error = {"code": "already-applied", "message": "applied long ago", "address": address.decode()}
                socket.send_multipart([peer, struct.pack(">BBBBQ", 0x47, 1, 0x12, 0, correlation), address,
                                       json.dumps(error).encode()])
            elif kind == 0x02:
                socket.send_multipart([peer, struct.pack(">BBBBQ", 0x47, 1, 0x10, 0, correlation), address, b'{"count":7}'])
        """#

        @Test func anEventAppliedOnAnEarlierSendIsASuccessWithTheStateNow() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (fake, endpoint) = try await startFakeCoordinator(Self.coordinator, in: directory)
            defer { _ = fake.stop() }

            // A generous timeout: a loaded machine may be slow to run the test's Python.
            let result = try await runCommand(Products.send, ["counter/a", "increment", "--endpoint", endpoint, "--timeout", "20"],
                                              in: directory)

            #expect(result.status == 0, "\(result)\nthe test's coordinator saw:\n\(fake.stdout)\(fake.stderr)")
            #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"count":7}"#, "\(result)")
            #expect(result.stderr.contains("note: counter/a applied this event on an earlier send whose answer was lost"), "\(result)")
            // The event carried a key (flags bit 4), and was not sent again under a new one.
            let requests = fake.stdout.split(separator: "\n").dropFirst().map(String.init)
            #expect(requests == ["0x1 16 counter/a", "0x2 0 counter/a"], "\(fake.stdout)")
        }
    }
}
