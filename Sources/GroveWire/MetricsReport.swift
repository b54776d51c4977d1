/// What a worker counted since its last report, sent to the coordinator as the payload of its
/// `heartbeat` when the welcome asked for metrics (docs/PROTOCOL.md, "Heartbeats"):
/// `{"counters":[{"name":"grove_worker_events_total","labels":{"machine_type":"Counter"},"delta":3}]}`.
/// Deltas, not totals: the coordinator adds them up, so a worker that restarts loses nothing
/// already reported, and a report lost with a connection costs only its own counts.
public struct MetricsReport: Codable, Sendable, Equatable {
    public struct CounterDelta: Codable, Sendable, Equatable {
        /// A Prometheus counter name starting `grove_worker_`, e.g. `grove_worker_events_total`.
        public var name: String
        /// Bounded labels only (a machine type, an outcome): never a keyed instance's key. The
        /// coordinator adds `worker`.
        public var labels: [String: String]
        public var delta: Int

        public init(name: String, labels: [String: String] = [:], delta: Int) {
            self.name = name
            self.labels = labels
            self.delta = delta
        }
    }

    public var counters: [CounterDelta]

    public init(counters: [CounterDelta] = []) {
        self.counters = counters
    }
}
