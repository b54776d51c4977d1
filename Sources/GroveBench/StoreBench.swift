import Foundation
import GroveWorker

/// `grove-bench --store`: group commits of the SQLite machine store as a worker makes them, one
/// per received batch: `records` upserts of `snapshotBytes`-byte snapshots (durability `state`),
/// or as many journal appends (`journal`), with each flush.
enum StoreBench {
    struct Row {
        var workload: String
        var flush: StoreFlush
        var commitsPerSecond: Double
        var writesPerSecond: Double
        var medianCommit: Duration
    }

    /// Machines the upserts rotate over, so that after the first pass every upsert replaces.
    static let instances = 10_000

    static func run(records: Int, snapshotBytes: Int, seconds: Double, runs: Int) throws -> [Row] {
        var rows: [Row] = []
        for flush in [StoreFlush.process, .disk] {
            for workload in ["state", "journal"] {
                var rates: [Double] = []
                var latencies: [Duration] = []
                for _ in 0..<runs {
                    let (rate, median) = try measure(workload, flush: flush, records: records, bytes: snapshotBytes, seconds: seconds)
                    rates.append(rate)
                    latencies.append(median)
                }
                let rate = rates.sorted()[rates.count / 2]
                rows.append(Row(workload: workload, flush: flush, commitsPerSecond: rate, writesPerSecond: rate * Double(records),
                                medianCommit: latencies.sorted()[latencies.count / 2]))
            }
        }
        return rows
    }

    /// Commits for `seconds` into a fresh store; the commits per second and the median commit.
    private static func measure(
        _ workload: String, flush: StoreFlush, records: Int, bytes: Int, seconds: Double
    ) throws -> (Double, Duration) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grove-store-bench-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteMachineStore.open(directory: directory.path, worker: "bench")
        defer { store.close() }
        let snapshot = [UInt8](repeating: 0x5A, count: bytes)
        var next = 0
        var sequence: UInt64 = 0
        var times: [Duration] = []
        let clock = ContinuousClock()
        let start = clock.now
        let budget = Duration.seconds(seconds)
        while clock.now - start < budget || times.count < 5 {
            var commit = StoreCommit()
            commit.flush = flush
            if workload == "state" {
                commit.records = (0..<records).map { _ in
                    next += 1
                    return MachineRecord(address: "counter/\(next % instances)", type: "Counter", snapshot: snapshot, sequence: 0)
                }
            } else {
                commit.journal = (0..<records).map { index in
                    if index == 0 { sequence += 1 }
                    next += 1
                    return JournalEntry(address: "counter/\(next % instances)", sequence: sequence, event: snapshot, time: 0)
                }
            }
            let began = clock.now
            try store.commit(commit)
            times.append(clock.now - began)
        }
        let elapsed = clock.now - start
        let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(times.count) / total, times.sorted()[times.count / 2])
    }

    static func table(_ rows: [Row], records: Int, bytes: Int, runs: Int) -> String {
        var lines = [
            "SQLite machine store: one commit = \(records) \(bytes)-byte writes (state: upserts over \(instances) machines; "
                + "journal: appends), median of \(runs) runs",
            "workload  flush      commits/s    writes/s    median commit",
        ]
        for row in rows {
            let flush = row.flush == .disk ? "disk" : "process"
            lines.append(
                row.workload.padding(toLength: 10, withPad: " ", startingAt: 0) + flush.padding(toLength: 9, withPad: " ", startingAt: 0)
                    + String(format: "%11.0f %11.0f %13.2f ms", row.commitsPerSecond, row.writesPerSecond,
                             Double(row.medianCommit.components.attoseconds) / 1e15 + Double(row.medianCommit.components.seconds) * 1e3))
        }
        return lines.joined(separator: "\n")
    }
}
