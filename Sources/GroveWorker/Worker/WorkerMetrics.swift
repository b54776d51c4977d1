@_spi(GroveInternal) import GroveWire
import GroveCluster
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``WorkerCounts`` shared by the threads that count (the worker's loop, the hosts answering
/// events, io calls' tasks), and the transition clocks of its machine types. Off until a welcome
/// asks for metrics: then each count is a lock and an add, and off it is one relaxed load
/// (``isOn``).
final class WorkerMetrics: Sendable {
    private let on = Atomic<Bool>(false)
    private let counts = Mutex(WorkerCounts())
    /// One per machine type, made when the first host of the type is (never per event).
    private let clocks = Mutex<[String: TransitionClock]>([:])

    var isOn: Bool { on.load(ordering: .relaxed) }

    func turn(on: Bool) { self.on.store(on, ordering: .relaxed) }

    func event(at address: String) {
        guard isOn else { return }
        let machine = MachineAddress.machine(of: address)
        counts.withLock { $0.events[machine, default: 0] += 1 }
    }

    func unhandled(at address: String) {
        guard isOn else { return }
        let machine = MachineAddress.machine(of: address)
        counts.withLock { $0.unhandled[machine, default: 0] += 1 }
    }

    /// An io call of type `request` ended, after `seconds`; `failure`: its failure's code, nil
    /// for a response.
    func ioCall(request: String, failure: String?, seconds: Double) {
        guard isOn else { return }
        let outcome = WorkerCounts.ioOutcome(failure)
        counts.withLock { $0.ioCall(request: request, outcome: outcome, seconds: seconds) }
    }

    /// A store commit of `writes` writes took `seconds`.
    func storeCommit(seconds: Double, writes: Int) {
        guard isOn else { return }
        counts.withLock { $0.storeCommit(seconds: seconds, writes: writes) }
    }

    /// The clock a new host of machine type `type` times its transitions on, or nil when
    /// metrics are off (the host then has nothing more to call per event).
    func transitionClock(type: String) -> TransitionClock? {
        guard isOn else { return nil }
        return clocks.withLock { clocks in
            if let clock = clocks[type] { return clock }
            let clock = TransitionClock()
            clocks[type] = clock
            return clock
        }
    }

    /// The heartbeat's payload: what was counted since the last one, or empty when off.
    /// - Parameters:
    ///   - types: Machine name → type, for the counts' labels.
    ///   - depths: The mailbox depths by machine type, sampled now (``depths(of:types:)``).
    func takeReport(types: @autoclosure () -> [String: String], depths: @autoclosure () -> [String: Int] = [:]) -> [UInt8] {
        guard isOn else { return [] }
        let types = types()
        var report = counts.withLock { $0.report(types: types) }
        let depths = depths()
        if !depths.isEmpty {
            report.gauges = depths.keys.sorted().map { .init(name: "grove_worker_mailbox_depth", labels: ["machine_type": $0], value: depths[$0]!) }
        }
        let clocks = clocks.withLock { $0 }
        var transitions: [MetricsReport.HistogramDelta] = []
        for type in clocks.keys.sorted() {
            guard let taken = clocks[type]!.take() else { continue }
            transitions.append(.init(name: HistogramBounds.transitionSeconds, labels: ["machine_type": type], buckets: taken.buckets,
                                     sum: taken.sum))
        }
        if !transitions.isEmpty { report.histograms = transitions + (report.histograms ?? []) }
        return (try? WireJSON.encode(report)) ?? []
    }

    /// The events taken and not yet run by the instances of each machine type, summed, as
    /// the heartbeat leaves (a type placed here without instances: 0). A lock per instance,
    /// once a heartbeat, on the worker's loop.
    static func depths(of instances: some Collection<any HostedMachine>, types: some Sequence<String>) -> [String: Int] {
        var depths = Dictionary(types.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
        for instance in instances where !instance.type.isEmpty {
            depths[instance.type, default: 0] += instance.queuedEventCount
        }
        return depths
    }

    /// Nanoseconds on the monotonic clock: a vDSO read, no allocation.
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}

/// The transition times of one machine type on a worker: ``start()`` before `update`,
/// ``stop()`` after (a host's ``RunRecorder``), counted into a histogram of fixed bounds. A
/// lock and an add per transition; its hosts run on the worker's loop, so it is not contended
/// but by the heartbeat that takes the counts.
final class TransitionClock: Sendable {
    private let seconds = Mutex(HistogramCounts(bounds: HistogramBounds.byName[HistogramBounds.transitionSeconds]!))

    /// A transition that began at `start` ended now: one sample, one lock. A start never
    /// marked, or marked by a clock that went back, is not counted.
    func record(since start: TransitionStart) {
        let now = WorkerMetrics.nanoseconds()
        let began = start.take()
        guard began != 0, now >= began else { return }
        seconds.withLock { $0.record(Double(now - began) / 1e9) }
    }

    /// What was counted since the last take, nil when nothing was.
    func take() -> (buckets: [Int], sum: Double)? {
        seconds.withLock { seconds in seconds.isEmpty ? nil : seconds.take() }
    }
}

/// When one host's transition under way began: written and read by that host only (its
/// transitions run one at a time, possibly on different threads one after another), so a
/// relaxed atomic is enough.
final class TransitionStart: Sendable {
    private let nanoseconds = Atomic<UInt64>(0)

    func mark() { nanoseconds.store(WorkerMetrics.nanoseconds(), ordering: .relaxed) }

    /// The mark, cleared.
    func take() -> UInt64 { nanoseconds.exchange(0, ordering: .relaxed) }
}
