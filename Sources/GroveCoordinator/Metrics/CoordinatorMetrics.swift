import CoreMetrics
import GroveWire
import Prometheus

/// What the coordinator's core counts as it routes: plain integers, kept whether or not metrics
/// are on (an add on a field the routing touches anyway), read only when a scrape comes.
struct CoordinatorCounts: Equatable {
    /// Client requests forwarded to a worker (events, gets, cancels, stops, restarts, echoes).
    var routed = 0
    /// Workers' replies forwarded to the client that asked.
    var replies = 0
    /// Requests answered `busy`.
    var busy = 0
    /// Replies replaced by `reply-dropped` for a client that did not read them.
    var replyDropped = 0
}

/// The topology's metrics as the coordinator serves them (docs/ARCHITECTURE.md, "Metrics"): its
/// own counts and the counters its workers report, through swift-metrics into one
/// swift-prometheus registry of its own (not the process's `MetricsSystem`, so two coordinators
/// in one process, as in the tests, keep theirs apart). Used on the coordinator's I/O thread
/// only; exists only when the topology has `metrics.listen`.
final class CoordinatorMetrics {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private var exported = CoordinatorCounts()
    private let routed: CoreMetrics.Counter
    private let replies: CoreMetrics.Counter
    private let busy: CoreMetrics.Counter
    private let replyDropped: CoreMetrics.Counter
    /// Counters by name and labels, made on first use: worker restarts by group, and what the
    /// workers report.
    private var series: [SeriesKey: CoreMetrics.Counter] = [:]
    /// Series past this are not made: a worker cannot grow the coordinator without bound.
    static let seriesLimit = 10_000
    /// Reported counters refused (bad name, bad label, past ``seriesLimit``).
    private(set) var refused = 0
    /// The label names of each counter name: swift-prometheus wants one set per name (a
    /// mismatch would end the process), so a report with another set is refused.
    private var labelNames: [String: [String]] = [:]
    /// Names the coordinator counts itself, which no report may add to.
    static let ownNames: Set<String> = ["grove_worker_restarts_total"]

    struct SeriesKey: Hashable {
        var name: String
        var labels: [String]
    }

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        routed = Counter(label: "grove_coordinator_requests_routed_total", factory: factory)
        replies = Counter(label: "grove_coordinator_replies_total", factory: factory)
        busy = Counter(label: "grove_coordinator_busy_total", factory: factory)
        replyDropped = Counter(label: "grove_coordinator_replies_dropped_total", factory: factory)
    }

    /// Moves the exported counters up to `counts`.
    func sync(_ counts: CoordinatorCounts) {
        func add(_ counter: CoreMetrics.Counter, _ now: Int, _ then: Int) {
            if now > then { counter.increment(by: Int64(now - then)) }
        }
        add(routed, counts.routed, exported.routed)
        add(replies, counts.replies, exported.replies)
        add(busy, counts.busy, exported.busy)
        add(replyDropped, counts.replyDropped, exported.replyDropped)
        exported = counts
    }

    /// A restart of worker instance `worker`'s process by `fsm-launch`'s supervisor.
    func noteRestart(worker: String) {
        counter("grove_worker_restarts_total", [("worker", worker)])?.increment()
    }

    /// Adds what `worker` counted since its last report, each series labelled with the worker.
    func add(_ report: MetricsReport, from worker: String) {
        for sample in report.counters {
            guard sample.delta >= 0, sample.name.hasPrefix("grove_worker_"), Self.isName(sample.name), !Self.ownNames.contains(sample.name),
                  sample.labels.keys.allSatisfy({ Self.isName($0) && $0 != "worker" && !$0.hasPrefix("__") }) else {
                refused += 1
                continue
            }
            let labels = sample.labels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + [("worker", worker)]
            guard sample.delta > 0 else { continue }
            counter(sample.name, labels)?.increment(by: Int64(sample.delta))
        }
    }

    /// The Prometheus text of everything, after moving the coordinator's counters to `counts`.
    func render(_ counts: CoordinatorCounts) -> [UInt8] {
        sync(counts)
        return registry.emitToBuffer()
    }

    private func counter(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Counter? {
        let key = SeriesKey(name: name, labels: labels.flatMap { [$0.0, $0.1] })
        if let existing = series[key] { return existing }
        let names = labels.map(\.0)
        guard series.count < Self.seriesLimit, labelNames[name, default: names] == names else {
            refused += 1
            return nil
        }
        labelNames[name] = names
        let made = Counter(label: name, dimensions: labels, factory: factory)
        series[key] = made
        return made
    }

    /// A Prometheus metric or label name: `[a-zA-Z_][a-zA-Z0-9_]*`.
    static func isName(_ text: String) -> Bool {
        guard let first = text.utf8.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
        return text.utf8.allSatisfy { $0 == UInt8(ascii: "_") || isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
