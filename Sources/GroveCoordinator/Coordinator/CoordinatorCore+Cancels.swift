import Foundation
import GroveWire

extension CoordinatorCore {
    /// An io call cancelled at the worker running it, waiting for that worker to say its task
    /// ended.
    struct Cancelling {
        let call: Call
        /// Why it was cancelled (`cancelled`, `replaced`, …: what the machine's worker said;
        /// `timeout: …` when its time ran out).
        let reason: String
        /// How the effect is published once the task ended: `cancelled`, or `failed` for a
        /// call whose machine was answered `timeout`; `nil` when it was published already
        /// (`lost`: its machine's worker was lost), so the answer only frees the task's place.
        let phase: EffectEvent.Phase?
    }

    /// Cancels call `id` at the worker running it: the one way a call is cancelled there, for
    /// whatever reason (its machine cancelled it; a limit ran out; its machine's worker was
    /// lost). The call is no longer delivered (a result that crosses the cancel is dropped) and
    /// is kept as cancelling until that worker answers `io-cancelled`, once the task has ended;
    /// `cancelled` is published then (``cancelAnswered(_:_:by:)``), or when that worker is lost
    /// first (``cancelsLost(with:reason:)``). Until then its task still holds its place against
    /// `ioLimits.concurrentPerWorker`. Nothing for a call no longer in flight.
    /// - Parameters:
    ///   - reason: Why, as published in the effect event.
    ///   - phase: How the effect is published then: `cancelled`, or `failed` (a timeout);
    ///     `nil` when the caller published it already.
    mutating func cancel(_ id: UInt64, reason: String, publishing phase: EffectEvent.Phase? = .cancelled) -> [CoordinatorAction] {
        guard let call = takeOutOfFlight(id) else { return [] }
        cancelling[id] = Cancelling(call: call, reason: reason, phase: phase)
        return [.toWorker(call.target, WireMessage(Header(.ioCancel, correlation: id), address: call.address))]
    }

    /// The worker running call `id` answered its `io-cancel`: the task has ended (or had
    /// finished, or was unknown there), so its place is free and `cancelled` is published, with
    /// what it said (nothing when `lost` was published already). Only that worker may answer;
    /// an answer for a call not cancelling is ignored.
    mutating func cancelAnswered(_ id: UInt64, _ message: WireMessage, by worker: String) -> [CoordinatorAction] {
        guard let cancelled = cancelling[id], cancelled.call.target == worker else { return [] }
        cancelling[id] = nil
        freePlace(on: worker)
        guard let phase = cancelled.phase else { return [] }
        guard let answer = try? WireJSON.decode(IOCancelAnswer.self, from: message.payload, what: "the io-cancelled answer") else {
            return [.warn("worker \(worker) answered the cancel of '\(cancelled.call.request)' for \(cancelled.call.address) "
                          + "with a payload that is not an io-cancelled answer; published as cancelled without its task's fate. "
                          + "Is the worker built from the same Grove version?"),
                    publishEffect(cancelled.call, phase, reason: cancelled.reason)]
        }
        return [publishEffect(cancelled.call, phase, reason: cancelled.reason, task: answer)]
    }

    /// Worker `name` was lost: the calls cancelled there that it had not answered for free their
    /// places and are published as `cancelled` with task `worker-lost` (its process, and the
    /// task with it, is gone, or no longer heard); those published `lost` already, not again.
    mutating func cancelsLost(with name: String, reason: String) -> [CoordinatorAction] {
        var actions: [CoordinatorAction] = []
        // In id order, the order the cancels were sent.
        for id in cancelling.keys.sorted() where cancelling[id]?.call.target == name {
            guard let cancelled = cancelling.removeValue(forKey: id) else { continue }
            freePlace(on: name)
            guard let phase = cancelled.phase else { continue }
            actions.append(publishEffect(cancelled.call, phase,
                                         reason: "\(cancelled.reason); worker \(name) was lost (\(reason)) before it said the task ended",
                                         task: IOCancelAnswer(task: .workerLost)))
        }
        return actions
    }
}
