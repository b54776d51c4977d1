@_spi(GroveInternal) import GroveWire
import GroveCluster
import Synchronization

/// What a worker counts for the topology's metrics, by machine (the topology's name, bounded by
/// it: never a keyed instance's key), until its next heartbeat takes them as a
/// ``MetricsReport`` (docs/ARCHITECTURE.md, "Metrics"). Pure.
struct WorkerCounts: Equatable {
    /// Events handed to an instance (answered or no-wait), by machine.
    var events: [String: Int] = [:]
    /// Events whose machine did not handle them (`update` returned `.unhandled`), by machine.
    var unhandled: [String: Int] = [:]

    /// The counts as deltas labelled with each machine's type (`types`: machine name → type;
    /// a machine it does not know is reported under its name), and nothing counted after.
    mutating func report(types: [String: String]) -> MetricsReport {
        var counters: [String: [String: Int]] = [:]
        for (name, table) in [("grove_worker_events_total", events), ("grove_worker_events_unhandled_total", unhandled)] {
            for (machine, count) in table where count > 0 {
                counters[name, default: [:]][types[machine] ?? machine, default: 0] += count
            }
        }
        self = WorkerCounts()
        return MetricsReport(counters: counters.keys.sorted().flatMap { name in
            counters[name]!.keys.sorted().map { type in
                MetricsReport.CounterDelta(name: name, labels: ["machine_type": type], delta: counters[name]![type]!)
            }
        })
    }
}

/// ``WorkerCounts`` shared by the threads that count (the worker's loop, the hosts answering
/// events). Off until a welcome asks for metrics: then each count is a lock and an add, and off
/// it is one relaxed load (``isOn``).
final class WorkerMetrics: Sendable {
    private let on = Atomic<Bool>(false)
    private let counts = Mutex(WorkerCounts())

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

    /// The heartbeat's payload: what was counted since the last one, or empty when off.
    func takeReport(types: @autoclosure () -> [String: String]) -> [UInt8] {
        guard isOn else { return [] }
        let types = types()
        let report = counts.withLock { $0.report(types: types) }
        return (try? WireJSON.encode(report)) ?? []
    }
}
