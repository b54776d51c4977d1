/// The fixed bucket bounds of every histogram a worker reports, which both sides know: the
/// worker counts into them and sends one count per bucket, the coordinator adds the counts up
/// and renders them (docs/PROTOCOL.md, "Heartbeats"). Changing a name's bounds is a protocol
/// change: a report whose bucket count does not match is refused.
public enum HistogramBounds {
    /// Seconds a machine's `update` (its transition) took, by machine type.
    public static let transitionSeconds = "grove_worker_transition_seconds"
    /// Seconds an io call took as the machine that made it saw it, by request type.
    public static let ioCallSeconds = "grove_worker_io_call_seconds"
    /// Seconds a store commit took.
    public static let storeCommitSeconds = "grove_worker_store_commit_seconds"
    /// Writes in a store commit: records, journal entries, removals and dead letters.
    public static let storeCommitWrites = "grove_worker_store_commit_writes"

    /// Upper bounds (`le`) by histogram name, ascending; `+Inf` is implied.
    public static let byName: [String: [Double]] = [
        transitionSeconds: [0.000_000_25, 0.000_000_5, 0.000_001, 0.000_002_5, 0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5,
                            0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
        ioCallSeconds: [0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        storeCommitSeconds: [0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
        storeCommitWrites: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384],
    ]

    /// The histogram names a report may carry.
    public static var names: Dictionary<String, [Double]>.Keys { byName.keys }
}

/// One histogram's counts against fixed bounds: a bucket per bound and one past the last, not
/// cumulative (a value lands in one bucket), and the sum. What a worker counts into per event
/// (no allocation once made) and what the coordinator adds reports into.
package struct HistogramCounts: Equatable, Sendable {
    package let bounds: [Double]
    package private(set) var buckets: [Int]
    package private(set) var sum: Double = 0

    package init(bounds: [Double]) {
        self.bounds = bounds
        buckets = Array(repeating: 0, count: bounds.count + 1)
    }

    package var count: Int { buckets.reduce(0, +) }
    package var isEmpty: Bool { buckets.allSatisfy { $0 == 0 } }

    /// Counts `value` in the first bucket whose bound is at least `value`.
    package mutating func record(_ value: Double) {
        var index = 0
        while index < bounds.count, bounds[index] < value { index += 1 }
        buckets[index] += 1
        sum += value
    }

    /// Adds a report's counts; the caller checked that they fit (``MetricsReport/HistogramDelta``).
    package mutating func add(buckets more: [Int], sum more_: Double) {
        for index in buckets.indices { buckets[index] += more[index] }
        sum += more_
    }

    /// The counts so far, and nothing counted after.
    package mutating func take() -> (buckets: [Int], sum: Double) {
        defer {
            for index in buckets.indices { buckets[index] = 0 }
            sum = 0
        }
        return (buckets, sum)
    }
}
