import GroveWire

extension WorkerRuntime {
    /// An event with an idempotency key (header flag bit 4): its instance's window
    /// (``AnswerWindow``) says whether it runs, as ``deliver(_:flags:correlation:address:)``
    /// runs an event, or is answered with the answer its key got first (or waits for it, when
    /// its first copy still runs). Its answer is kept by the instance, in the commit of the
    /// state it reports for a durable one, before it leaves.
    func deliverKeyed(_ payload: ArraySlice<UInt8>, flags: Header.Flags, reply: StateReply) {
        let address = reply.address
        do {
            // Bound to its sender on the way (the coordinator, or the direct road), so longer
            // than a client's own; a client's own length was checked there.
            let (key, event) = try IdempotencyKey.split(payload, correlation: reply.correlation,
                                                        longest: IdempotencyKey.maximumBoundClientLength)
            let target = try instance(for: address)
            link.metrics.event(on: target.eventCounts)
            if target.answersUnread(), let store {
                do {
                    target.restoreAnswers(try store.answers(of: address))
                } catch {
                    // The core ends the worker (WorkerCore+Failures.swift): answering without
                    // the kept answers could apply a repeat twice.
                    failed(.journalRead(address: address, "its kept answers could not be read: " + error.message))
                    return reply.fail(WireError(.unavailable, "the kept answers of \(address) could not be read from the store; "
                        + "its worker is restarting: retry with the same key", address: address))
                }
            }
            switch target.admit(key, reply: reply) {
            case .answer(let answer):
                return reply.resend(answer)
            case .wait:
                return
            case .appliedEarlier:
                return reply.fail(WireError(.alreadyApplied, "\(address) applied the event of idempotency key \(key) already, "
                    + "more than \(AnswerWindow<StateReply>.capacity) keyed events ago, and keeps its answer no longer; "
                    + "it was not applied again: do not resend it, read the state with a get", address: address))
            case .tooOld:
                return reply.fail(WireError(.keyTooOld, "\(address) cannot tell whether it applied the event of idempotency key \(key): "
                    + "it keeps \(IdempotencyKey.openRunsKept) runs of that client's sequences not applied yet, and this one is older "
                    + "than all of them; it was not applied now, and a resend gets the same answer: read the state with a get to see "
                    + "whether it took effect. A client avoids this by numbering its events to each address 1, 2, 3… and keeping at "
                    + "most \(IdempotencyKey.openRunsKept) of them unanswered at a time (docs/PROTOCOL.md, 'Idempotency keys')",
                    address: address))
            case .apply:
                break
            }
            var keyedReply = reply
            keyedReply.keyed = KeyedReply(key: key, keeper: target)
            if flags.contains(.noWait) {
                if let refused = target.enqueue(event, binary: reply.binary, correlation: reply.correlation) {
                    return keyedReply.fail(refused)
                }
                return keyedReply.keep(keyedReply.keyed!, .accepted, flags: [], payload: [])
            }
            target.send(event, binary: reply.binary, reply: keyedReply)
        } catch {
            reply.fail(error)
        }
    }
}
