import CoreMetrics
@_spi(GroveInternal) import GroveWire
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
    /// Event patterns quarantined after crashing workers (`CoordinatorCore+Poison.swift`).
    var quarantines = 0
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
    private let quarantines: CoreMetrics.Counter
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
    /// The most labels a reported series may have, and the longest value (UTF-8 bytes): a
    /// machine type or a request type is short, and each series is kept and rendered on every
    /// scrape for as long as the coordinator runs, so a worker's report cannot grow it much.
    static let labelsLimit = 8
    static let labelValueLimit = 256
    /// The most one report may add to a counter or a histogram bucket: far more than a worker
    /// can count in a heartbeat interval, and far enough from `Int64.max` that the sums the
    /// coordinator keeps do not wrap (a wrapped counter would go negative).
    static let deltaLimit = 1 << 40
    /// Label names a report may not use: `worker` is the coordinator's; `le` and `quantile`
    /// are the exposition format's own (a histogram's `le` twice would make the whole scrape
    /// invalid).
    static let reservedLabels: Set<String> = ["worker", "le", "quantile"]

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
        quarantines = Counter(label: "grove_coordinator_quarantines_total", factory: factory)
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
        add(quarantines, counts.quarantines, exported.quarantines)
        exported = counts
    }

    /// A restart of worker instance `worker`'s process by `fsm-launch`'s supervisor.
    func noteRestart(worker: String) {
        if let counter = counter("grove_worker_restarts_total", [("worker", worker)]) {
            counter.increment()
        } else {
            refused += 1
        }
    }

    /// Adds what `worker` counted since its last report, each series labelled with the worker;
    /// sets the gauges it sampled.
    /// - Returns: Why each part that was not taken was refused (nothing of it is exported),
    ///   for the log.
    @discardableResult
    func add(_ report: MetricsReport, from worker: String) -> [String] {
        var problems: [String] = []
        func refuse(_ problem: String) {
            refused += 1
            problems.append(problem)
        }
        for sample in report.counters {
            if let problem = Self.problem(name: sample.name, labels: sample.labels) ?? Self.deltaProblem(sample.name, sample.delta) {
                refuse(problem)
                continue
            }
            guard sample.delta > 0 else { continue }
            guard let counter = counter(sample.name, Self.labels(sample.labels, worker: worker)) else {
                refuse(seriesProblem(sample.name))
                continue
            }
            counter.increment(by: Int64(sample.delta))
        }
        for sample in report.gauges ?? [] {
            if let problem = Self.problem(name: sample.name, labels: sample.labels) {
                refuse(problem)
                continue
            }
            guard let gauge = gauge(sample.name, Self.labels(sample.labels, worker: worker)) else {
                refuse(seriesProblem(sample.name))
                continue
            }
            gauge.record(sample.value)
        }
        for sample in report.histograms ?? [] {
            if let problem = ReportedHistograms.problem(with: sample)
                ?? sample.buckets.lazy.compactMap({ Self.deltaProblem(sample.name, $0) }).first
                ?? Self.labelProblem(sample.name, sample.labels) {
                refuse(problem)
                continue
            }
            let labels = Self.labels(sample.labels, worker: worker)
            let key = ReportedHistograms.Key(name: sample.name, labels: labels.map { [$0.0, $0.1] })
            guard histograms.has(key) || seriesCount < Self.seriesLimit, kinds[sample.name, default: .histogram] == .histogram,
                  labelNames[sample.name, default: labels.map(\.0)] == labels.map(\.0) else {
                refuse(seriesProblem(sample.name))
                continue
            }
            if let problem = histograms.add(sample, to: key) {
                refuse(problem)
                continue
            }
            kinds[sample.name] = .histogram
            labelNames[sample.name] = labels.map(\.0)
        }
        return problems
    }

    /// The Prometheus text of everything, after moving the coordinator's counters to `counts`:
    /// the registry's counters and gauges, then the reported histograms.
    func render(_ counts: CoordinatorCounts) -> [UInt8] {
        sync(counts)
        var text = registry.emitToBuffer()
        histograms.render(into: &text)
        return text
    }

    /// The histograms reported so far, summed per worker.
    private(set) var histograms = ReportedHistograms()

    private enum Kind { case counter, gauge, histogram }
    /// What each name is: swift-prometheus traps on one name made as two kinds.
    private var kinds: [String: Kind] = [:]

    private var seriesCount: Int { series.count + gauges.count + histograms.count }

    /// Why a reported name or its labels are not taken, or nil.
    private static func problem(name: String, labels: [String: String]) -> String? {
        guard name.hasPrefix("grove_worker_"), isName(name), name.utf8.count <= labelValueLimit else {
            return "'\(name.prefix(labelValueLimit))' is not a Prometheus name starting grove_worker_ of at most \(labelValueLimit) bytes"
        }
        guard !ownNames.contains(name) else { return "'\(name)' is the coordinator's own series" }
        guard HistogramBounds.byName[name] == nil else { return "'\(name)' is a histogram, reported as a counter or gauge" }
        return labelProblem(name, labels)
    }

    private static func labelProblem(_ name: String, _ labels: [String: String]) -> String? {
        guard labels.count <= labelsLimit else { return "'\(name.prefix(labelValueLimit))' has \(labels.count) labels, more than \(labelsLimit)" }
        if let bad = labels.keys.sorted().first(where: { !isName($0) || $0.utf8.count > labelValueLimit || reservedLabels.contains($0) || $0.hasPrefix("__") }) {
            return "'\(name.prefix(labelValueLimit))' has label '\(bad.prefix(labelValueLimit))', which is not a Prometheus label name, or is one of "
                + "\(reservedLabels.sorted().joined(separator: ", ")) (the coordinator's and the format's)"
        }
        if let long = labels.keys.sorted().first(where: { labels[$0]!.utf8.count > labelValueLimit }) {
            return "'\(name)' has label '\(long)' with a value of \(labels[long]!.utf8.count) bytes, more than \(labelValueLimit)"
        }
        return nil
    }

    private static func deltaProblem(_ name: String, _ delta: Int) -> String? {
        guard delta < 0 || delta > deltaLimit else { return nil }
        return "'\(name)' came with a count of \(delta), not one from 0 to \(deltaLimit)"
    }

    private func seriesProblem(_ name: String) -> String {
        seriesCount >= Self.seriesLimit
            ? "'\(name)' would be a series past the limit of \(Self.seriesLimit)"
            : "'\(name)' came as another kind or with other label names than before"
    }

    private static func labels(_ labels: [String: String], worker: String) -> [(String, String)] {
        labels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + [("worker", worker)]
    }

    private func gauge(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Gauge? {
        let key = SeriesKey(name: name, labels: labels.flatMap { [$0.0, $0.1] })
        if let existing = gauges[key] { return existing }
        let names = labels.map(\.0)
        guard seriesCount < Self.seriesLimit, kinds[name, default: .gauge] == .gauge, labelNames[name, default: names] == names else { return nil }
        kinds[name] = .gauge
        labelNames[name] = names
        let made = Gauge(label: name, dimensions: labels, factory: factory)
        gauges[key] = made
        return made
    }

    private var gauges: [SeriesKey: CoreMetrics.Gauge] = [:]

    private func counter(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Counter? {
        let key = SeriesKey(name: name, labels: labels.flatMap { [$0.0, $0.1] })
        if let existing = series[key] { return existing }
        let names = labels.map(\.0)
        guard seriesCount < Self.seriesLimit, kinds[name, default: .counter] == .counter, labelNames[name, default: names] == names else {
            return nil
        }
        kinds[name] = .counter
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
