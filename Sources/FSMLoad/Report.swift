import Foundation
import GroveWire

/// One measured run, as printed and as `--json`.
struct RunReport: Codable, Sendable {
    var mode: String
    /// `direct` when the events went straight to the workers (`--route direct`); absent for the
    /// coordinator road.
    var route: String?
    var eventsPerSecond: Double
    var sent: Int
    /// ZeroMQ messages the events left in (batching puts several in one).
    var messages: Int
    var acknowledged: Int
    var failed: Int
    var lost: Int
    var errors: [String: Int]
    var seconds: Double
    var latencyMicros: [String: UInt64]
    var cpuSeconds: [String: Double]
    /// Processes that were new after the run (a worker killed and restarted during it): their
    /// `cpuSeconds` are the new process's alone.
    var restarted: [String]?
    /// This run's events/s over the raw baseline's in the same report, when one ran unpaced.
    var shareOfRaw: Double?
    /// With `--rate` (both paced alike): this run's p50 round trip over the raw baseline's.
    var p50OverRaw: Double?
    /// With `--retry`: copies sent again with their event's idempotency key (not in `sent`).
    var resent: Int?
    /// With `--retry`: events acknowledged by an `already-applied` answer to a copy.
    var appliedEarlier: Int?
    /// On the direct road: how often a connection asked where the machine lives now, after a
    /// worker answered `moved` or `worker-lost` (or, with `--retry`, left a copy unanswered).
    var relocations: Int?
    /// With `--verify`: acknowledged events against the counts' growth.
    var verification: Verification?
    /// The topology's own figures for the run, from its metrics endpoint, when it has one.
    var topologyFigures: TopologyFigures?

    /// The run's name in the text report: its mode, and its road when it is not the coordinator.
    var label: String { route.map { "\(mode)/\($0)" } ?? mode }

    init(mode: LoadPlan.Mode, result: ConnectionResult, cpu: [String: Double], restarted: [String] = []) {
        self.mode = mode.rawValue
        sent = result.sent
        messages = result.messages
        acknowledged = result.acknowledged
        failed = result.failed
        lost = result.sent - result.acknowledged - result.failed
        errors = result.errors
        resent = result.resent > 0 ? result.resent : nil
        appliedEarlier = result.appliedEarlier > 0 ? result.appliedEarlier : nil
        relocations = result.relocations > 0 ? result.relocations : nil
        seconds = result.elapsed.seconds
        eventsPerSecond = seconds > 0 ? Double(result.acknowledged) / seconds : 0
        latencyMicros = [
            "p50": result.latency.valueAtPercentile(50), "p90": result.latency.valueAtPercentile(90),
            "p99": result.latency.valueAtPercentile(99), "p999": result.latency.valueAtPercentile(99.9),
            "max": result.latency.max,
        ]
        cpuSeconds = cpu.mapValues { ($0 * 100).rounded() / 100 }
        self.restarted = restarted.isEmpty ? nil : restarted
    }
}

struct LoadReport: Codable, Sendable {
    var topology: String
    var endpoint: String
    /// The machine driven (`--machine`).
    var machine: String
    var connections: Int
    var addresses: Int
    var payloadBytes: Int
    var window: Int
    var batch: Int
    var codec: String
    /// Target events/s over all connections (`--rate`), or nil: as fast as the window allows.
    var rate: Double?
    /// How long a paced connection held events to batch them (`--linger`), or nil.
    var lingerMicros: Int?
    /// Seconds of unreported load before each run (`--warmup`), or nil.
    var warmupSeconds: Double?
    /// Seconds per run, or nil with `--count`.
    var durationSeconds: Double?
    var countPerConnection: Int?
    var runs: [RunReport]
    var spawn: SpawnReport?

    func text() -> String {
        var lines = ["fsm-load: topology '\(topology)' at \(endpoint); machine '\(machine)', \(connections) connection(s), \(addresses) address(es), "
            + "\(payloadBytes)-byte payloads, window \(window), \(batch) event(s) per message, \(codec) codec"
            + (rate.map { ", paced at \(Int($0)) events/s" } ?? "")
            + (lingerMicros.map { ", held up to \($0) µs to batch" } ?? "")
            + (warmupSeconds.map { String(format: ", each run after a %g s warm-up", $0) } ?? "")]
        lines.append(pad("run", 13) + pad("events/s", 12) + pad("p50 µs", 9) + pad("p90", 9) + pad("p99", 9) + pad("p99.9", 9)
            + pad("sent", 10) + pad("lost", 6) + "failed")
        for run in runs {
            lines.append(pad(run.label, 13) + pad(String(format: "%.0f", run.eventsPerSecond), 12)
                + pad("\(run.latencyMicros["p50"] ?? 0)", 9) + pad("\(run.latencyMicros["p90"] ?? 0)", 9)
                + pad("\(run.latencyMicros["p99"] ?? 0)", 9) + pad("\(run.latencyMicros["p999"] ?? 0)", 9)
                + pad("\(run.sent)", 10) + pad("\(run.lost)", 6) + "\(run.failed)"
                + (run.errors.isEmpty ? "" : " " + run.errors.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")))
        }
        let shares = runs.compactMap { run in run.shareOfRaw.map { String(format: "%@ %.1f%%", run.label, $0 * 100) } }
        if !shares.isEmpty { lines.append("grove / raw (events/s): " + shares.joined(separator: ", ")) }
        let ratios = runs.compactMap { run in run.p50OverRaw.map { String(format: "%@ %.2fx", run.label, $0) } }
        if !ratios.isEmpty { lines.append("grove / raw (p50 round trip, paced alike): " + ratios.joined(separator: ", ")) }
        if batch > 1 {
            let sizes = runs.map { String(format: "%@ %.1f", $0.label, Double($0.sent) / Double(max(1, $0.messages))) }
            lines.append("events per message: " + sizes.joined(separator: ", "))
        }
        for run in runs where !run.cpuSeconds.isEmpty {
            let restarted = Set(run.restarted ?? [])
            let cpu = run.cpuSeconds.sorted { $0.key < $1.key }.map {
                String(format: "%@ %.2f", $0.key, $0.value) + (restarted.contains($0.key) ? " (restarted during the run: its new process only)" : "")
            }
            lines.append("cpu seconds (\(run.label)): " + cpu.joined(separator: ", "))
        }
        for run in runs {
            if let figures = run.topologyFigures { lines.append("topology's own figures (\(run.label)): " + figures.text) }
        }
        for run in runs {
            if let resent = run.resent { lines.append("resent (\(run.label)): \(resent) copies with their event's idempotency key") }
            if let relocations = run.relocations {
                lines.append("located again (\(run.label)): \(relocations) times, after a worker said it no longer serves an address")
            }
            if let earlier = run.appliedEarlier {
                lines.append("applied earlier (\(run.label)): \(earlier) copies answered already-applied, counted acknowledged once")
            }
            if let verification = run.verification { lines.append("verified (\(run.label)): " + verification.text) }
        }
        if let spawn {
            lines.append("spawned \(spawn.instances) instances in \(String(format: "%.2f", spawn.seconds)) s; resident memory "
                + String(format: "+%.1f MiB, %.0f bytes per idle instance", Double(spawn.residentBytesAdded) / 1_048_576, spawn.bytesPerInstance))
        }
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

struct SpawnReport: Codable, Sendable {
    var instances: Int
    var seconds: Double
    var residentBytesAdded: Int
    var bytesPerInstance: Double
}
