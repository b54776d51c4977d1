@_spi(GroveInternal) import GroveWire
import GroveCluster
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``WorkerCounts`` shared by the threads that count (the worker's loop, the hosts answering
/// events, io calls' tasks), the event counts of its machines and the transition clocks of its
/// machine types. Off until a welcome asks for metrics, and off each count is one relaxed load
/// (``isOn``). On, what happens per event is a relaxed atomic add on counts its host holds
/// (``MachineEventCounts``) and, per transition, two clock reads and three atomic adds
/// (``TransitionClock``); what happens per io call or store commit is a lock and an add.
final class WorkerMetrics: Sendable {
    private let on = Atomic<Bool>(false)
    private let counts = Mutex(WorkerCounts())
    /// One per machine name, made when the first host of the machine is (never per event).
    private let machines = Mutex<[String: MachineEventCounts]>([:])
    /// One per machine type, made when the first host of the type is (never per event).
    private let clocks = Mutex<[String: TransitionClock]>([:])

    var isOn: Bool { on.load(ordering: .relaxed) }

    func turn(on: Bool) { self.on.store(on, ordering: .relaxed) }

    /// The event counts of machine `name` (a keyed machine's instances share them), which a
    /// host keeps from its start so that counting an event is one atomic add, on or off.
    func eventCounts(ofMachine name: String) -> MachineEventCounts {
        machines.withLock { machines in
            if let counts = machines[name] { return counts }
            let counts = MachineEventCounts()
            machines[name] = counts
            return counts
        }
    }

    /// An event was handed to an instance whose machine's counts are `counts`.
    @inline(__always)
    func event(on counts: MachineEventCounts) {
        guard isOn else { return }
        counts.events.add(1, ordering: .relaxed)
    }

    /// The machine at `address` did not handle an event (rare: a lock and a lookup).
    func unhandled(at address: String) {
        guard isOn else { return }
        eventCounts(ofMachine: MachineAddress.machine(of: address)).unhandled.add(1, ordering: .relaxed)
    }

    /// An io call of type `request` ended, after `seconds`; `failure`: its failure's code, nil
    /// for a response.
    func ioCall(request: String, failure: String?, seconds: Double) {
        guard isOn else { return }
        let outcome = WorkerCounts.ioOutcome(failure)
        counts.withLock { $0.ioCall(request: request, outcome: outcome, seconds: seconds) }
    }

    /// `count` requests arrived on the direct endpoint (a batch's envelopes each one).
    func directRequests(_ count: Int) {
        guard isOn, count > 0 else { return }
        counts.withLock { $0.directRequests += count }
    }

    /// A direct request was answered `busy`, or `moved` with `reason` (docs/DIRECT-ROUTES.md, 1.4).
    func directRefused(busy: Bool = false, movedBecause reason: String? = nil) {
        guard isOn, busy || reason != nil else { return }
        counts.withLock { counts in
            if busy { counts.directBusy += 1 }
            if let reason { counts.countMoved(reason: reason) }
        }
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
        let machines = machines.withLock { $0 }
        var report = counts.withLock { counts in
            for (name, machine) in machines {
                let events = machine.events.exchange(0, ordering: .relaxed)
                let unhandled = machine.unhandled.exchange(0, ordering: .relaxed)
                if events > 0 { counts.events[name, default: 0] += events }
                if unhandled > 0 { counts.unhandled[name, default: 0] += unhandled }
            }
            return counts.report(types: types)
        }
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

/// The transition times of one machine type on a worker: ``TransitionStart/mark()`` before
/// `update`, ``record(since:)`` after (a host's ``RunRecorder``), counted into a histogram of
/// fixed bounds (``AtomicHistogram``): no lock, so the hosts of the type that run at once on
/// several threads and the heartbeat that takes the counts never wait for each other.
final class TransitionClock: Sendable {
    private let seconds = AtomicHistogram(secondsBounds: HistogramBounds.byName[HistogramBounds.transitionSeconds]!)

    /// A transition that began at `start` ended now: one sample. A start never marked, or
    /// marked by a clock that went back, is not counted.
    func record(since start: TransitionStart) {
        let now = WorkerMetrics.nanoseconds()
        let began = start.take()
        guard began != 0, now >= began else { return }
        seconds.record(nanoseconds: now - began)
    }

    /// What was counted since the last take, nil when nothing was.
    func take() -> (buckets: [Int], sum: Double)? { seconds.take() }
}

/// The events handed to the instances of one machine on a worker, and those its `update` did
/// not handle, since the last heartbeat: relaxed atomics, added to by the hosts and taken by
/// the heartbeat (``WorkerMetrics/takeReport(types:depths:)``).
final class MachineEventCounts: Sendable {
    let events = Atomic<Int>(0)
    let unhandled = Atomic<Int>(0)
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
