@_spi(GroveInternal) import GroveWire
import GroveCluster
import Synchronization

/// What a worker counts for the topology's metrics, by machine (the topology's name, bounded by
/// it: never a keyed instance's key) and by io request type (the types compiled into the
/// worker, capped at ``requestLimit``), until its next heartbeat takes them as a
/// ``MetricsReport`` (docs/ARCHITECTURE.md, "Metrics"). Pure.
struct WorkerCounts: Equatable {
    /// Events handed to an instance (answered or no-wait), by machine.
    var events: [String: Int] = [:]
    /// Events whose machine did not handle them (`update` returned `.unhandled`), by machine.
    var unhandled: [String: Int] = [:]
    /// io calls its machines made that ended, by request type, then outcome (``ioOutcome(_:)``).
    var ioCalls: [String: [String: Int]] = [:]
    /// How long they took, by request type.
    var ioSeconds: [String: HistogramCounts] = [:]
    /// Store commits: how long each took, and how many writes each held.
    var commitSeconds = HistogramCounts(bounds: HistogramBounds.byName[HistogramBounds.storeCommitSeconds]!)
    var commitWrites = HistogramCounts(bounds: HistogramBounds.byName[HistogramBounds.storeCommitWrites]!)
    /// io calls not counted because ``requestLimit`` request types were counted already.
    var refusedRequests = 0
    /// Requests clients sent to the worker's direct endpoint (each envelope of a batch one).
    var directRequests = 0
    /// Direct requests answered `busy` (the worker holds too many, or the client does not read).
    var directBusy = 0
    /// Direct requests answered `moved`, by reason (docs/DIRECT-ROUTES.md, 1.4).
    var directMoved: [String: Int] = [:]

    /// Distinct `moved` reasons counted between two reports: the worker gives five; a guard
    /// against a label without bound, not a limit anyone meets.
    static let reasonLimit = 16

    /// Distinct io request types counted between two reports; more are not counted (a
    /// worker's handlers are compiled in, so this is a guard, not a limit anyone meets).
    static let requestLimit = 256

    /// The outcomes an io call is counted under: `ok`, a code Grove names, or `error` for a
    /// handler's own code (unbounded, so not a label).
    static let outcomes: Set<String> = ["cancelled", "timeout", "busy", "no-handler", "handler-failed", "worker-lost",
                                        "coordinator-lost", "codec", "interrupted"]

    /// `code`: the failure's code, nil for a response.
    static func ioOutcome(_ code: String?) -> String {
        guard let code else { return "ok" }
        return outcomes.contains(code) ? code : "error"
    }

    mutating func ioCall(request: String, outcome: String, seconds: Double) {
        guard ioCalls[request] != nil || ioCalls.count < Self.requestLimit else {
            refusedRequests += 1
            return
        }
        ioCalls[request, default: [:]][outcome, default: 0] += 1
        ioSeconds[request, default: HistogramCounts(bounds: HistogramBounds.byName[HistogramBounds.ioCallSeconds]!)].record(seconds)
    }

    mutating func countMoved(reason: String) {
        guard directMoved[reason] != nil || directMoved.count < Self.reasonLimit else { return }
        directMoved[reason, default: 0] += 1
    }

    mutating func storeCommit(seconds: Double, writes: Int) {
        commitSeconds.record(seconds)
        commitWrites.record(Double(writes))
    }

    /// The counts as deltas labelled with each machine's type (`types`: machine name → type;
    /// a machine it does not know is reported under its name), and nothing counted after.
    mutating func report(types: [String: String]) -> MetricsReport {
        var counters: [String: [String: Int]] = [:]
        for (name, table) in [("grove_worker_events_total", events), ("grove_worker_events_unhandled_total", unhandled)] {
            for (machine, count) in table where count > 0 {
                counters[name, default: [:]][types[machine] ?? machine, default: 0] += count
            }
        }
        var deltas = counters.keys.sorted().flatMap { name in
            counters[name]!.keys.sorted().map { type in
                MetricsReport.CounterDelta(name: name, labels: ["machine_type": type], delta: counters[name]![type]!)
            }
        }
        for request in ioCalls.keys.sorted() {
            for outcome in ioCalls[request]!.keys.sorted() {
                deltas.append(.init(name: "grove_worker_io_calls_total", labels: ["request": request, "outcome": outcome],
                                    delta: ioCalls[request]![outcome]!))
            }
        }
        if directRequests > 0 {
            deltas.append(.init(name: "grove_worker_direct_requests_total", labels: [:], delta: directRequests))
        }
        if directBusy > 0 { deltas.append(.init(name: "grove_worker_direct_busy_total", labels: [:], delta: directBusy)) }
        for reason in directMoved.keys.sorted() {
            deltas.append(.init(name: "grove_worker_direct_moved_total", labels: ["reason": reason], delta: directMoved[reason]!))
        }
        var histograms: [MetricsReport.HistogramDelta] = ioSeconds.keys.sorted().map { request in
            .init(name: HistogramBounds.ioCallSeconds, labels: ["request": request], buckets: ioSeconds[request]!.buckets,
                  sum: ioSeconds[request]!.sum)
        }
        if !commitSeconds.isEmpty {
            histograms.append(.init(name: HistogramBounds.storeCommitSeconds, buckets: commitSeconds.buckets, sum: commitSeconds.sum))
            histograms.append(.init(name: HistogramBounds.storeCommitWrites, buckets: commitWrites.buckets, sum: commitWrites.sum))
        }
        self = WorkerCounts()
        return MetricsReport(counters: deltas, histograms: histograms.isEmpty ? nil : histograms)
    }
}
