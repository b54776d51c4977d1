import Foundation
import GroveRuntime
import GroveWire

extension WireError {
    /// Why a worker's host refused an event or did not run it, for its sender.
    init(refusal error: HostError, address: String) {
        // An ended instance stays until its machine's onEnd policy, an admin or its worker's
        // restart replaces it (`WorkerCore+Lifecycle.swift`).
        let stays = "; it answers machine-ended until an admin restarts it (fsm-send restart \(address)) or its worker restarts. "
            + "The topology can have it restart by itself (machines[].onEnd \"restart\") or, for a keyed machine, free its key (\"remove\")"
        switch error.code {
        case .mailboxFull: self.init(.mailboxFull, error.message, address: address)
        case .terminated: self.init(.machineEnded, "the machine reached a terminal state and accepts no more events" + stays, address: address)
        case .stopped: self.init(.machineEnded, "the machine was stopped and accepts no more events" + stays, address: address)
        default: self.init(.machineEnded, error.message, address: address)
        }
    }

    /// The error every request to a durable instance whose stored record or journal does not
    /// read is answered with: where, what was wrong, that nothing was written over it, and
    /// what to do.
    /// - Parameters:
    ///   - address: The instance's address.
    ///   - store: The store, as its ``MachineStore/label`` names it.
    ///   - worker: The worker's name.
    ///   - why: What reading it met, e.g. "the record starts with an unknown codec byte 9".
    static func unreadableRecord(address: String, store: String, worker: String, why: String) -> WireError {
        var why = why
        if why.hasSuffix(".") { why.removeLast() }
        return WireError(.unreadableRecord, "worker \(worker) cannot read what \(store) holds for '\(address)': \(why). "
            + "The record is corrupt, or was written by another version of Grove or of the machine's type; "
            + "so that its acknowledged state is not lost, the instance is not started from its initial state and the record is left "
            + "as it is, and every request to '\(address)' gets this error. Restore the store from a backup, or run a worker "
            + "that reads the record, then restart worker \(worker); the worker's other machines are served meanwhile",
                         address: address)
    }

    /// A state the machine committed that its `Encodable` conformance refuses to encode (a NaN in
    /// JSON, say): what happened, where in the state, and what to fix.
    /// - Parameters:
    ///   - error: What encoding threw.
    ///   - type: The state's type.
    ///   - binary: Whether the binary codec was encoding, else JSON.
    ///   - outcome: What did happen, e.g. "the event ran and its state was committed".
    ///   - address: The machine's address.
    static func unencodableState(_ error: any Error, type: Any.Type, binary: Bool, outcome: String, address: String) -> WireError {
        var reason = "\(error)"
        var path: String?
        if let error = error as? BinaryCodingError {
            reason = error.message
            path = error.path
        } else if case EncodingError.invalidValue(_, let context) = error {
            reason = context.debugDescription
            path = WireJSON.path(context.codingPath)
        }
        if reason.hasSuffix(".") { reason.removeLast() }
        return WireError(.unencodableState, "\(outcome), but \(String(reflecting: type)) does not encode as \(binary ? "binary" : "JSON")"
                            + (path.map { " at \($0)" } ?? "") + ": \(reason); fix its Encodable conformance",
                         address: address, path: path)
    }
}
