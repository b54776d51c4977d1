@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing

/// A worker that lies in its heartbeat's metrics report (docs/ARCHITECTURE.md, "Metrics"): the
/// coordinator neither traps nor grows without bound, the text it serves stays valid, and what it
/// refuses it says, in a bounded line.
@Suite("Metrics: a worker's hostile report", .timeLimit(.minutes(2)))
struct MetricsHostileReportTests {
    static let name = HistogramBounds.transitionSeconds
    static let bounds = HistogramBounds.byName[name]!

    static func text(_ metrics: CoordinatorMetrics) -> String {
        String(decoding: metrics.render(CoordinatorCounts()), as: UTF8.self)
    }

    /// Every line of the exposition text (split at line feed bytes: `"\r\n"` is one `Character`)
    /// is a comment or a sample of a `grove_` series.
    static func linesAreValid(_ text: String) -> Bool {
        Array(text.utf8).split(separator: 10).allSatisfy { $0.first == UInt8(ascii: "#") || $0.starts(with: "grove_".utf8) }
    }

    @Test func hugeBucketCountsAreRefusedInsteadOfOverflowingTheSum() {
        let metrics = CoordinatorMetrics()
        var buckets = Array(repeating: 0, count: Self.bounds.count + 1)
        buckets[0] = Int.max
        let report = MetricsReport(histograms: [.init(name: Self.name, labels: ["machine_type": "Counter"], buckets: buckets, sum: 1)])
        // Twice: the second add of Int.max used to trap the coordinator.
        #expect(metrics.add(report, from: "data-1").first?.contains("not one from 0 to") == true)
        #expect(metrics.add(report, from: "data-1").count == 1)
        #expect(!Self.text(metrics).contains(Self.name))
    }

    @Test func aSeriesThatWouldCountPastIntMaxIsRefused() {
        var histograms = ReportedHistograms()
        var buckets = Array(repeating: 0, count: Self.bounds.count + 1)
        buckets[0] = Int.max / 2 + 1
        let delta = MetricsReport.HistogramDelta(name: Self.name, buckets: buckets, sum: 1)
        let key = ReportedHistograms.Key(name: Self.name, labels: [["worker", "data-1"]])
        #expect(histograms.add(delta, to: key) == nil)
        #expect(histograms.add(delta, to: key)?.contains("would count past") == true)
        let huge = MetricsReport.HistogramDelta(name: Self.name, buckets: Array(repeating: 0, count: Self.bounds.count + 1), sum: .greatestFiniteMagnitude)
        let other = ReportedHistograms.Key(name: Self.name, labels: [["worker", "data-2"]])
        #expect(histograms.add(huge, to: other) == nil)
        #expect(histograms.add(huge, to: other)?.contains("would sum past") == true)
        var text: [UInt8] = []
        histograms.render(into: &text)
        #expect(String(decoding: text, as: UTF8.self).contains("_count{worker=\"data-1\"} \(Int.max / 2 + 1)\n"))
    }

    @Test func aCounterDeltaPastTheLimitIsRefusedSoNoCounterWraps() {
        let metrics = CoordinatorMetrics()
        let report = MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: Int.max)])
        #expect(metrics.add(report, from: "data-1").count == 1)
        #expect(metrics.add(report, from: "data-1").count == 1)
        #expect(!Self.text(metrics).contains("-"))
        let fine = MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: CoordinatorMetrics.deltaLimit)])
        #expect(metrics.add(fine, from: "data-1").isEmpty)
    }

    @Test func aCarriageReturnLineFeedInALabelValueIsEscaped() {
        let metrics = CoordinatorMetrics()
        let buckets = Array(repeating: 1, count: Self.bounds.count + 1)
        let injected = "Counter\r\ngrove_fake_total 1\n\"x\\"
        #expect(metrics.add(MetricsReport(
            counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": injected], delta: 1)],
            histograms: [.init(name: Self.name, labels: ["machine_type": injected], buckets: buckets, sum: 1)]), from: "data-1").isEmpty)
        let text = Self.text(metrics)
        #expect(Self.linesAreValid(text), "\(text)")
        #expect(!Array(text.utf8).contains(Array("\ngrove_fake_total".utf8)))
        #expect(Array(text.utf8).contains(Array(#"machine_type="Counter\#r\ngrove_fake_total 1\n\"x\\""#.utf8)))
    }

    @Test func reservedLabelsManyLabelsAndLongNamesOrValuesAreRefused() {
        let metrics = CoordinatorMetrics()
        let buckets = Array(repeating: 1, count: Self.bounds.count + 1)
        let many = Dictionary(uniqueKeysWithValues: (0...CoordinatorMetrics.labelsLimit).map { ("l\($0)", "v") })
        let long = String(repeating: "x", count: CoordinatorMetrics.labelValueLimit + 1)
        let problems = metrics.add(MetricsReport(
            counters: [.init(name: "grove_worker_events_total", labels: many, delta: 1),
                       .init(name: "grove_worker_events_total", labels: ["machine_type": long], delta: 1),
                       .init(name: "grove_worker_" + long, delta: 1),
                       .init(name: "grove_worker_events_total", labels: ["quantile": "0.5"], delta: 1)],
            histograms: [.init(name: Self.name, labels: ["le": "1"], buckets: buckets, sum: 1)]), from: "data-1")
        #expect(problems.count == 5, "\(problems)")
        #expect(problems.allSatisfy { $0.utf8.count < 2 * CoordinatorMetrics.labelValueLimit }, "\(problems)")
        #expect(!Self.text(metrics).contains("grove_worker"))
    }

    @Test func seriesPastTheLimitAreRefusedAndTheTextStaysBounded() {
        let metrics = CoordinatorMetrics()
        let counters = (0...CoordinatorMetrics.seriesLimit).map { MetricsReport.CounterDelta(name: "grove_worker_events_total", labels: ["machine_type": "T\($0)"], delta: 1) }
        let problems = metrics.add(MetricsReport(counters: counters), from: "data-1")
        #expect(problems == ["'grove_worker_events_total' would be a series past the limit of \(CoordinatorMetrics.seriesLimit)"])
        let text = Self.text(metrics)
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("grove_worker_events_total{") }.count == CoordinatorMetrics.seriesLimit)
    }

    @Test func aReportOverTheLimitIsNotDecoded() throws {
        let cluster = MetricsDriverTests.cluster()
        let report = try WireJSON.encode(MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 1)]))
        // Valid JSON, padded past the limit with white space.
        cluster.fromWorker("data-1", MetricsDriverTests.heartbeat("data-1", report + Array(repeating: UInt8(ascii: " "), count: CoordinatorDriver.reportLimit)))
        #expect(cluster.warnings.contains { $0.contains("more than \(CoordinatorDriver.reportLimit)") }, "\(cluster.warnings)")
        let text = String(decoding: try #require(cluster.driver.metrics).render(cluster.driver.core.counts), as: UTF8.self)
        #expect(!text.contains("grove_worker_events_total{"))
        cluster.fromWorker("data-1", MetricsDriverTests.heartbeat("data-1", report))
        #expect(String(decoding: try #require(cluster.driver.metrics).render(cluster.driver.core.counts), as: UTF8.self).contains("grove_worker_events_total{"))
    }

    @Test func aHugeBadNameIsLoggedShortAndRoutingGoesOn() throws {
        let cluster = MetricsDriverTests.cluster()
        let report = try WireJSON.encode(MetricsReport(counters: [.init(name: String(repeating: "y", count: 100_000), delta: 1)]))
        cluster.fromWorker("data-1", MetricsDriverTests.heartbeat("data-1", report))
        let warnings = cluster.warnings.filter { $0.contains("metrics report") }
        #expect(warnings.count == 1)
        #expect(warnings.allSatisfy { $0.utf8.count < 1000 }, "\(warnings.map(\.utf8.count))")
        let address = "counter/" + cluster.counterKey(on: "data-2")
        cluster.fromClient("c", .event(address, correlation: 1))
        #expect(cluster.requests(to: "data-2").map(\.header.kind) == [.event])
    }
}
