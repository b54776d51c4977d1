import Synchronization

/// A histogram of durations against fixed bounds whose samples are relaxed atomic adds: a
/// bucket's count and the sum in nanoseconds, with the bucket found among integer bounds. What
/// a worker counts into per transition; ``take()`` (the heartbeat's) reads and clears each
/// count in turn, so a sample that lands during a take may show in this report's sum and the
/// next one's bucket, never lost and never counted twice.
final class AtomicHistogram: @unchecked Sendable {
    /// Upper bounds in nanoseconds, ascending; a sample past the last lands in the last bucket.
    private let bounds: [UInt64]
    /// `bounds.count + 1` counts, made and freed with the histogram, only touched atomically.
    private let buckets: UnsafeMutablePointer<Atomic<Int>>
    private let bucketCount: Int
    private let sumNanoseconds = Atomic<UInt64>(0)

    /// - Parameter secondsBounds: The bounds in seconds, as ``HistogramBounds`` names them.
    init(secondsBounds: [Double]) {
        bounds = secondsBounds.map { UInt64(($0 * 1e9).rounded()) }
        bucketCount = secondsBounds.count + 1
        buckets = .allocate(capacity: bucketCount)
        for index in 0 ..< bucketCount { (buckets + index).initialize(to: Atomic(0)) }
    }

    deinit {
        buckets.deinitialize(count: bucketCount)
        buckets.deallocate()
    }

    /// Counts a sample of `nanoseconds` in the first bucket whose bound is at least it.
    func record(nanoseconds: UInt64) {
        var index = 0
        while index < bounds.count, bounds[index] < nanoseconds { index += 1 }
        buckets[index].add(1, ordering: .relaxed)
        sumNanoseconds.add(nanoseconds, ordering: .relaxed)
    }

    /// The counts and the sum in seconds since the last take, nil when nothing was counted.
    func take() -> (buckets: [Int], sum: Double)? {
        var taken = [Int](repeating: 0, count: bucketCount)
        var any = false
        for index in 0 ..< bucketCount {
            taken[index] = buckets[index].exchange(0, ordering: .relaxed)
            any = any || taken[index] > 0
        }
        let sum = sumNanoseconds.exchange(0, ordering: .relaxed)
        guard any || sum > 0 else { return nil }
        return (taken, Double(sum) / 1e9)
    }
}
