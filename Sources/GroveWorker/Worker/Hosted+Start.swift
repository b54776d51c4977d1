import Foundation
import Grove
import GroveRuntime
import GroveWire
import Synchronization

extension Hosted {
    /// What the host does when the instance ends (a terminal state, a stop, a failure): its
    /// durable record goes in the turn's commit, the coordinator is told (`machine`, with the
    /// final state, or null and why when it does not encode or is over the coordinator's frame
    /// limit: the end itself must arrive), and the runtime applies the machine's `onEnd` policy
    /// before the turn's replies leave (``Turn/ended``). Told the address, so a worker makes
    /// one per machine type and durability and its hosts share it (``Factory/bound(to:)``).
    static func ending(durability: Durability, link: WorkerLink, turn: Turn) -> EndHandler {
        { address, result in
            if durability != .none { turn.durable.ended(address) }
            let ended: MachineEnded
            switch result {
            case .success(let termination):
                var state = JSONValue.null
                var message: String?
                switch encode(termination.finalState, outcome: "the machine ended", address: address) {
                case .success(let json): state = (try? JSONValue(parsing: Data(json))) ?? .null
                case .failure(let error): message = error.message
                }
                ended = MachineEnded(address: address, worker: link.worker,
                                     reason: termination.reason == .stopped ? .stopped : .terminalState,
                                     state: state, message: message)
            case .failure(let error):
                ended = MachineEnded(address: address, worker: link.worker, reason: .failed, state: .null, message: error.message)
            }
            // A final state too large for the coordinator's frames is left out (WorkerCore+EndReport.swift).
            let report = WorkerCore.endReport(ended, encodedBytes: (try? WireJSON.encode(ended))?.count, messageBytes: link.messageBytes)
            link.publish(.machine, address: address, payload: report)
            turn.ended.note(address)
        }
    }

    /// A durable instance is written after each drain that ran something, except a restored
    /// instance's first drain when it only boots it (``Recovery/firstDrainOnlyBoots(queuedEvents:interruptedIO:reissuedIO:)``).
    func noteChangesAfterDrains(restoring: Snapshot<M>?) {
        guard let restoring else { return }
        let bootsOnly = Recovery.firstDrainOnlyBoots(queuedEvents: restoring.queuedEvents.count,
                                                     interruptedIO: restoring.interruptedIO.count,
                                                     reissuedIO: restoring.reissuedIO?.count ?? 0)
        firstDrainOnlyBoots.store(bootsOnly, ordering: .relaxed)
    }

    /// Its host was drained by `target` (the worker's runtime tells it, on its loop): a durable
    /// instance joins the turn's writes. A target that is not its own (an earlier instance at
    /// the same address, replaced since) is not its drain.
    func drained(_ target: DrainTarget) {
        guard target === drainTarget, durability != .none else { return }
        if firstDrainOnlyBoots.exchange(false, ordering: .relaxed) { return }
        changed()
    }

    /// Starts the host. With a watcher of `state:<address>` or outputs to forward, it observes
    /// first, so a watcher sees the initial state first and no commit or output is missed
    /// (events sent meanwhile wait in the mailbox, in order); otherwise it starts here, without
    /// a task per instance (a worker bringing back 100,000 instances made as many tasks, which
    /// held up its heartbeats). With `now`, one started here also boots here, on its executor
    /// (``MachineHost/startNow()``), which the caller runs on.
    func start(watched: Bool, now: Bool = false) {
        guard watched || M.Output.self != Never.self else {
            if now {
                path.startNow(host)
            } else {
                host.start()
            }
            return
        }
        let host = host, inlet = inlet, address = address, loop = link.loop
        loop.spawn {
            let states = watched ? await host.states() : nil
            let outputs = M.Output.self == Never.self ? nil : await host.outputs()
            host.start()
            if let outputs {
                loop.spawn {
                    for await output in outputs {
                        guard let json = try? WireJSON.encode(output), let value = try? JSONValue(parsing: Data(json)) else { continue }
                        await inlet.output(OutputEvent(output: value), address: address)
                    }
                }
            }
            if let states { self.publish(from: states) }
        }
    }
}
