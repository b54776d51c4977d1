import GroveWire
import Logging

/// An admin's `dead-letters` request (list, drop or retry a quarantined event) and the dead
/// letters a removed instance leaves, decided here from what the store returned; the runtime
/// reads and writes the store and carries out the actions (`WorkerRuntime+Poison.swift`).
extension WorkerCore {
    /// What a `dead-letters` request needs from the store before it is answered.
    enum DeadLetterRead: Equatable {
        /// Every dead letter (none without a store): answer with ``listing(_:codec:)``.
        case list
        /// Remove dead letter `id` (nil without a store, or when there is none): answer with
        /// ``removed(_:id:by:codec:)``.
        case remove(Int64)
        /// Nothing: answer with ``DeadLetterAction/fail(_:)`` this.
        case refuse(WireError)
    }

    /// What the runtime does to answer a `dead-letters` request, in order.
    enum DeadLetterAction: Equatable {
        /// Answer the request with this error.
        case fail(WireError)
        /// Answer with `dead-letter-list`, this payload (a ``DeadLetterList`` as JSON).
        case list([UInt8])
        /// Answer `accepted`.
        case accept
        /// Accept the event of this dead letter again (``PoisonWatch/release(_:)``).
        case release(Int64)
        /// Deliver this event (JSON) to the machine at `address`, once more, as a client's
        /// event: the request is answered as that event is.
        case deliver([UInt8], address: String)
        case log(Logger.Level, String)
    }

    /// The first step of a `dead-letters` request: `drop` and `retry` name a dead letter.
    func deadLetterRead(_ request: DeadLetterRequest) -> DeadLetterRead {
        switch request.action {
        case .list:
            return .list
        case .drop, .retry:
            guard let id = request.id else {
                let action = request.action.rawValue
                return .refuse(WireError(.malformedJSON, "a dead-letters \(action) needs the id of a dead letter: {\"action\":\"\(action)\",\"id\":3}"))
            }
            return .remove(id)
        }
    }

    /// The answer to `list`: `letters` with their events as JSON, redacted (for people: a
    /// password in the event stays in the worker's store), or said to be undecodable.
    /// - Parameter codec: The codec of a machine type; nil for one this worker does not register.
    func listing(_ letters: [DeadLetter], codec: (String) -> (any StoredEventCodec)?) -> [DeadLetterAction] {
        let list = DeadLetterList(worker: worker, deadLetters: letters.map { letter in
            let event = codec(letter.type)?.json(ofEvent: letter.event, binary: letter.binary, redacted: true)
                ?? .string("(\(letter.event.count) bytes that do not decode as a \(letter.type) event)")
            return DeadLetterList.Letter(id: letter.id ?? 0, address: letter.address, type: letter.type, event: event,
                                         error: letter.error, crashes: letter.crashes, time: letter.time)
        })
        guard let payload = try? WireJSON.encode(list) else { return [.fail(WireError(.malformedJSON, "the dead letters do not encode"))] }
        return [.list(payload)]
    }

    /// The answer to `drop` or `retry` of dead letter `id`, once the store removed `letter`
    /// (nil: it had none). A retried event goes as JSON, so that its state comes back as JSON,
    /// as any admin's request's does; one that no longer decodes is removed all the same.
    /// - Parameter codec: The codec of a machine type; nil for one this worker does not register.
    func removed(_ letter: DeadLetter?, id: Int64, by request: DeadLetterRequest,
                 codec: (String) -> (any StoredEventCodec)?) -> [DeadLetterAction] {
        guard let letter else {
            return [.fail(WireError(.unknownDeadLetter, "worker \(worker) has no dead letter \(id) (dropped or retried already?); "
                + "list them with `fsm-send dead-letters`"))]
        }
        let retry: Bool
        switch request.action {
        case .list, .drop: retry = false
        case .retry: retry = true
        }
        let done: [DeadLetterAction] = [.release(id),
            .log(.notice, "dead letter \(worker):\(id) of \(letter.address) \(retry ? "retried" : "dropped") by an admin")]
        guard retry else { return done + [.accept] }
        guard let event = codec(letter.type)?.json(ofEvent: letter.event, binary: letter.binary, redacted: false) else {
            return done + [.fail(WireError(.undecodableEvent, "dead letter \(worker):\(id) no longer decodes as a \(letter.type) event; "
                + "it was removed", address: letter.address))]
        }
        return done + [.deliver(Array(event.jsonData), address: letter.address)]
    }

    /// The answer to a `dead-letters` request whose store read or write failed.
    func deadLettersUnavailable(_ error: StoreError) -> [DeadLetterAction] {
        [.fail(WireError(.unavailable, "worker \(worker) cannot read its store: \(error.message)"))]
    }

    /// The dead letters that go with the keyed instance at `address`, removed when it ended
    /// (`onEnd: "remove"`): the key's next instance is a new machine, not refused the events
    /// that crashed the old one.
    func deadLetters(droppedWith address: String, from letters: [DeadLetter]) -> [Int64] {
        letters.compactMap { $0.address == address ? $0.id : nil }
    }

    /// The line each dead letter dropped with its instance logs, for the record.
    func droppedWithInstance(_ id: Int64, address: String) -> String {
        "dead letter \(worker):\(id) of \(address) dropped with its instance, which its machine removes when it ends "
            + "(onEnd \"remove\"); the key's next instance is not refused that event"
    }

    /// The line when the dead letters of a removed instance could not be dropped.
    func dropFailed(at address: String, _ error: StoreError) -> String {
        "worker \(worker) could not drop the dead letters of removed instance \(address): \(error.message); "
            + "they still refuse its events: drop them with fsm-send dead-letters drop"
    }
}
