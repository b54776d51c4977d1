import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// The metrics of docs/ARCHITECTURE.md, "Metrics", without sockets: the topology's `metrics`
/// key, the coordinator's registry and what it adds up from workers, the worker's counts, and
/// the HTTP answer of the endpoint.
@Suite("Metrics", .timeLimit(.minutes(2)))
struct MetricsTests {
    static func document(_ metrics: String?) -> String {
        """
        {
          "name": "t",
          "coordinator": { "clients": "ipc:///run/t/clients", "workers": "ipc:///run/t/workers", "events": "ipc:///run/t/events" },
          "workers": [ { "name": "edge" } ],
          "machines": [ { "name": "auth", "type": "AuthFlow", "worker": "edge" } ]\(metrics.map { ",\n  \"metrics\": \($0)" } ?? "")
        }
        """
    }

    static func issues(_ json: String) -> [TopologyIssue] {
        do {
            _ = try Topology(json: Data(json.utf8), source: "t.json")
            Issue.record("expected the topology to be refused")
            return []
        } catch {
            return error.issues
        }
    }

    // MARK: - The topology's key

    @Test func metricsAreOffUnlessListenIsSet() throws {
        #expect(try Topology(json: Data(Self.document(nil).utf8), source: "t.json").metrics.listen == nil)
        #expect(try Topology(json: Data(Self.document("{}").utf8), source: "t.json").metrics.listen == nil)
        let on = try Topology(json: Data(Self.document(#"{ "listen": "127.0.0.1:9464" }"#).utf8), source: "t.json")
        #expect(on.metrics.listen == "127.0.0.1:9464")
        #expect(on.metrics.bindEndpoint == "tcp://127.0.0.1:9464")
        #expect(Topology.MetricsSettings(listen: "127.0.0.1:0").bindEndpoint == "tcp://127.0.0.1:*")
    }

    @Test func aHostOffLoopbackNeedsClientKeysWhoseTokensItAsksFor() throws {
        let found = Self.issues(Self.document(#"{ "listen": "0.0.0.0:9464" }"#))
        #expect(found.map { "\($0.code) \($0.path)" } == ["invalid-value $.metrics.listen"])
        #expect(found.first?.message.contains("this topology has none") == true)
        let off = Self.issues(Self.document(#"{ "listen": "0.0.0.0:9464", "requireToken": false }"#))
        #expect(off.map { "\($0.code) \($0.path)" } == ["invalid-value $.metrics.requireToken"])
        #expect(Self.issues(Self.document(#"{ "listen": "metrics.example:9464" }"#)).first?.message.contains("not an IPv4 address") == true)
        #expect(Self.issues(Self.document(#"{ "requireToken": true }"#)).map(\.path) == ["$.metrics.requireToken"])
        // On loopback tokens are the topology's choice; without keys there is none to make them.
        #expect(try Topology(json: Data(Self.document(#"{ "listen": "127.0.0.1:9464" }"#).utf8), source: "t.json").metrics.requireToken == false)
        #expect(Self.issues(Self.document(#"{ "listen": "127.0.0.1:9464", "requireToken": true }"#)).map(\.path) == ["$.metrics.requireToken"])
    }

    @Test func aScrapeIsServedOnlyWhenItsAuthorizationHeaderPasses() {
        let authorize: MetricsHTTP.Authorizer = { header in
            switch header {
            case "Bearer good": nil
            case "Bearer reader-of-some": .forbidden("needs read over every machine")
            default: .unauthenticated("no token: \(header ?? "none")")
            }
        }
        func answer(_ headers: String) -> String {
            let request = Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\(headers)\r\n".utf8)
            return String(decoding: MetricsHTTP.response(to: request, authorize: authorize, body: { Array("counted 1\n".utf8) }) ?? [], as: UTF8.self)
        }
        #expect(answer("Authorization: Bearer good\r\n").hasPrefix("HTTP/1.1 200 OK"))
        #expect(answer("aUtHoRiZaTiOn:   Bearer good  \r\n").hasSuffix("counted 1\n"))
        let none = answer("")
        #expect(none.hasPrefix("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer"))
        #expect(none.hasSuffix("no token: none\n") && !none.contains("counted"))
        #expect(answer("Authorization: Bearer reader-of-some\r\n").hasPrefix("HTTP/1.1 403 Forbidden"))
        // Without a check (loopback, no requireToken) nothing is asked.
        let open = MetricsHTTP.response(to: Array("GET /metrics HTTP/1.1\r\n\r\n".utf8), body: { [] }) ?? []
        #expect(String(decoding: open, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func badFormsAreRefusedWithTheirPaths() {
        #expect(Self.issues(Self.document(#"{ "listen": "127.0.0.1" }"#)).map(\.path) == ["$.metrics.listen"])
        #expect(Self.issues(Self.document(#"{ "listen": "127.0.0.1:70000" }"#)).map(\.path) == ["$.metrics.listen"])
        #expect(Self.issues(Self.document(#"{ "listen": 9464 }"#)).map(\.path) == ["$.metrics.listen"])
        #expect(Self.issues(Self.document(#"{ "listen": "127.0.0.1:+80" }"#)).map(\.path) == ["$.metrics.listen"])
        #expect(Self.issues(Self.document(#"{ "listen": "127.0.0.256:80" }"#)).map(\.path) == ["$.metrics.listen"])
        #expect(Self.issues(Self.document(#"{ "listn": "127.0.0.1:9464" }"#)).map { "\($0.code) \($0.path)" } == ["unknown-key $.metrics.listn"])
    }

    // MARK: - The coordinator's registry

    @Test func theCoordinatorsCountsAreExportedAsTheyMove() {
        let metrics = CoordinatorMetrics()
        var counts = CoordinatorCounts(routed: 3, replies: 2, busy: 1, replyDropped: 0)
        var text = String(decoding: metrics.render(counts), as: UTF8.self)
        #expect(text.contains("grove_coordinator_requests_routed_total 3\n"))
        #expect(text.contains("grove_coordinator_replies_total 2\n"))
        #expect(text.contains("grove_coordinator_busy_total 1\n"))
        #expect(text.contains("grove_coordinator_replies_dropped_total 0\n"))
        counts.routed = 10
        counts.replyDropped = 4
        text = String(decoding: metrics.render(counts), as: UTF8.self)
        #expect(text.contains("grove_coordinator_requests_routed_total 10\n"))
        #expect(text.contains("grove_coordinator_replies_dropped_total 4\n"))
    }

    @Test func workersReportsAddUpPerWorkerAndMachineType() {
        let metrics = CoordinatorMetrics()
        let report = MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 5)])
        metrics.add(report, from: "data-1")
        metrics.add(report, from: "data-1")
        metrics.add(report, from: "data-2")
        metrics.noteRestart(worker: "data-2")
        let text = String(decoding: metrics.render(CoordinatorCounts()), as: UTF8.self)
        #expect(text.contains(#"grove_worker_events_total{machine_type="Counter",worker="data-1"} 10"#))
        #expect(text.contains(#"grove_worker_events_total{machine_type="Counter",worker="data-2"} 5"#))
        #expect(text.contains(#"grove_worker_restarts_total{worker="data-2"} 1"#))
        #expect(metrics.refused == 0)
    }

    @Test func aReportOutsideTheRulesIsRefusedNotExported() {
        let metrics = CoordinatorMetrics()
        metrics.add(MetricsReport(counters: [
            .init(name: "grove_coordinator_busy_total", delta: 1),  // not a worker's name
            .init(name: "grove_worker_x total", delta: 1),  // not a Prometheus name
            .init(name: "grove_worker_events_total", labels: ["worker": "other"], delta: 1),  // the coordinator's label
            .init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: -1),
            .init(name: "grove_worker_restarts_total", delta: 1),  // the coordinator's own
        ]), from: "edge")
        #expect(metrics.refused == 5)
        #expect(!String(decoding: metrics.render(CoordinatorCounts()), as: UTF8.self).contains("grove_worker_"))
        // One set of label names per counter: a second set is refused (swift-prometheus would trap).
        metrics.add(MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 1)]), from: "edge")
        metrics.add(MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["kind": "x"], delta: 1)]), from: "edge")
        #expect(metrics.refused == 6)
    }

    // MARK: - The core counts as it routes

    @Test func theCoreCountsRoutedRequestsAndTheRepliesItPassesOn() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let (worker, id) = try fixture.sendEvent("client-a", to: "auth", correlation: 7)
        #expect(fixture.core.counts == CoordinatorCounts(routed: 1))
        let actions = fixture.fromWorker(worker, WireMessage(Header(.state, correlation: id), address: "auth", payload: Array("{}".utf8)))
        #expect(actions.first?.sentToClient?.client == "client-a")
        #expect(fixture.core.counts == CoordinatorCounts(routed: 1, replies: 1))
    }

    @Test func aWorkersHeartbeatWithAReportBecomesAnActionAndAnEmptyOneNothing() throws {
        var topology = CoreFixture.topology
        topology.metrics.listen = "127.0.0.1:0"
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        #expect(fixture.fromWorker("edge", WireMessage(Header(.heartbeat), address: "edge")).isEmpty)
        let report = try WireJSON.encode(MetricsReport(counters: [.init(name: "grove_worker_events_total", delta: 1)]))
        let actions = fixture.fromWorker("edge", WireMessage(Header(.heartbeat), address: "edge", payload: report))
        #expect(actions == [.workerMetrics(worker: "edge", report: report)])
    }

    @Test func aReportNobodyAskedForIsDroppedByTheCore() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let report = try WireJSON.encode(MetricsReport(counters: [.init(name: "grove_worker_events_total", delta: 1)]))
        #expect(fixture.fromWorker("edge", WireMessage(Header(.heartbeat), address: "edge", payload: report)).isEmpty)
    }

    // MARK: - The worker's counts

    @Test func aWorkersCountsBecomeDeltasByMachineTypeAndStartAgain() {
        var counts = WorkerCounts()
        counts.events = ["counter": 3, "other-counter": 2, "auth": 1]
        counts.unhandled = ["auth": 1]
        let report = counts.report(types: ["counter": "Counter", "other-counter": "Counter", "auth": "AuthFlow"])
        #expect(report.counters == [
            .init(name: "grove_worker_events_total", labels: ["machine_type": "AuthFlow"], delta: 1),
            .init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 5),
            .init(name: "grove_worker_events_unhandled_total", labels: ["machine_type": "AuthFlow"], delta: 1),
        ])
        #expect(counts == WorkerCounts())
        #expect(counts.report(types: [:]).counters.isEmpty)
    }

    @Test func offAWorkerCountsNothingAndItsHeartbeatStaysEmpty() {
        let metrics = WorkerMetrics()
        metrics.event(on: metrics.eventCounts(ofMachine: "counter"))
        #expect(metrics.takeReport(types: ["counter": "Counter"]).isEmpty)
        metrics.turn(on: true)
        metrics.event(on: metrics.eventCounts(ofMachine: "counter"))
        metrics.event(on: metrics.eventCounts(ofMachine: "counter"))
        metrics.unhandled(at: "counter/b")
        let report = WireJSON.decodeQuickly(MetricsReport.self, from: metrics.takeReport(types: ["counter": "Counter"]))
        #expect(report?.counters == [
            .init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 2),
            .init(name: "grove_worker_events_unhandled_total", labels: ["machine_type": "Counter"], delta: 1),
        ])
    }

    @Test func theDirectRoadsRequestsAndRefusalsBecomeDeltas() {
        var counts = WorkerCounts()
        counts.directRequests = 7
        counts.directBusy = 2
        counts.countMoved(reason: "not-here")
        counts.countMoved(reason: "not-spawned")
        counts.countMoved(reason: "not-here")
        #expect(counts.report(types: [:]).counters == [
            .init(name: "grove_worker_direct_requests_total", labels: [:], delta: 7),
            .init(name: "grove_worker_direct_busy_total", labels: [:], delta: 2),
            .init(name: "grove_worker_direct_moved_total", labels: ["reason": "not-here"], delta: 2),
            .init(name: "grove_worker_direct_moved_total", labels: ["reason": "not-spawned"], delta: 1),
        ])
        #expect(counts == WorkerCounts())
        for index in 0..<(WorkerCounts.reasonLimit + 3) { counts.countMoved(reason: "reason-\(index)") }
        #expect(counts.directMoved.count == WorkerCounts.reasonLimit, "reasons are a bounded label")
    }

    @Test func theDirectRoadIsCountedOffItsFrames() {
        let event = WireMessage(Header(.event, correlation: 1), address: "counter", payload: [])
        let batch = Batch.pack([event, event, event])
        #expect(DirectTally.requests(in: [event.header.bytes, Array("counter".utf8), []][...]) == 1)
        #expect(DirectTally.requests(in: [batch.header.bytes, [], batch.payload][...]) == 3)
        #expect(DirectTally.requests(in: [[1, 2]][...]) == 1, "a malformed message is answered, so counted")

        func frames(_ error: WireError, peer: Bool) -> [[UInt8]] {
            let message = WireMessage.error(error, correlation: 4, address: "counter/a")
            return (peer ? [[9]] : []) + [message.header.bytes, Array(message.address.utf8), message.payload]
        }
        let moved = WireError(.moved, "moved", address: "counter/a", reason: .notHere)
        #expect(DirectTally.refusal(in: frames(moved, peer: true))?.moved == "not-here")
        #expect(DirectTally.refusal(in: frames(moved, peer: false))?.busy == false)
        #expect(DirectTally.refusal(in: frames(WireError(.busy, "busy"), peer: true))?.busy == true)
        #expect(DirectTally.refusal(in: frames(WireError(.forbidden, "no"), peer: true)) == nil)
        let state = WireMessage(Header(.state, correlation: 4), address: "counter/a", payload: Array("{}".utf8))
        #expect(DirectTally.refusal(in: [state.header.bytes, Array(state.address.utf8), state.payload]) == nil)

        let metrics = WorkerMetrics()
        metrics.directRequests(3)
        metrics.directRefused(busy: true)
        #expect(metrics.takeReport(types: [:]).isEmpty, "off, nothing is counted")
        metrics.turn(on: true)
        metrics.directRequests(3)
        metrics.directRefused(movedBecause: "not-spawned")
        let report = WireJSON.decodeQuickly(MetricsReport.self, from: metrics.takeReport(types: [:]))
        #expect(report?.counters == [
            .init(name: "grove_worker_direct_requests_total", labels: [:], delta: 3),
            .init(name: "grove_worker_direct_moved_total", labels: ["reason": "not-spawned"], delta: 1),
        ])
    }

    // MARK: - HTTP

    static func answer(_ request: String) -> String? {
        MetricsHTTP.response(to: Array(request.utf8), body: { Array("grove_x 1\n".utf8) }).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func getMetricsIsAnsweredWithThePrometheusText() throws {
        let response = try #require(Self.answer("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"))
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(response.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        #expect(response.contains("Content-Length: 10\r\n"))
        #expect(response.hasSuffix("\r\n\r\ngrove_x 1\n"))
    }

    @Test func anIncompleteHeadWaitsAndOtherRequestsGetErrors() {
        #expect(Self.answer("GET /metrics HTTP/1.1\r\nHost: x\r\n") == nil)
        #expect(Self.answer("GET / HTTP/1.1\r\n\r\n")?.hasPrefix("HTTP/1.1 404") == true)
        #expect(Self.answer("POST /metrics HTTP/1.1\r\n\r\n")?.hasPrefix("HTTP/1.1 405") == true)
        #expect(Self.answer("hello\r\n\r\n")?.hasPrefix("HTTP/1.1 400") == true)
        #expect(Self.answer(String(repeating: "x", count: MetricsHTTP.headLimit + 1))?.hasPrefix("HTTP/1.1 431") == true)
    }
}
