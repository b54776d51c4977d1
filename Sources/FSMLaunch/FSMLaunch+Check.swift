import ArgumentParser
import Foundation
import GroveCluster
import GroveCoordinator

extension FSMLaunch {
    /// `--check`: the topology is valid, every executable it names is found and every key file read.
    func printCheck(_ topology: Topology) throws {
        var problems: [String] = []
        for (index, group) in topology.workers.enumerated() {
            if group.external, !group.arguments.isEmpty {
                problems.append("$.workers[\(index)].arguments: external workers are started by hand, so these arguments would be ignored; pass them when you start \(group.name)")
            } else if !group.external, Supervisor.findExecutable(group.executable, besides: Self.executableDirectory()) == nil {
                problems.append("$.workers[\(index)].executable: '\(group.executable)' was not found next to fsm-launch or on PATH; build it or fix the name")
            }
        }
        do {
            _ = try ClusterKeys(topology: topology, relativeTo: topologyDirectory)
        } catch {
            problems.append(error.description)
        }
        do {
            try Coordinator.prepareLocalEndpoints(of: topology, creating: false)
        } catch {
            problems.append(error.description)
        }
        problems += topology.directSocketProblems()
        problems += topology.directoryProblems(dataDirectory: dataDirectory(of: topology, besides: topologyDirectory),
                                               auditDirectory: topology.auditDirectory(besides: topologyDirectory))
        guard problems.isEmpty else {
            for problem in problems { printError("\(topology.name): \(problem)") }
            throw ExitCode(2)
        }
        print("ok: topology '\(topology.name)': " + Self.count(topology.workerInstances.count, "worker instance")
              + " in " + Self.count(topology.workers.count, "group") + ", " + Self.count(topology.machines.count, "machine")
              + ", " + Self.count(topology.io.count, "io placement") + ", " + Self.count(topology.routes.count, "route"))
        let endpoints = topology.coordinator
        print("coordinator: clients \(endpoints.clients), workers \(endpoints.workers), events \(endpoints.events)")
        for line in Self.machineLines(topology) { print(line) }
        print(Self.durabilitySummary(topology, dataDirectory: dataDirectory(of: topology, besides: topologyDirectory)))
        print(Self.directSummary(topology))
        print(Self.auditSummary(topology, auditDirectory: topology.auditDirectory(besides: topologyDirectory)))
        print(Self.poisonSummary(topology))
        print(topology.queuesSummary)
        print(topology.limits.summary)
    }

    /// `--check`'s line about crash containment: after how many crashes a pattern is
    /// quarantined and a client key suspended, and which supervised groups would give up first.
    static func poisonSummary(_ topology: Topology) -> String {
        let poison = topology.poison
        func after(_ count: Int, _ what: String) -> String {
            count == 0 ? "\(what) never" : "\(what) after \(count) crash\(count == 1 ? "" : "es")"
        }
        var line = "poison: " + after(poison.quarantineAfter, "an event pattern is quarantined") + ", "
            + after(poison.suspendAfter, "a client key suspended") + ", within \(poison.periodMs) ms"
        let needed = [poison.quarantineAfter, poison.suspendAfter].filter { $0 > 0 }.min()
        let outrun = topology.workers.filter { group in
            !group.external && (needed.map { $0 > group.supervision.intensity } ?? true)
        }
        if !outrun.isEmpty {
            line += "; warning: group(s) " + outrun.map { "'\($0.name)' (intensity \($0.supervision.intensity))" }.joined(separator: ", ")
                + " may give up on crashes one client causes before they are contained: keep poison.quarantineAfter or "
                + "poison.suspendAfter at most supervision.intensity"
        }
        return line
    }

    /// `--check`'s line about direct routes: which groups' workers clients may reach without the
    /// coordinator (`fsm-send --route direct`), so a topology that turns none on says how to.
    static func directSummary(_ topology: Topology) -> String {
        let direct = topology.workers.filter(\.direct).map(\.name)
        guard !direct.isEmpty else {
            return "direct routes: none (every request goes through the coordinator; set workers[].direct to let clients reach a group's workers)"
        }
        let others = topology.workers.filter { !$0.direct }.map(\.name)
        return "direct routes: \(direct.joined(separator: ", ")) (fsm-send and fsm-load --route direct reach their machines without the coordinator)"
            + (others.isEmpty ? "" : "; through the coordinator only: \(others.joined(separator: ", "))")
    }

    /// `--check`'s line about the audit log: which machines are logged, where and how.
    static func auditSummary(_ topology: Topology, auditDirectory: URL) -> String {
        let audited = topology.machines.filter(\.audit).map(\.name)
        guard !audited.isEmpty else { return "audit: none (set machines[].audit to log a machine's transitions)" }
        let settings = topology.audit
        return "audit: \(audited.joined(separator: ", ")); lines in \(auditDirectory.path)/<worker>.jsonl; "
            + (settings.states ? "with states (redacted)" : "digests only") + "; flush \(settings.flush.rawValue)"
    }

    /// `--check`'s line about durability: which machines keep what, and where.
    static func durabilitySummary(_ topology: Topology, dataDirectory: URL) -> String {
        let durable = topology.machines.filter { $0.durability != .none }
        guard !durable.isEmpty else { return "durability: none (no machine survives its worker; set machines[].durability to keep some)" }
        let levels = ["state", "journal"].compactMap { level -> String? in
            let names = durable.filter { $0.durability.rawValue == level }.map(\.name)
            return names.isEmpty ? nil : "\(level): \(names.joined(separator: ", "))"
        }
        let settings = topology.durability
        // A shared store is named by its URL, which holds no password (``PostgresLocation``).
        let store = settings.postgres.map { "PostgreSQL at \($0.url)" + ($0.passwordFile.map { ", password in \($0)" } ?? "") }
        var line = "durability: \(levels.joined(separator: "; ")); "
            + (store ?? "data in \(dataDirectory.path)") + "; flush \(settings.flush.rawValue)"
        if durable.contains(where: { $0.durability.rawValue == "journal" }) { line += "; snapshot every \(settings.snapshotEvery) events" }
        if let handoff = settings.handoff { line += "; handoff after \(handoff.graceMs) ms" }
        return line
    }

    /// `--check`'s line for each machine: its type and group, its durability and its `onEnd`,
    /// with the restart settings of one that restarts, so what the topology asks of each shows
    /// whether it was written or left to its default.
    static func machineLines(_ topology: Topology) -> [String] {
        topology.machines.map { machine in
            let address = machine.keyed ? machine.name + "/<key>" : machine.name
            var line = "machine \(address): \(machine.type) on \(machine.worker); durability \(machine.durability.rawValue); onEnd \(machine.onEnd.rawValue)"
            switch machine.onEnd {
            case .restart:
                let policy = machine.restart
                line += " (waits \(policy.backoff.initialMs) ms doubling to \(policy.backoff.maxMs) ms; "
                    + "stays ended past \(count(policy.intensity, "end")) in \(policy.periodMs) ms)"
            case .stay, .remove:
                break
            }
            if machine.audit { line += "; audited" }
            return line
        }
    }
}
