@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing

/// A worker's metrics report through the coordinator's real driver (`InMemoryCluster`): what
/// breaks the rules is logged once per reason, the rest is counted, and routing goes on.
@Suite("Metrics through the driver", .timeLimit(.minutes(2)))
struct MetricsDriverTests {
    static func cluster() -> InMemoryCluster {
        var topology = InMemoryCluster.topology
        topology.metrics.listen = "127.0.0.1:0"
        let cluster = InMemoryCluster(topology: topology)
        // What Coordinator.init does once it bound the endpoint (the embedded loop runs here).
        cluster.driver.metrics = CoordinatorMetrics()
        cluster.registerAll()
        return cluster
    }

    static func heartbeat(_ worker: String, _ payload: [UInt8]) -> WireMessage {
        WireMessage(Header(.heartbeat), address: worker, payload: payload)
    }

    @Test func badReportsAreLoggedOnceEachAndTheRestIsCounted() throws {
        let cluster = Self.cluster()
        let bad = try WireJSON.encode(MetricsReport(
            counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 4)],
            histograms: [.init(name: HistogramBounds.transitionSeconds, buckets: [1, 2, 3], sum: 0.1),
                         .init(name: "grove_worker_made_up_seconds", buckets: [1], sum: 0.1)]))
        cluster.fromWorker("data-1", Self.heartbeat("data-1", bad))
        cluster.fromWorker("data-1", Self.heartbeat("data-1", bad))
        cluster.fromWorker("data-1", Self.heartbeat("data-1", Array(#"{"counters":"many"}"#.utf8)))
        let warnings = cluster.warnings.filter { $0.contains("metrics report") }
        #expect(warnings.count == 3, "\(warnings)")
        #expect(warnings.contains { $0.contains("worker data-1's metrics report was refused in part: histogram 'grove_worker_transition_seconds' came with 3 buckets") })
        #expect(warnings.contains { $0.contains("'grove_worker_made_up_seconds' is not one the coordinator knows") })
        #expect(warnings.contains { $0.contains("worker data-1's metrics report (its heartbeat's payload) is not the JSON") })
        // The good part of each decodable report was counted; the coordinator still routes.
        let text = String(decoding: try #require(cluster.driver.metrics).render(cluster.driver.core.counts), as: UTF8.self)
        #expect(text.contains(#"grove_worker_events_total{machine_type="Counter",worker="data-1"} 8"#), "\(text)")
        let address = "counter/" + cluster.counterKey(on: "data-2")
        cluster.fromClient("c", .event(address, correlation: 1))
        #expect(cluster.requests(to: "data-2").map(\.header.kind) == [.event])
    }
}
