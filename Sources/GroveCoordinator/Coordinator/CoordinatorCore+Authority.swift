import Foundation
import GroveCluster
import GroveWire

/// The checks of the table of message kinds (``MessageKind/authority``) on what registered
/// workers send: a worker speaks only for what it hosts.
///
/// A message that fails is refused before it has any effect (not published, not routed, not
/// counted): the worker is answered `error` `forbidden` naming the kind and the address, under
/// the message's correlation id, and the coordinator logs the first refusal of each kind from
/// each worker, then counts the others and logs their number every
/// ``refusalLogWindow`` (never a payload).
extension CoordinatorCore {
    /// Refusals of one kind from one worker are logged at most once in this long.
    static let refusalLogWindow = Duration.seconds(5)

    /// Refusals of one kind from one worker.
    struct RefusalKey: Hashable {
        let worker: Int
        let kind: MessageKind
    }

    /// The refusals of one ``RefusalKey`` since the last line logged about them.
    struct RefusalTally {
        /// When that line was logged.
        var since: ContinuousClock.Instant
        /// Refused since, not logged yet.
        var count = 0
        var lastAddress = ""
    }

    /// The refusal of `message` from registered worker number `worker` when it fails the check
    /// its kind's row of the table asks for; `nil` when it passes.
    ///
    /// The checks that need the message's own bookkeeping are made where it is handled, and
    /// answer nothing here: a reply must answer a request sent to that worker
    /// (``answered(by:correlation:)``), an `io-cancel` is looked up among the sender's own calls
    /// (``cancelCall(from:originID:reason:)``), an `instances` report lists only what is placed
    /// on the sender (``noteReported(_:from:)``), a batch is checked envelope by envelope and a
    /// registration comes on its own (``decide(worker:_:)``).
    mutating func refusal(of message: WireMessage, from worker: Int) -> [CoordinatorAction]? {
        let kind = message.header.kind
        switch kind.authority.worker {
        case .hostsAddress?:
            // Its form first, as a client's: an address Swift takes for an equal one (`e` and a
            // combining accent, for `é`) would find that machine among the resolved addresses,
            // and be kept there, before its bytes are placed.
            if let problem = AddressChecks.addressFormProblem(message.address, limit: topology.limits.addressBytes) {
                return refuse(message, from: worker, "its address frame is not a well-formed address (\(problem))")
            }
            if let owner = placementProblem(message.address, for: worker) {
                return refuse(message, from: worker, "\(Self.shown(message.address)) is not a machine it hosts (\(owner))")
            }
            guard kind == .stateChanged || kind == .machine || kind == .effect else { return nil }
            if let problem = Self.payloadProblem(message.payload, names: message.address, worker: workerNames[worker]) {
                return refuse(message, from: worker, problem)
            }
            // A worker tells of its machine's own work only: the io calls that cross processes
            // are the coordinator's to tell (``EffectEvent``), from the calls it forwards.
            if kind == .effect, (try? WireJSON.decode(LocalEffectEvent.self, from: message.payload)) == nil {
                return refuse(message, from: worker, "its payload is not an effect of work the machine's own worker runs "
                    + #"({"address","worker","effect","kind","phase",…}: docs/PROTOCOL.md, "Published events")"#)
            }
            return nil
        case .runsCall?:
            // A call this coordinator does not know (any more) answers nothing, and is dropped
            // where it is handled: a result that crossed a cancel or a timeout is no attack.
            let id = message.header.correlation
            guard let target = calls[id]?.target ?? cancelling[id]?.call.target, target != workerNames[worker] else { return nil }
            return refuse(message, from: worker, "io call \(id) runs on worker \(target), not on it")
        case nil:
            return refuse(message, from: worker, kind.refusalForWorkers ?? "not from workers")
        case .registered?, .groupKey?, .answersItsRequest?, .placedOnSender?, .startedCall?, .eachEnvelope?:
            return nil
        }
    }

    /// Why worker number `worker` does not host `address` (where the topology places it, or why
    /// it is no machine's address); `nil` when it does. One lookup in the addresses already
    /// resolved, the cache client requests use, for an address seen before.
    mutating func placementProblem(_ address: String, for worker: Int) -> String? {
        if resolvedAt != registrations {
            resolved.removeAll(keepingCapacity: true)
            resolvedAt = registrations
        }
        if let known = resolved[address] {
            return known.worker == worker ? nil : "the topology places it on \(workerNames[known.worker])"
        }
        let owner: String
        do {
            owner = try resolve(address)
        } catch {
            // Not a machine's address, or one whose worker is not registered: not the sender's.
            return error.message
        }
        let number = number(of: owner)
        // Bounded as client requests bound it; an address noted here is not listed as an instance.
        if resolved.count >= 100_000 { resolved.removeAll(keepingCapacity: true) }
        resolved[address] = (number, false)
        return number == worker ? nil : "the topology places it on \(owner)"
    }

    /// Whether `payload` starts `{"address":"<address>","worker":"<worker>",` with both written
    /// as they are (no byte of either needs an escape in JSON).
    static func begins(_ payload: [UInt8], address: String, worker: String) -> Bool {
        prefixEnd(payload, address: address, worker: worker) != nil
    }

    /// Where what follows that beginning starts; nil when `payload` does not begin so.
    static func prefixEnd(_ payload: [UInt8], address: String, worker: String) -> Int? {
        var index = payload.startIndex
        func take(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard payload.endIndex - index >= count else { return false }
            for offset in 0..<count where payload[index + offset] != literal.utf8Start[offset] { return false }
            index += count
            return true
        }
        func take(plain text: String) -> Bool {
            for byte in text.utf8 {
                guard index < payload.endIndex, byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"),
                      payload[index] == byte else { return false }
                index += 1
            }
            return true
        }
        let begun = take(#"{"address":""#) && take(plain: address) && take(#"","worker":""#) && take(plain: worker) && take(#"","#)
        return begun ? index : nil
    }

    /// Refuses `message` from worker number `worker` because of `reason`: the error the worker
    /// is answered and, rate-limited, the line for the log.
    mutating func refuse(_ message: WireMessage, from worker: Int, _ reason: String) -> [CoordinatorAction] {
        let name = workerNames[worker]
        let kind = message.header.kind
        let error = WireError(.forbidden, "worker \(name) may not send this \(kind.name) message: \(reason). A worker speaks only for the machines "
            + "the topology places on it and the io calls it runs; see docs/PROTOCOL.md, 'Who may send what'", address: message.address)
        var actions: [CoordinatorAction] = [.toWorker(name, WireMessage.error(error, correlation: message.header.correlation))]
        let now = workers[name]?.lastHeard ?? lastTick ?? .now
        if let line = noteRefusal(worker, kind, address: message.address, reason, now: now) { actions.append(.warn(line)) }
        return actions
    }

    /// Counts a refusal; the line to log when it is the first of its kind from that worker in a
    /// ``refusalLogWindow``.
    mutating func noteRefusal(_ worker: Int, _ kind: MessageKind, address: String, _ reason: String,
                              now: ContinuousClock.Instant) -> String? {
        let key = RefusalKey(worker: worker, kind: kind)
        if var tally = refusals[key], now - tally.since < Self.refusalLogWindow {
            tally.count += 1
            tally.lastAddress = address
            refusals[key] = tally
            return nil
        }
        let earlier = refusals[key].map { $0.count > 0 ? "; \($0.count) more before this one" : "" } ?? ""
        refusals[key] = RefusalTally(since: now)
        return "refused \(kind.name) from worker \(workerNames[worker])\(address.isEmpty ? "" : " for \(Self.shown(address))"): "
            + "\(reason)\(earlier). Further refusals of its \(kind.name) messages are counted and logged every "
            + "\(Self.refusalLogWindow.components.seconds) s"
    }

    /// The counts of refusals not logged yet whose window ended, for the log; the tallies of
    /// windows that ended are forgotten.
    mutating func logRefusals(now: ContinuousClock.Instant) -> [CoordinatorAction] {
        guard !refusals.isEmpty else { return [] }
        var actions: [CoordinatorAction] = []
        for (key, tally) in refusals.sorted(by: { ($0.key.worker, $0.key.kind.rawValue) < ($1.key.worker, $1.key.kind.rawValue) })
        where now - tally.since >= Self.refusalLogWindow {
            refusals[key] = nil
            guard tally.count > 0 else { continue }
            actions.append(.warn("refused \(tally.count) more \(key.kind.name) message(s) from worker \(workerNames[key.worker]) in "
                + "\(Self.refusalLogWindow.components.seconds) s"
                + (tally.lastAddress.isEmpty ? "" : ", the last for \(Self.shown(tally.lastAddress))")))
        }
        return actions
    }

    /// An address as a log line shows it: quoted, escaped, at most 200 characters.
    static func shown(_ address: String) -> String {
        let cut = address.count > 200 ? String(address.prefix(200)) + "…" : address
        return cut.debugDescription
    }
}
