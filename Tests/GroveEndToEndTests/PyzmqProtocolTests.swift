import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// docs/PROTOCOL.md promises that pyzmq and that page are enough to talk to a topology: its
    /// Python example runs as written (endpoint aside) against a real one. Scripts/test.sh
    /// installs pyzmq.
    @Suite(.timeLimit(.minutes(2)))
    struct PyzmqProtocolTests {
        static let topology = TopologyFile(
            name: "pyzmq", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "auth-io")],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "edge"),
                       .init(name: "counter", type: "Counter", worker: "edge", keyed: true)],
            io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")]
        )

        static let documentedEndpoint = #"ENDPOINT = f"ipc://{RUNTIME}/default/clients""#

        /// The python examples of docs/PROTOCOL.md, in page order.
        static func examples() throws -> [String] {
            let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let page = try String(contentsOf: repo.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
            return page.components(separatedBy: "```python\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        }

        /// Runs `example` against `cluster` as written, but for the endpoint.
        static func run(_ example: String, as name: String, in cluster: Cluster) async throws -> CommandResult {
            let file = cluster.directory.appendingPathComponent(name)
            try example.replacingOccurrences(of: documentedEndpoint, with: "ENDPOINT = \"\(cluster.clients)\"")
                .write(to: file, atomically: true, encoding: .utf8)
            return try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path], in: cluster.directory)
        }

        @Test func theDocumentedPythonClientWorks() async throws {
            let example = try #require(try Self.examples().first, "docs/PROTOCOL.md has no python example")
            #expect(example.contains(Self.documentedEndpoint))
            try await withCluster(Self.topology) { cluster in
                let result = try await Self.run(example, as: "example.py", in: cluster)
                #expect(result.status == 0, "python3 example.py failed (is pyzmq installed? Scripts/test.sh installs it): \(result.stderr)")
                let lines = result.stdout.split(separator: "\n").map(String.init)
                try #require(lines.count == 4, "expected four lines, got: \(result.stdout)")
                #expect(lines[0] == "0x10 {'count': 41}")
                #expect(lines[1] == "0x10 {'count': 42}")
                #expect(lines[2] == "state:counter [{'count': 0}, {'count': 41}, {'count': 42}]")
                #expect(lines[3] == "0x12 undecodable-event $")
                // Run again: the example does not depend on a fresh topology.
                let again = try await Self.run(example, as: "example.py", in: cluster)
                #expect(again.status == 0, "a second run failed: \(again.stderr)")
            }
        }

        @Test func theDocumentedBatchExampleWorks() async throws {
            let example = try #require(try Self.examples().first { $0.contains("0x07") }, "docs/PROTOCOL.md has no batch example")
            #expect(example.contains(Self.documentedEndpoint))
            try await withCluster(Self.topology) { cluster in
                let result = try await Self.run(example, as: "batch.py", in: cluster)
                #expect(result.status == 0, "python3 batch.py failed: \(result.stderr)")
                #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"100 {"count":100}"#)
            }
        }

        /// What the attacker's review of issue 34 sent raw: each refusal says what was wrong and
        /// where, and the coordinator answers the next request as before.
        static let hostileFrames = #"""
            import json, struct, sys, zmq
            s = zmq.Context().socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.RCVTIMEO, 5000)
            s.connect(sys.argv[1])
            def header(kind, correlation, flags=0):
                return struct.pack(">BBBBQ", 0x47, 1, kind, flags, correlation)
            def answer(frames):
                s.send_multipart(frames)
                h, address, payload = s.recv_multipart()
                return hex(h[2]), struct.unpack(">Q", h[4:])[0], json.loads(payload)
            kind, correlation, error = answer([header(0x01, 1), b"counter/k", b'{"add":{"_0":9223372036854775808}}'])
            print(json.dumps({"case": "add", "kind": kind, "correlation": correlation, "error": error}))
            frames = [header(0x01, 2), b"counter/k", b'"increment"'] + [b"x"] * 7
            kind, correlation, error = answer(frames)
            print(json.dumps({"case": "frames", "kind": kind, "correlation": correlation, "error": error}))
            kind, correlation, error = answer([header(0x01, 3, flags=0x80), b"counter/k", b'"increment"'])
            print(json.dumps({"case": "flag", "kind": kind, "correlation": correlation, "error": error}))
            env = struct.pack(">BBQH", 0x01, 0, 4, 9) + b"counter/k" + struct.pack(">I", 11) + b'"increment"'
            kind, correlation, error = answer([header(0x07, 1), b"counter/x", env])
            print(json.dumps({"case": "batch", "kind": kind, "correlation": correlation, "error": error}))
            kind, correlation, state = answer([header(0x01, 5), b"counter/k", b'"increment"'])
            print(json.dumps({"case": "after", "kind": kind, "correlation": correlation, "error": state}))
            """#

        @Test func hostileFramesAreRefusedSayingWhatAndWhere() async throws {
            try await withCluster(Self.topology) { cluster in
                let file = cluster.directory.appendingPathComponent("hostile.py")
                try Self.hostileFrames.write(to: file, atomically: true, encoding: .utf8)
                let result = try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path, cluster.clients],
                                                  in: cluster.directory)
                #expect(result.status == 0, "python3 hostile.py failed: \(result.stderr)")
                struct Line: Decodable {
                    var `case`: String, kind: String, correlation: UInt64
                    var error: [String: JSONValue]
                    func text(_ key: String) -> String { if case .string(let text)? = error[key] { text } else { "" } }
                }
                let lines = try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
                try #require(lines.map(\.case) == ["add", "frames", "flag", "batch", "after"], "\(result.stdout)")
                let add = lines[0], frames = lines[1], flag = lines[2], batch = lines[3], after = lines[4]
                #expect(add.kind == "0x12" && add.correlation == 1)
                #expect(add.text("code") == "undecodable-event")
                #expect(add.text("path") == "$.add._0")
                #expect(add.text("message").hasPrefix("'add' has a value that does not fit its type at add._0: 9223372036854775808 does not fit in Int"),
                        "\(add.text("message"))")
                #expect(frames.kind == "0x12" && frames.correlation == 2 && frames.text("code") == "malformed-frame")
                #expect(frames.text("message").contains("has 10 frames"), "\(frames.text("message"))")
                #expect(flag.kind == "0x12" && flag.correlation == 3 && flag.text("code") == "malformed-frame")
                #expect(flag.text("message").contains("the header (frame 0) sets flag bits 0x80"), "\(flag.text("message"))")
                #expect(batch.kind == "0x12" && batch.correlation == 0 && batch.text("code") == "malformed-frame")
                #expect(batch.text("message").contains("a batch's address frame (frame 1) must be empty"), "\(batch.text("message"))")
                #expect(after.kind == "0x10" && after.correlation == 5)
                #expect(after.error["count"] == .integer(1), "the refused requests ran nothing: \(after.error)")
            }
        }

        /// The direct route's example: locate, the key's home by the page's hash, `moved`
        /// `not-spawned` for a first event, then the worker's own answer.
        @Test func theDocumentedDirectRouteClientWorks() async throws {
            let example = try #require(try Self.examples().first { $0.contains("0x0C") }, "docs/PROTOCOL.md has no direct route example")
            #expect(example.contains(Self.documentedEndpoint))
            let topology = TopologyFile(
                name: "pyzmq-direct", transport: .runtimeDirectory, workers: [.init(name: "data", count: 3, direct: true)],
                machines: [.init(name: "counter", type: "Counter", worker: "data", keyed: true)])
            try await withCluster(topology) { cluster in
                // Three runs, three keys: each must find its home among three workers.
                for run in 1...3 {
                    let result = try await Self.run(example, as: "direct.py", in: cluster)
                    #expect(result.status == 0, "python3 direct.py failed: \(result.stderr)")
                    #expect(result.stdout.split(separator: "\n") == ["0x17 registered", "0x12 moved not-spawned", "0x10 {'count': 2}"],
                            "run \(run): \(result)")
                }
            }
        }

        @Test func theDocumentedCurveClientWorks() async throws {
            let example = try #require(try Self.examples().first { $0.contains("curve_serverkey") }, "docs/PROTOCOL.md has no CURVE example")
            let documentedEndpoint = #"ENDPOINT = "tcp://127.0.0.1:5555""#
            #expect(example.contains(documentedEndpoint))
            let topology = TopologyFile(
                name: "pyzmq-curve", transport: .tcp, workers: [.init(name: "edge")],
                machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true)],
                security: #"{ "coordinatorKey": "keys/coordinator.key_secret", "clients": [ { "key": "keys/app.key", "roles": ["read", "send"] } ] }"#,
                keyPairs: ["coordinator", "app"], clientKey: "app")
            try await withCluster(topology) { cluster in
                // The key paths are the page's: relative to the directory the keys were made in.
                let file = cluster.directory.appendingPathComponent("curve.py")
                try example.replacingOccurrences(of: documentedEndpoint, with: "ENDPOINT = \"\(cluster.clients)\"")
                    .write(to: file, atomically: true, encoding: .utf8)
                let result = try await runCommand(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path], in: cluster.directory)
                #expect(result.status == 0, "python3 curve.py failed: \(result.stderr)")
                #expect(result.stdout.split(separator: "\n") == ["0x10 {'count': 1}", "0x12 forbidden"], "\(result)")
            }
        }
    }
}
