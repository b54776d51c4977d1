import Foundation
import GroveWire

/// A pyzmq peer with a real key, playing what a hostile holder of that key would: a worker that
/// registers and then speaks for machines it does not host, a peer that takes over a dead
/// worker's routing id, or a client asking for a snapshot. It prints one JSON line of what it
/// received (issue 34).
struct RoguePeer {
    /// One message to send: its kind, address and payload; `callIDs` sends it once for every id
    /// the coordinator may have given an io call so far (its epoch, from the welcome, and the
    /// counts 1 to 3000), else once with correlation 0.
    /// `copies`: sends one batch of that many copies of the message instead, its header
    /// counting `count` envelopes (default: `copies`).
    struct Step: Encodable {
        var kind: UInt8
        var address: String
        var payload: String
        var callIDs = false
        var copies: Int?
        var count: UInt64?
    }

    /// What the peer printed.
    struct Report: Decodable, CustomStringConvertible {
        var welcomed: Bool
        var epoch: UInt64?
        /// Messages received, by kind (`0x12`: error) as a hex string; a batch's envelopes each
        /// count as the message they carry.
        var kinds: [String: Int]
        var errors: [WireError]
        /// A client's answer (the `states` of a snapshot), as text.
        var answer: String?
        /// The events a worker was sent, with the ids the coordinator sent them under.
        var events: [Received]?

        struct Received: Decodable {
            var correlation: UInt64
            var address: String
        }

        var description: String { "welcomed \(welcomed), kinds \(kinds), errors \(errors.map { "\($0.code.rawValue): \($0.message)" })" }

        /// The refusals whose message names `kind`.
        func refusals(of kind: String, code: WireError.Code = .forbidden) -> [WireError] {
            errors.filter { $0.code == code && $0.message.contains(kind) }
        }
    }

    private struct Configuration: Encodable {
        var mode: String
        var endpoint: String
        var coordinatorKey: String
        var key: String
        var routingID: String?
        var name: String?
        var machineTypes: [String] = []
        var startedAtMs: Int64?
        var crash: String?
        var steps: [Step] = []
        var hold: Double = 1
        var goFile: String?
        var request: Step?
    }

    static let script = #"""
        import json, os, random, struct, sys, time, zmq, zmq.auth
        cfg = json.loads(sys.argv[1])
        ctx = zmq.Context()
        server, _ = zmq.auth.load_certificate(cfg["coordinatorKey"])
        pub, sec = zmq.auth.load_certificate(cfg["key"])
        report = {"welcomed": False, "epoch": None, "kinds": {}, "errors": [], "answer": None, "events": []}
        if cfg.get("goFile"):
            open(cfg["goFile"] + ".ready", "w").close()
            while not os.path.exists(cfg["goFile"]):
                time.sleep(0.002)
        s = ctx.socket(zmq.DEALER)
        s.linger = 0
        s.curve_serverkey, s.curve_publickey, s.curve_secretkey = server, pub, sec
        if cfg.get("routingID"):
            s.setsockopt(zmq.ROUTING_ID, cfg["routingID"].encode())
        s.connect(cfg["endpoint"])

        def send(kind, address, payload=b"", correlation=0):
            s.send_multipart([struct.pack(">BBBBQ", 0x47, 1, kind, 0, correlation), address.encode(), payload])

        def messages(frames):
            # A batch's envelopes one by one (docs/PROTOCOL.md, "Batches"); else the message itself.
            if len(frames) != 3:
                return []
            if frames[0][2] != 0x07:
                return [(frames[0][2], frames[2], int.from_bytes(frames[0][4:12], "big"), frames[1])]
            out, payload, offset = [], frames[2], 0
            while offset < len(payload):
                kind, flags, correlation, length = struct.unpack_from(">BBQH", payload, offset)
                address = payload[offset + 12:offset + 12 + length]
                offset += 12 + length
                (size,) = struct.unpack_from(">I", payload, offset)
                out.append((kind, payload[offset + 4:offset + 4 + size], correlation, address))
                offset += 4 + size
            return out

        def receive(timeout_ms):
            if not s.poll(timeout_ms):
                return []
            received = messages(s.recv_multipart())
            for kind, payload, correlation, address in received:
                key = "0x%02x" % kind
                report["kinds"][key] = report["kinds"].get(key, 0) + 1
                if kind == 0x12:
                    try:
                        report["errors"].append(json.loads(payload))
                    except ValueError:
                        pass
                if kind == 0x01:
                    report["events"].append({"correlation": correlation, "address": address.decode()})
            return [(kind, payload) for kind, payload, _, _ in received]

        def run(step):
            if step.get("copies"):
                address, payload = step["address"].encode(), step["payload"].encode()
                envelope = struct.pack(">BBQH", step["kind"], 0, 0, len(address)) + address + struct.pack(">I", len(payload)) + payload
                send(0x07, "", envelope * step["copies"], step.get("count") or step["copies"])
                return
            ids = [(report["epoch"] or 0) << 40 | n for n in range(1, 3001)] if step.get("callIDs") else [0]
            for correlation in ids:
                send(step["kind"], step["address"], step["payload"].encode(), correlation)

        if cfg["mode"] == "worker":
            registration = {"worker": cfg["name"], "pid": os.getpid(), "machineTypes": cfg["machineTypes"], "ioHandlers": [],
                            "incarnation": random.getrandbits(63) | 1,
                            "startedAtMs": cfg.get("startedAtMs") or int(time.time() * 1000)}
            if cfg.get("crash"):
                registration["crash"] = json.loads(cfg["crash"])
            send(0x20, cfg["name"], json.dumps(registration).encode(), 1)
            deadline = time.time() + 10
            while not report["welcomed"] and time.time() < deadline:
                for kind, payload in receive(100):
                    if kind == 0x21:
                        report["welcomed"] = True
                        report["epoch"] = json.loads(payload).get("epoch") or 0
            if report["welcomed"]:
                for step in cfg["steps"]:
                    run(step)
        else:
            for step in cfg["steps"]:
                run(step)
        if cfg["mode"] == "client":
            for kind, payload in receive(5000):
                report["answer"] = payload.decode()
        end, beat = time.time() + cfg["hold"], 0
        while time.time() < end:
            if cfg["mode"] == "worker" and report["welcomed"] and time.time() >= beat:
                send(0x22, cfg["name"])
                beat = time.time() + 0.2
            receive(50)
        print(json.dumps(report))
        """#

    /// Runs the peer on `endpoint` with key pair `key` and returns what it received.
    /// - Parameters:
    ///   - mode: `worker` registers as `name` first; `peer` and `client` send `steps` at once.
    ///   - goFile: Waits for this file to exist before connecting (to connect right after an
    ///     event), once it made `<goFile>.ready`.
    ///   - crash: A crash report (JSON) the worker's registration carries: what it claims its
    ///     previous process died running.
    static func run(_ cluster: Cluster, mode: String, key: String, endpoint: String, routingID: String? = nil, name: String? = nil,
                    machineTypes: [String] = [], startedAtMs: Int64? = nil, crash: String? = nil, steps: [Step], hold: Double = 1,
                    goFile: URL? = nil) async throws -> Report {
        let configuration = Configuration(
            mode: mode, endpoint: endpoint, coordinatorKey: cluster.keyPath("coordinator", secret: false),
            key: cluster.keyPath(key, secret: true), routingID: routingID, name: name, machineTypes: machineTypes,
            startedAtMs: startedAtMs, crash: crash, steps: steps, hold: hold, goFile: goFile?.path)
        return try await runPythonPeer(script, as: "rogue-peer.py", configuration: configuration, in: cluster, what: "the rogue peer")
    }
}
