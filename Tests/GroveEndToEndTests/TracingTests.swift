import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Traces across processes (docs/ARCHITECTURE.md, "Traces"): with an OTLP endpoint in the
    /// environment, fsm-send, the coordinator (fsm-launch) and both workers export their spans
    /// through swift-otel, and the trace context travels in the wire protocol, so one
    /// `fsm-send auth login` is one trace: the client's request, the coordinator's route, the
    /// transition on the machine's worker, and the io call on the io worker. The collector is
    /// a small OTLP/HTTP receiver of the test's own (Python's http.server, JSON encoding).
    @Suite(.timeLimit(.minutes(2)))
    struct TracingTests {
        static func topology(collector port: Int) -> TopologyFile {
            TopologyFile(
                name: "traces", transport: .ipc,
                workers: [.init(name: "main"), .init(name: "io")],
                machines: [.init(name: "auth", type: "AuthFlow", worker: "main")],
                io: [("Authenticate", "io"), ("VerifyTwoFactor", "io")],
                environment: [
                    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(port)",
                    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
                    "OTEL_BSP_SCHEDULE_DELAY": "100",
                ]
            )
        }

        @Test func oneLoginIsOneTraceAcrossTheClientTheCoordinatorAndBothWorkers() async throws {
            let collector = try await Collector.start()
            defer { collector.stop() }
            try await withCluster(Self.topology(collector: collector.port)) { cluster in
                let sent = try await cluster.login("auth", email: "ada@example.com", password: "analytical")
                #expect(sent.step == "authenticating")
                // The io worker's span leaves with its next export (every 100 ms here).
                let trace = try await eventually("a trace with the Authenticate call in \(collector.directory.path)", timeout: .seconds(30)) {
                    () -> [Span]? in
                    let spans = collector.spans()
                    guard let io = spans.first(where: { $0.name == "io Authenticate" }) else { return nil }
                    let trace = spans.filter { $0.traceID == io.traceID }
                    // Each process exports on its own schedule: wait until the chain from the io span
                    // reaches a root, so a span still in a batch is not taken for a missing parent.
                    let byID = Dictionary(trace.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
                    var span = io
                    for _ in 0..<trace.count {
                        if span.parentID.isEmpty { return trace }
                        guard let parent = byID[span.parentID] else { return nil }
                        span = parent
                    }
                    return nil
                }
                let byID = Dictionary(trace.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
                func parent(of span: Span) -> Span? { byID[span.parentID] }

                let io = try #require(trace.first { $0.name == "io Authenticate" })
                let call = try #require(parent(of: io), "the io span's parent is in the trace")
                #expect(call.name == "io-request Authenticate")
                let transition = try #require(parent(of: call))
                #expect(transition.name == "transition auth")
                let route = try #require(parent(of: transition))
                #expect(route.name == "route event")
                let client = try #require(parent(of: route))
                #expect(client.name == "event auth")
                #expect(client.parentID.isEmpty, "the client's span is the trace's root")

                #expect(client.service == "fsm-send")
                #expect(route.service == "fsm-launch")
                #expect(transition.service == "fsm-worker" && transition.grove == "main")
                #expect(call.process == transition.process, "the call's span is the machine's worker's")
                #expect(io.service == "fsm-worker" && io.grove == "io")
                let processes = Set([client, route, transition, io].map(\.process))
                #expect(processes.count == 4, "four processes: \(processes)")
            }
        }
    }
}

/// One span as the receiver got it, with its process's resource attributes.
struct Span {
    var traceID: String
    var spanID: String
    var parentID: String
    var name: String
    var service: String
    var pid: String
    /// `grove.name`: a worker's name.
    var grove: String
    var process: String { "\(service)/\(pid)" }
}

/// An OTLP/HTTP receiver on loopback (JSON encoding): every POST body it gets is a file of its
/// directory. Started and stopped by the test; nothing else talks to it.
struct Collector {
    let process: ChildProcess
    let directory: URL
    let port: Int

    static let script = #"""
        import http.server, os, sys, itertools
        directory = sys.argv[1]
        counter = itertools.count()
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                name = os.path.join(directory, "%06d.json" % next(counter))
                with open(name + ".part", "wb") as f:
                    f.write(body)
                os.rename(name + ".part", name)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    static func start() async throws -> Collector {
        let directory = try Cluster.makeDirectory()
        let spans = directory.appendingPathComponent("spans")
        try FileManager.default.createDirectory(at: spans, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("collector.py")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let process = try await ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path, spans.path],
                                             outputIn: directory, label: "collector")
        let port = try await eventually("the collector's port") { () throws -> Int? in
            if let status = process.exitStatus { throw HarnessError("the collector exited with \(status)") }
            return process.stdout.split(separator: "\n").first.flatMap { Int($0) }
        }
        return Collector(process: process, directory: spans, port: port)
    }

    func stop() {
        _ = process.stop(grace: .seconds(2))
    }

    /// Every span received so far.
    func spans() -> [Span] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var spans: [Span] = []
        for name in files.sorted() where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path),
                  let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
            for resourceSpans in document["resourceSpans"] as? [[String: Any]] ?? [] {
                let attributes = Self.attributes((resourceSpans["resource"] as? [String: Any])?["attributes"])
                for scope in resourceSpans["scopeSpans"] as? [[String: Any]] ?? [] {
                    for span in scope["spans"] as? [[String: Any]] ?? [] {
                        spans.append(Span(traceID: span["traceId"] as? String ?? "", spanID: span["spanId"] as? String ?? "",
                                          parentID: span["parentSpanId"] as? String ?? "", name: span["name"] as? String ?? "",
                                          service: attributes["service.name"] ?? "", pid: attributes["process.pid"] ?? "",
                                          grove: attributes["grove.name"] ?? ""))
                    }
                }
            }
        }
        return spans
    }

    /// OTLP's `[{"key", "value": {"stringValue"}}]` as a dictionary.
    static func attributes(_ list: Any?) -> [String: String] {
        var out: [String: String] = [:]
        for entry in list as? [[String: Any]] ?? [] {
            if let key = entry["key"] as? String, let value = (entry["value"] as? [String: Any])?["stringValue"] as? String {
                out[key] = value
            }
        }
        return out
    }
}
