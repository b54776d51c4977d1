import Foundation
@_spi(GroveInternal) import GroveWire

/// Which process a worker is: a random 64-bit number and the wall-clock time, both chosen once
/// per process, at its first use (when the worker starts), and sent with every registration.
///
/// Random rather than start time and pid: pids repeat (every container's first process is pid
/// 1, and a restarted container may start in the same millisecond), a random 64-bit number
/// does not. The start time is sent beside it so that the coordinator can order two processes
/// it has not seen replace each other (after it restarted itself): the one started later wins
/// the name.
struct WorkerIncarnation: Sendable, Equatable, CustomStringConvertible {
    let id: UInt64
    /// Milliseconds since 1970.
    let startedAtMs: Int64

    /// This process's incarnation.
    static let process = WorkerIncarnation(id: .random(in: 1 ... .max), startedAtMs: Int64(Date().timeIntervalSince1970 * 1000))

    var description: String { "\(id)" }
}

extension WorkerCore {
    /// The registration this worker sends: what it can host, which process it is, and where it
    /// serves direct requests (`direct`: its direct endpoint as bound, when it binds one).
    func registration(pid: Int32, ioHandlers: [String], direct: String? = nil) -> Registration {
        Registration(worker: worker, pid: pid, machineTypes: machineTypes.sorted(), ioHandlers: ioHandlers,
                     incarnation: incarnation.id, startedAtMs: incarnation.startedAtMs, crash: crashReport, direct: direct)
    }

    /// The correlation of this process's registrations, which the coordinator echoes in its
    /// answer: its incarnation, so that an answer to another process's registration under the
    /// same name is told apart.
    var registrationCorrelation: UInt64 { incarnation.id }

    /// A coordinator's heartbeat: one that names another incarnation under this worker's name
    /// means a newer process replaced this one, which stops (an empty one says nothing). Only
    /// once welcomed: before that, the name is still registered to the process this one
    /// replaces (a restart that came before the coordinator saw the old process go), which its
    /// own registration is about to displace; a process that is itself the older one is told
    /// so in the answer to its registration.
    func heartbeat(_ payload: ArraySlice<UInt8>) -> Decision {
        guard session == .welcomed, !payload.isEmpty, let note = try? WireJSON.decode(HeartbeatNote.self, from: Array(payload)),
              note.incarnation != incarnation.id else { return .ignore }
        return .act([superseded("the coordinator at \(coordinator) has incarnation \(note.incarnation) registered as \(worker)")])
    }

    /// Ends this process: a newer one has its name (a heartbeat said so). As an OTP node or an Akka cluster member
    /// that finds itself replaced, it stops rather than serve a stale copy of the machines; the
    /// exit status is a refused registration's, which fsm-launch does not restart (a restart
    /// would displace the newer process in turn).
    func superseded(_ why: String) -> WorkerAction {
        .exit(.superseded(
              "worker \(worker) incarnation \(incarnation) (pid \(getpid())) was superseded: \(why). Stopping so as not to serve "
              + "a stale copy of its machines; start it again only once the other process is gone"))
    }

    /// Notes the coordinator's epoch from a welcome; a line for the log when it changed (the
    /// coordinator restarted, and drops replies to its earlier life's requests).
    mutating func noteEpoch(_ welcome: Welcome) -> WorkerAction? {
        defer { epoch = welcome.epoch }
        guard let old = epoch, let new = welcome.epoch, old != new else { return nil }
        return .log(.notice, "the coordinator at \(coordinator) restarted (epoch \(old) → \(new)); "
            + "replies to requests of its earlier life are dropped")
    }
}
