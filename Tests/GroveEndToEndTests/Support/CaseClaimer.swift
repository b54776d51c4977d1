import Foundation

/// A pyzmq worker holding a real group key that lies about why it died: it registers, receives
/// a client's real event for a machine it hosts (sent by a client key it is given), then
/// registers again as its "next process" with a crash report naming that very request, but
/// another event case. Once per address; a last registration carries the last claim. It prints
/// one JSON line: how many times it was welcomed and the errors the client got (issue 34).
struct CaseClaimer {
    struct Report: Decodable {
        var welcomed: Int
        var claims: Int
        var clientErrors: [String]
    }

    private struct Configuration: Encodable {
        var workers: String
        var clients: String
        var coordinatorKey: String
        var key: String
        var clientKey: String
        var name: String
        var machineTypes: [String]
        var type: String
        var addresses: [String]
        var event: String
        var claimed: String
    }

    static let script = #"""
        import json, os, random, struct, sys, time, zmq, zmq.auth
        cfg = json.loads(sys.argv[1])
        ctx = zmq.Context()
        server, _ = zmq.auth.load_certificate(cfg["coordinatorKey"])
        report = {"welcomed": 0, "claims": 0, "clientErrors": []}

        def socket(key, endpoint):
            pub, sec = zmq.auth.load_certificate(key)
            s = ctx.socket(zmq.DEALER)
            s.linger = 0
            s.curve_serverkey, s.curve_publickey, s.curve_secretkey = server, pub, sec
            s.connect(endpoint)
            return s

        def send(s, kind, address, payload, correlation):
            s.send_multipart([struct.pack(">BBBBQ", 0x47, 1, kind, 0, correlation), address.encode(), payload])

        def received(s, timeout_ms):
            # (kind, correlation, payload) of each message, a batch's envelopes one by one.
            if not s.poll(timeout_ms):
                return []
            frames = s.recv_multipart()
            if len(frames) != 3:
                return []
            if frames[0][2] != 0x07:
                return [(frames[0][2], struct.unpack_from(">Q", frames[0], 4)[0], frames[2])]
            out, payload, offset = [], frames[2], 0
            while offset < len(payload):
                kind, flags, correlation, length = struct.unpack_from(">BBQH", payload, offset)
                offset += 12 + length
                (size,) = struct.unpack_from(">I", payload, offset)
                out.append((kind, correlation, payload[offset + 4:offset + 4 + size]))
                offset += 4 + size
            return out

        def wait_for(s, kind, seconds=10):
            deadline = time.time() + seconds
            while time.time() < deadline:
                for k, correlation, payload in received(s, 100):
                    if k == kind:
                        return correlation
            return None

        def register(claim):
            s = socket(cfg["key"], cfg["workers"])
            registration = {"worker": cfg["name"], "pid": os.getpid(), "machineTypes": cfg["machineTypes"], "ioHandlers": [],
                            "incarnation": random.getrandbits(63) | 1, "startedAtMs": int(time.time() * 1000)}
            if claim:
                address, correlation = claim
                registration["crash"] = {"address": address, "type": cfg["type"], "event": cfg["claimed"], "origin": "sent",
                                         "correlation": correlation}
                report["claims"] += 1
            send(s, 0x20, cfg["name"], json.dumps(registration).encode(), 1)
            if wait_for(s, 0x21) is not None:
                report["welcomed"] += 1
            return s

        client = socket(cfg["clientKey"], cfg["clients"])
        claim, sockets = None, []
        for index, address in enumerate(cfg["addresses"]):
            sockets.append(register(claim))
            send(client, 0x01, address, cfg["event"].encode(), index + 1)
            correlation = wait_for(sockets[-1], 0x01)
            claim = (address, correlation) if correlation is not None else None
        sockets.append(register(claim))
        deadline = time.time() + 3
        while time.time() < deadline and len(report["clientErrors"]) < len(cfg["addresses"]):
            for kind, correlation, payload in received(client, 100):
                if kind == 0x12:
                    report["clientErrors"].append(json.loads(payload).get("code", ""))
        print(json.dumps(report))
        """#

    /// Runs the claimer as worker `name` with key pair `key`, and client key `clientKey`
    /// sending `event` to each of `addresses` (machines of type `type` it hosts).
    static func run(_ cluster: Cluster, key: String, clientKey: String, name: String, machineTypes: [String], type: String,
                    addresses: [String], event: String, claimed: String) async throws -> Report {
        let configuration = Configuration(
            workers: try await cluster.workersEndpoint(), clients: cluster.clients,
            coordinatorKey: cluster.keyPath("coordinator", secret: false), key: cluster.keyPath(key, secret: true),
            clientKey: cluster.keyPath(clientKey, secret: true), name: name, machineTypes: machineTypes, type: type,
            addresses: addresses, event: event, claimed: claimed)
        return try await runPythonPeer(script, as: "case-claimer.py", configuration: configuration, in: cluster, what: "the case claimer")
    }
}
