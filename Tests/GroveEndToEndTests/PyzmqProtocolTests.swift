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
