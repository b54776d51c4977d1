/// What a worker counted since its last report, sent to the coordinator as the payload of its
/// `heartbeat` when the welcome asked for metrics (docs/PROTOCOL.md, "Heartbeats"):
/// `{"counters":[{"name":"grove_worker_events_total","labels":{"machine_type":"Counter"},"delta":3}],
/// "histograms":[{"name":"grove_worker_transition_seconds","labels":{"machine_type":"Counter"},"buckets":[0,3,0,…],"sum":0.00002}],
/// "gauges":[{"name":"grove_worker_mailbox_depth","labels":{"machine_type":"Counter"},"value":0}]}`.
/// Deltas, not totals: the coordinator adds them up, so a worker that restarts loses nothing
/// already reported, and a report lost with a connection costs only its own counts. Gauges are
/// the exception: a value sampled as the heartbeat left, which replaces the last one.
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

    /// What a histogram gained since the last report: one count per bucket of the name's fixed
    /// bounds (``HistogramBounds``), not cumulative, the last for values above every bound
    /// (`le="+Inf"`), and the sum of the values recorded.
    public struct HistogramDelta: Codable, Sendable, Equatable {
        /// One of ``HistogramBounds/names``.
        public var name: String
        public var labels: [String: String]
        /// `HistogramBounds.bounds(of: name).count + 1` counts.
        public var buckets: [Int]
        public var sum: Double

        public init(name: String, labels: [String: String] = [:], buckets: [Int], sum: Double) {
            self.name = name
            self.labels = labels
            self.buckets = buckets
            self.sum = sum
        }
    }

    /// A value sampled when the heartbeat left (a depth, not a count).
    public struct GaugeValue: Codable, Sendable, Equatable {
        public var name: String
        public var labels: [String: String]
        public var value: Int

        public init(name: String, labels: [String: String] = [:], value: Int) {
            self.name = name
            self.labels = labels
            self.value = value
        }
    }

    public var counters: [CounterDelta]
    /// Absent from a worker that predates histograms.
    public var histograms: [HistogramDelta]?
    /// Absent from a worker that predates gauges.
    public var gauges: [GaugeValue]?

    public init(counters: [CounterDelta] = [], histograms: [HistogramDelta]? = nil, gauges: [GaugeValue]? = nil) {
        self.counters = counters
        self.histograms = histograms
        self.gauges = gauges
    }
}
