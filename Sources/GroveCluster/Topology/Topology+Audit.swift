public import Foundation
public import GroveWire

extension Topology {
    /// Where and how workers log the committed transitions of audited machines (`"audit"` in a
    /// topology); only machines with ``MachineSpec/audit`` set are logged.
    ///
    /// Each worker process appends JSON lines to `<directory>/<worker>.jsonl`; the format is in
    /// docs/ARCHITECTURE.md ("Audit log").
    public struct AuditSettings: Sendable, Equatable {
        /// The audit directory as written, relative to the topology file; `nil` for the
        /// default, `grove-audit/<topology name>` beside the topology file. See
        /// ``auditDirectory(besides:)``.
        public var directory: String?
        /// Whether each line also carries the state after the transition (redacted when it has
        /// secrets). Defaults to `false`: digests only.
        public var states: Bool
        /// When a written line counts as kept. Defaults to `process`.
        public var flush: DurabilityFlush

        /// - Parameters:
        ///   - directory: The audit directory, relative to the topology file; `nil` for the default.
        ///   - states: Whether lines carry the state after each transition.
        ///   - flush: When a written line counts as kept.
        public init(directory: String? = nil, states: Bool = false, flush: DurabilityFlush = .process) {
            self.directory = directory
            self.states = states
            self.flush = flush
        }
    }

    /// Whether any machine's transitions are logged.
    public var hasAuditedMachines: Bool { machines.contains(where: \.audit) }

    /// The absolute audit directory of this topology's workers: ``AuditSettings/directory``
    /// taken from `topologyDirectory` (the topology file's folder), by default
    /// `<topologyDirectory>/grove-audit/<name>`. A topology without a file (the embedded default)
    /// logs under ``DataDirectory/standard()``, in `audit/<name>`.
    /// - Parameter topologyDirectory: The folder of the topology file; `nil` when there is none.
    public func auditDirectory(besides topologyDirectory: URL?) -> URL {
        let base = topologyDirectory ?? DataDirectory.standard()
        let relative = audit.directory ?? (topologyDirectory == nil ? "audit/\(name)" : "grove-audit/\(name)")
        if relative.hasPrefix("/") { return URL(fileURLWithPath: relative).standardizedFileURL }
        if relative.hasPrefix("~/") { return URL(fileURLWithPath: NSString(string: relative).expandingTildeInPath).standardizedFileURL }
        return base.appendingPathComponent(relative).standardizedFileURL
    }

    /// What a welcome tells a worker about auditing the machines `placed` on it; nil when none
    /// of them is audited.
    package func auditPlacement(of placed: [MachineSpec]) -> AuditPlacement? {
        let audited = placed.filter(\.audit).map(\.name)
        guard !audited.isEmpty else { return nil }
        return AuditPlacement(machines: audited, states: audit.states, flush: audit.flush)
    }
}
