import Foundation
@testable import GroveClient
import GroveCluster
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// The histograms, io counts and gauges of docs/ARCHITECTURE.md, "Metrics", without sockets:
/// fixed bounds both sides know, the worker's per-bucket deltas, the coordinator's sum of them
/// across workers rendered as Prometheus text, and reports it refuses.
@Suite("Metrics: histograms", .timeLimit(.minutes(2)))
struct MetricsHistogramTests {
    static let transition = HistogramBounds.byName[HistogramBounds.transitionSeconds]!

    /// Per-bucket counts for `values` against the transition bounds.
    static func buckets(_ values: [Double]) -> [Int] {
        var counts = HistogramCounts(bounds: transition)
        for value in values { counts.record(value) }
        return counts.buckets
    }

    /// The value of the line that starts `series + " "`, nil when absent.
    static func value(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    @Test func aValueLandsInTheFirstBucketWhoseBoundHoldsIt() {
        var counts = HistogramCounts(bounds: [1, 2, 4])
        for value in [0.5, 1, 1.5, 4, 9] { counts.record(value) }
        #expect(counts.buckets == [2, 1, 1, 1])
        #expect(counts.sum == 16)
        #expect(counts.count == 5)
        let taken = counts.take()
        #expect(taken.buckets == [2, 1, 1, 1])
        #expect(counts.isEmpty && counts.sum == 0)
    }

    @Test func theCoordinatorSumsTwoWorkersBucketsAndRendersThemCumulative() {
        let metrics = CoordinatorMetrics()
        let name = HistogramBounds.transitionSeconds
        func report(_ values: [Double]) -> MetricsReport {
            MetricsReport(histograms: [.init(name: name, labels: ["machine_type": "Counter"], buckets: Self.buckets(values), sum: values.reduce(0, +))])
        }
        #expect(metrics.add(report([0.000_003, 0.000_003]), from: "data-1").isEmpty)
        #expect(metrics.add(report([0.002]), from: "data-1").isEmpty)
        #expect(metrics.add(report([0.000_000_5, 3]), from: "data-2").isEmpty)
        let text = String(decoding: metrics.render(CoordinatorCounts()), as: UTF8.self)
        #expect(text.contains("# TYPE \(name) histogram\n"))
        let one = #"machine_type="Counter",worker="data-1""#
        #expect(Self.value("\(name)_count{\(one)}", in: text) == 3)
        #expect(Self.value("\(name)_bucket{\(one),le=\"5e-06\"}", in: text) == 2)
        #expect(Self.value("\(name)_bucket{\(one),le=\"0.0025\"}", in: text) == 3)
        #expect(abs(Self.value("\(name)_sum{\(one)}", in: text)! - 0.002_006) < 1e-12)
        let two = #"machine_type="Counter",worker="data-2""#
        #expect(Self.value("\(name)_bucket{\(two),le=\"1e-06\"}", in: text) == 1)
        #expect(Self.value("\(name)_bucket{\(two),le=\"1.0\"}", in: text) == 1)
        #expect(Self.value("\(name)_bucket{\(two),le=\"+Inf\"}", in: text) == 2)
        // Each series' buckets never go down, and +Inf is its count.
        for labels in [one, two] {
            let cumulative = text.split(separator: "\n").filter { $0.hasPrefix("\(name)_bucket{\(labels),") }.map { Double($0.split(separator: " ").last!)! }
            #expect(cumulative.count == Self.transition.count + 1)
            #expect(zip(cumulative, cumulative.dropFirst()).allSatisfy { $0 <= $1 })
            #expect(cumulative.last == Self.value("\(name)_count{\(labels)}", in: text))
        }
    }

    @Test func badHistogramsAreRefusedSayingWhyAndTheRestIsTaken() {
        let metrics = CoordinatorMetrics()
        let name = HistogramBounds.transitionSeconds
        let good = Self.buckets([0.001])
        let problems = metrics.add(MetricsReport(
            counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 2),
                       .init(name: name, delta: 1)],  // a histogram's name as a counter
            histograms: [
                .init(name: name, buckets: [1, 2], sum: 1),  // wrong bucket count
                .init(name: name, buckets: good.map { -$0 }, sum: 0),  // negative
                .init(name: "grove_worker_made_up_seconds", buckets: good, sum: 0.001),  // unknown name
                .init(name: name, buckets: good, sum: .nan),
                .init(name: name, labels: ["worker": "x"], buckets: good, sum: 0.001),  // the coordinator's label
                .init(name: name, labels: ["machine_type": "Counter"], buckets: good, sum: 0.001),
            ]), from: "edge")
        #expect(problems.count == 6, "\(problems)")
        #expect(problems.contains { $0.contains("came with 2 buckets, not \(Self.transition.count + 1)") }, "\(problems)")
        #expect(problems.contains { $0.contains("negative bucket count") }, "\(problems)")
        #expect(problems.contains { $0.contains("'grove_worker_made_up_seconds' is not one the coordinator knows") }, "\(problems)")
        #expect(problems.contains { $0.contains("sum nan") }, "\(problems)")
        #expect(problems.contains { $0.contains("is a histogram, reported as a counter") }, "\(problems)")
        #expect(metrics.refused == 6)
        let text = String(decoding: metrics.render(CoordinatorCounts()), as: UTF8.self)
        #expect(Self.value(#"grove_worker_events_total{machine_type="Counter",worker="edge"}"#, in: text) == 2)
        #expect(Self.value("\(name)_count{machine_type=\"Counter\",worker=\"edge\"}", in: text) == 1)
        #expect(!text.contains("made_up"))
        // One set of label names per histogram, as for counters.
        #expect(metrics.add(MetricsReport(histograms: [.init(name: name, labels: ["kind": "x"], buckets: good, sum: 0.001)]), from: "edge").count == 1)
    }

    @Test func gaugesAreSetNotAdded() {
        let metrics = CoordinatorMetrics()
        let depth = MetricsReport.GaugeValue(name: "grove_worker_mailbox_depth", labels: ["machine_type": "Counter"], value: 7)
        metrics.add(MetricsReport(gauges: [depth]), from: "edge")
        var later = depth
        later.value = 2
        metrics.add(MetricsReport(gauges: [later]), from: "edge")
        let text = String(decoding: metrics.render(CoordinatorCounts()), as: UTF8.self)
        #expect(Self.value(#"grove_worker_mailbox_depth{machine_type="Counter",worker="edge"}"#, in: text) == 2)
        #expect(text.contains("# TYPE grove_worker_mailbox_depth gauge"))
    }

    @Test func theCoordinatorsQuarantinesAreExported() {
        let metrics = CoordinatorMetrics()
        let text = String(decoding: metrics.render(CoordinatorCounts(quarantines: 2)), as: UTF8.self)
        #expect(Self.value("grove_coordinator_quarantines_total", in: text) == 2)
    }

    // MARK: - The worker

    @Test func ioCallsAreCountedByRequestAndOutcomeWithTheirTimes() throws {
        var counts = WorkerCounts()
        counts.ioCall(request: "fetch", outcome: WorkerCounts.ioOutcome(nil), seconds: 0.003)
        counts.ioCall(request: "fetch", outcome: WorkerCounts.ioOutcome("timeout"), seconds: 30)
        counts.ioCall(request: "fetch", outcome: WorkerCounts.ioOutcome("my-own-code"), seconds: 0.000_2)
        counts.storeCommit(seconds: 0.000_7, writes: 3)
        let report = counts.report(types: [:])
        #expect(report.counters == [
            .init(name: "grove_worker_io_calls_total", labels: ["request": "fetch", "outcome": "error"], delta: 1),
            .init(name: "grove_worker_io_calls_total", labels: ["request": "fetch", "outcome": "ok"], delta: 1),
            .init(name: "grove_worker_io_calls_total", labels: ["request": "fetch", "outcome": "timeout"], delta: 1),
        ])
        let histograms = try #require(report.histograms)
        #expect(histograms.map(\.name) == [HistogramBounds.ioCallSeconds, HistogramBounds.storeCommitSeconds, HistogramBounds.storeCommitWrites])
        #expect(histograms[0].labels == ["request": "fetch"])
        #expect(histograms[0].buckets.reduce(0, +) == 3)
        #expect(histograms[2].buckets[2] == 1)  // 3 writes: the bucket of bound 4
        // Every histogram a worker sends is one the coordinator takes.
        for histogram in histograms { #expect(ReportedHistograms.problem(with: histogram) == nil) }
        #expect(counts == WorkerCounts())
    }

    @Test func requestTypesPastTheLimitAreNotCounted() {
        var counts = WorkerCounts()
        for index in 0...WorkerCounts.requestLimit { counts.ioCall(request: "r\(index)", outcome: "ok", seconds: 0.001) }
        #expect(counts.ioCalls.count == WorkerCounts.requestLimit)
        #expect(counts.refusedRequests == 1)
    }

    @Test func transitionsAreTimedPerMachineTypeOnlyWhileOn() throws {
        let metrics = WorkerMetrics()
        #expect(metrics.transitionClock(type: "Counter") == nil)
        metrics.turn(on: true)
        let clock = try #require(metrics.transitionClock(type: "Counter"))
        #expect(metrics.transitionClock(type: "Counter") === clock)
        // Two hosts of the type, their transitions overlapping on two threads: each is timed
        // from its own start (one shared start lost the first and timed the second twice over).
        let first = TransitionStart(), second = TransitionStart()
        first.mark()
        second.mark()
        clock.record(since: first)
        clock.record(since: second)
        clock.record(since: second)  // an end without a start counts nothing
        let report = try #require(WireJSON.decodeQuickly(MetricsReport.self, from: metrics.takeReport(types: [:])))
        let histogram = try #require(report.histograms?.first)
        #expect(histogram.name == HistogramBounds.transitionSeconds)
        #expect(histogram.labels == ["machine_type": "Counter"])
        #expect(histogram.buckets.reduce(0, +) == 2)
        #expect(ReportedHistograms.problem(with: histogram) == nil)
        // Taken: the next heartbeat carries none.
        #expect(WireJSON.decodeQuickly(MetricsReport.self, from: metrics.takeReport(types: [:]))?.histograms == nil)
    }

    @Test func theAtomicHistogramBucketsAsTheCountsDoAndLosesNothingToThreads() async throws {
        let bounds = try #require(HistogramBounds.byName[HistogramBounds.transitionSeconds])
        let histogram = AtomicHistogram(secondsBounds: bounds)
        var counts = HistogramCounts(bounds: bounds)
        // On a bound, just past it, past the last one, and zero.
        let samples: [UInt64] = [0, 250, 251, 1_000, 2_499, 2_500, 1_000_000_000, 1_000_000_001, 60_000_000_000]
        for sample in samples {
            histogram.record(nanoseconds: sample)
            counts.record(Double(sample) / 1e9)
        }
        let taken = try #require(histogram.take())
        #expect(taken.buckets == counts.buckets)
        #expect(abs(taken.sum - counts.sum) < 1e-9)
        #expect(histogram.take() == nil)
        // Eight threads at once, then one take: every sample counted once.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 8 { group.addTask { for _ in 0 ..< 10_000 { histogram.record(nanoseconds: 3_000) } } }
        }
        let together = try #require(histogram.take())
        #expect(together.buckets.reduce(0, +) == 80_000)
        #expect(abs(together.sum - 0.24) < 1e-9)
    }

    @Test func eventCountsAreSharedByAMachinesInstancesAndTakenByTheHeartbeat() throws {
        let metrics = WorkerMetrics()
        let counts = metrics.eventCounts(ofMachine: "counter")
        #expect(metrics.eventCounts(ofMachine: "counter") === counts)
        metrics.event(on: counts)  // off: not counted
        metrics.turn(on: true)
        metrics.event(on: counts)
        metrics.event(on: metrics.eventCounts(ofMachine: "counter"))
        metrics.event(on: metrics.eventCounts(ofMachine: "counter"))
        let report = try #require(WireJSON.decodeQuickly(MetricsReport.self, from: metrics.takeReport(types: ["counter": "Counter"])))
        #expect(report.counters == [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 3)])
        #expect(counts.events.load(ordering: .relaxed) == 0)
    }

    @Test func mailboxDepthsGoAsGaugesByMachineType() throws {
        let metrics = WorkerMetrics()
        metrics.turn(on: true)
        let report = try #require(WireJSON.decodeQuickly(MetricsReport.self, from: metrics.takeReport(types: [:], depths: ["Counter": 4, "AuthFlow": 0])))
        #expect(report.gauges == [.init(name: "grove_worker_mailbox_depth", labels: ["machine_type": "AuthFlow"], value: 0),
                                  .init(name: "grove_worker_mailbox_depth", labels: ["machine_type": "Counter"], value: 4)])
    }

    // MARK: - Reading the text back (fsm-load)

    @Test func theRenderedTextReadsBackWithQuantilesFromTheBuckets() {
        let metrics = CoordinatorMetrics()
        let name = HistogramBounds.transitionSeconds
        // 90 transitions of 3 µs on one worker, 10 of 0.3 ms on the other.
        metrics.add(MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 90)],
                                  histograms: [.init(name: name, labels: ["machine_type": "Counter"], buckets: Self.buckets(Array(repeating: 0.000_003, count: 90)), sum: 0.000_27)]),
                    from: "data-1")
        metrics.add(MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: 10)],
                                  histograms: [.init(name: name, labels: ["machine_type": "Counter"], buckets: Self.buckets(Array(repeating: 0.000_3, count: 10)), sum: 0.003)]),
                    from: "data-2")
        let text = MetricsText(String(decoding: metrics.render(CoordinatorCounts(routed: 100)), as: UTF8.self))
        #expect(text.sum("grove_coordinator_requests_routed_total") == 100)
        #expect(text.sum("grove_worker_events_total", by: "worker") == ["data-1": 90, "data-2": 10])
        let buckets = text.buckets(name)
        #expect(buckets.count == Self.transition.count + 1)
        #expect(buckets.last?.count == 100)
        // p50 inside (2.5 µs, 5 µs]; p99 inside (250 µs, 500 µs].
        let p50 = MetricsText.quantile(0.5, of: buckets)
        let p99 = MetricsText.quantile(0.99, of: buckets)
        #expect(p50.map { $0 > 0.000_002_5 && $0 <= 0.000_005 } == true, "\(String(describing: p50))")
        #expect(p99.map { $0 > 0.000_25 && $0 <= 0.000_5 } == true, "\(String(describing: p99))")
        // A difference of two scrapes holds only what came between them.
        #expect(MetricsText.quantile(0.5, of: MetricsText.difference(buckets, buckets)) == nil)
    }

    @Test func labelValuesWithEscapesAndUnreadableLinesAreHandled() {
        let text = MetricsText("# TYPE x counter\nx{a=\"q\\\"uote\",b=\"1\"} 3\nnot a sample line\ny 2.5\nz{a=\"unterminated} 1\n")
        #expect(text.samples == [.init(name: "x", labels: ["a": "q\"uote", "b": "1"], value: 3), .init(name: "y", labels: [:], value: 2.5)])
    }
}
