import Foundation
import Glibc
@_spi(GroveInternal) import GroveWire
import Testing

extension EndToEnd {
    /// The topology's `metrics` endpoint (docs/ARCHITECTURE.md, "Metrics"): one scrape of the
    /// coordinator shows its own counts and what its worker counted, moved by exactly the events
    /// fsm-send sent.
    @Suite(.timeLimit(.minutes(2)))
    struct MetricsTests {
        static let topology = TopologyFile(
            name: "metrics", transport: .ipc,
            workers: [.init(name: "edge")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge")],
            metrics: #"{ "listen": "127.0.0.1:0" }"#
        )

        static let events = #"grove_worker_events_total{machine_type="Counter",worker="edge"}"#

        @Test func oneScrapeOfTheCoordinatorShowsItsCountsAndTheWorkers() async throws {
            try await withCluster(Self.topology) { cluster in
                let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("metrics ") })
                let url = String(line.dropFirst("metrics ".count))
                #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/metrics"))
                // The probe's events (the harness's readiness) are counted too: only the difference counts.
                let before = try await eventually("a first scrape of \(url)") { try? Scrape.get(url) }
                for _ in 0..<3 { try await cluster.send("counter", "increment") }
                // The worker's counts come with its next heartbeat (every 250 ms).
                let after = try await eventually("the worker's 3 events in a scrape of \(url)") { () -> Scrape? in
                    guard let scrape = try? Scrape.get(url), scrape.value(Self.events) - before.value(Self.events) >= 3 else { return nil }
                    return scrape
                }
                #expect(after.value(Self.events) - before.value(Self.events) == 3)
                #expect(after.value("grove_coordinator_requests_routed_total") - before.value("grove_coordinator_requests_routed_total") == 3)
                #expect(after.value("grove_coordinator_replies_total") - before.value("grove_coordinator_replies_total") == 3)
                #expect(after.value("grove_coordinator_busy_total") == 0)
                #expect(after.text.contains("# TYPE grove_worker_events_total counter"))
                #expect(try Scrape.raw(url, path: "/other").hasPrefix("HTTP/1.1 404"))
            }
        }

        static let direct = TopologyFile(
            name: "metricsdirect", transport: .runtimeDirectory,
            workers: [.init(name: "edge", direct: true)],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true),
                       .init(name: "single", type: "Counter", worker: "edge")],
            metrics: #"{ "listen": "127.0.0.1:0" }"#
        )

        /// The direct road is counted as the coordinator's route is: requests the worker took on
        /// its own endpoint (a batch's envelopes each), and the `moved` it answered by reason;
        /// the coordinator routed none of them.
        @Test func theWorkersDirectRequestsAndRefusalsAreCounted() async throws {
            try await withCluster(Self.direct) { cluster in
                let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("metrics ") })
                let url = String(line.dropFirst("metrics ".count))
                let before = try await eventually("a first scrape of \(url)") { try? Scrape.get(url) }
                let location = try await DirectRouteTests.locate("single", at: cluster.clients)
                let endpoint = try #require(location.workers.first?.endpoint)
                let replies = try await onThread { () throws -> [WireMessage] in
                    let client = try RawClient(endpoint: endpoint)
                    let lone = try client.request(DirectRouteTests.event("single", 1))
                    let fresh = try client.request(DirectRouteTests.event("counter/fresh", 2))
                    try client.send(Batch.pack([DirectRouteTests.event("single", 3), DirectRouteTests.event("single", 4)]))
                    return try [lone, fresh] + client.receiveReplies(2)
                }
                #expect(replies.map(DirectRouteTests.count) == [1, nil, 2, 3])
                #expect(replies[1].error?.reason == .notSpawned, "\(replies[1].error?.message ?? "")")
                let requests = "grove_worker_direct_requests_total"
                let after = try await eventually("the direct requests in a scrape of \(url)") { () -> Scrape? in
                    guard let scrape = try? Scrape.get(url), scrape.sum(requests) - before.sum(requests) >= 4 else { return nil }
                    return scrape
                }
                #expect(after.sum(requests) - before.sum(requests) == 4)
                #expect(after.value(#"grove_worker_direct_requests_total{worker="edge"}"#) == after.sum(requests))
                #expect(after.sum("grove_worker_direct_moved_total", containing: #"reason="not-spawned""#) == 1)
                #expect(after.sum("grove_worker_direct_moved_total", containing: #"reason="not-here""#) == 0)
                #expect(after.sum("grove_worker_direct_busy_total") == 0)
                #expect(after.value("grove_coordinator_requests_routed_total") - before.value("grove_coordinator_requests_routed_total") == 0,
                        "the coordinator answered the locate itself and routed nothing")
            }
        }

        /// fsm-launch's supervisor tells the coordinator of each restart: a worker killed once is
        /// counted once, under its instance's name.
        @Test func aRestartedWorkerIsCounted() async throws {
            try await withCluster(Self.topology) { cluster in
                let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("metrics ") })
                let url = String(line.dropFirst("metrics ".count))
                let restarts = #"grove_worker_restarts_total{worker="edge"}"#
                #expect(try Scrape.get(url).value(restarts) == 0)
                let first = try await cluster.workerPID("edge")
                kill(first, SIGKILL)
                let scrape = try await eventually("the restart of edge in a scrape of \(url)") { () -> Scrape? in
                    guard let scrape = try? Scrape.get(url), scrape.value(restarts) >= 1 else { return nil }
                    return scrape
                }
                #expect(scrape.value(restarts) == 1)
            }
        }

        /// `metrics.requireToken` (always so off loopback): a scrape is served only with a token a
        /// client key whose read role covers every machine made (`fsm-send metrics-token`).
        @Test func withRequireTokenOnlyAKeyThatReadsEveryMachineScrapes() async throws {
            let topology = TopologyFile(
                name: "metrics-tokens", transport: .tcp, workers: [.init(name: "edge")],
                machines: [.init(name: "counter", type: "Counter", worker: "edge")],
                security: """
                    { "coordinatorKey": "keys/coordinator.key_secret",
                      "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                                   { "key": "keys/partial.key", "roles": ["read"], "machines": ["counter*"] } ] }
                    """,
                metrics: #"{ "listen": "127.0.0.1:0", "requireToken": true }"#,
                keyPairs: ["coordinator", "ops", "partial"], clientKey: "ops")
            try await withCluster(topology) { cluster in
                let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("metrics ") })
                let url = String(line.dropFirst("metrics ".count))
                let refused = try Scrape.raw(url, path: nil)
                #expect(refused.hasPrefix("HTTP/1.1 401 Unauthorized"), "\(refused.prefix(300))")
                #expect(refused.contains("fsm-send metrics-token") && !refused.contains("grove_coordinator"))
                let made = try await cluster.fsmSend(["metrics-token", "--days", "1"], as: "ops")
                #expect(made.status == 0, "\(made)")
                let token = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let served = try Scrape.raw(url, path: nil, extraHeader: "Authorization: Bearer \(token)")
                #expect(served.hasPrefix("HTTP/1.1 200 OK") && served.contains("grove_coordinator_requests_routed_total"), "\(served.prefix(300))")
                let partial = try await cluster.fsmSend(["metrics-token"], as: "partial").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let forbidden = try Scrape.raw(url, path: nil, extraHeader: "Authorization: Bearer \(partial)")
                #expect(forbidden.hasPrefix("HTTP/1.1 403 Forbidden") && forbidden.contains("read role over every machine"), "\(forbidden.prefix(300))")
                // A token for the live view is not one for the metrics.
                let view = try await cluster.fsmSend(["view", "--url", "http://127.0.0.1:1/"], as: "ops").stdout
                let viewToken = try #require(view.split(separator: "token=").last).trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(try Scrape.raw(url, path: nil, extraHeader: "Authorization: Bearer \(viewToken)").hasPrefix("HTTP/1.1 401"))
                // The secret never reaches the log.
                #expect(!cluster.launch.stderr.contains(token))
            }
        }

        @Test func aHostOffLoopbackWithoutClientKeysIsRefusedAtLaunchNamingItsPath() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            var topology = Self.topology
            topology.metrics = #"{ "listen": "0.0.0.0:9464" }"#
            let result = try await runCommand(Products.launch, [try topology.write(in: directory).path], in: directory)
            #expect(result.status != 0, "\(result)")
            #expect(result.stderr.contains("$.metrics.listen"), "\(result)")
            #expect(result.stderr.contains("this topology has none"), "\(result)")
        }
    }
}

/// One `GET` of a metrics endpoint over a plain socket, bounded by a receive timeout: the
/// harness needs no HTTP client for it.
struct Scrape {
    let text: String

    static func get(_ url: String) throws -> Scrape {
        let response = try raw(url, path: nil)
        guard response.hasPrefix("HTTP/1.1 200"), let body = response.range(of: "\r\n\r\n") else {
            throw HarnessError("the metrics endpoint answered: \(response.prefix(200))")
        }
        return Scrape(text: String(response[body.upperBound...]))
    }

    /// The value on the line for `series` (a name, with its labels as Prometheus prints them), 0 when absent.
    func value(_ series: String) -> Double {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1)) ?? 0
        }
        return 0
    }

    /// The sum of `name`'s series whose line contains `containing` (a label, as Prometheus prints
    /// it); all of them when it is empty (Foundation's `contains("")` is false).
    func sum(_ name: String, containing: String = "") -> Double {
        text.split(separator: "\n").filter { ($0.hasPrefix(name + "{") || $0.hasPrefix(name + " ")) && (containing.isEmpty || $0.contains(containing)) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }

    /// The whole response to `GET path` (the URL's own path when nil).
    static func raw(_ url: String, path: String?, extraHeader: String? = nil) throws -> String {
        let rest = url.dropFirst("http://".count)
        guard let slash = rest.firstIndex(of: "/"), let colon = rest[..<slash].lastIndex(of: ":"),
              let port = UInt16(rest[rest.index(after: colon)..<slash]) else { throw HarnessError("not a metrics URL: \(url)") }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(String(rest[..<colon]))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HarnessError("connect to \(url): errno \(errno)") }
        let request = Array("GET \(path ?? String(rest[slash...])) HTTP/1.1\r\nHost: \(rest[..<slash])\r\n\(extraHeader.map { $0 + "\r\n" } ?? "")\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { throw HarnessError("send to \(url): errno \(errno)") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }  // closed by the server (or timed out)
            response += buffer[..<count]
        }
        return String(decoding: response, as: UTF8.self)
    }
}
