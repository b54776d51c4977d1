import GroveWire

/// Which connection is which worker's process.
///
/// A worker's routing id is not its name: each worker connection picks a random one (Swift
/// workers: the name, `#`, and 32 hex digits of a fresh random number, per socket), and the
/// coordinator learns it from the registration that connection sends. What the coordinator sends
/// a worker goes to the routing id its registered process registered from; a message is taken
/// as a worker's only when it comes from that routing id, and, with CURVE, with the `User-Id`
/// (the key and the address) it registered with. A peer that connects under a worker's name, or
/// under any routing id a registered process does not hold, is answered `unavailable` and
/// nothing else: it receives nothing meant for the worker and cannot speak for it.
extension CoordinatorCore {
    /// A registered worker process's connection.
    struct Connection: Equatable {
        /// The worker's number (its index in ``workerNames``).
        let worker: Int
        /// The connection's `User-Id` at registration (its CURVE key and address); `nil` without
        /// CURVE, where every admitted peer is trusted and nothing is compared.
        let userID: String?
    }

    /// Who sent a message on a connection of the workers endpoint.
    enum Sender: Equatable {
        /// The registered process of worker number `worker`, noted alive.
        case worker(Int)
        /// No registered process: these actions answer it.
        case refused([CoordinatorAction])
    }

    /// The registered worker whose process sent a `kind` message on connection `identity` with
    /// `userID`, noted alive at `now`; or the refusal: a connection that is no registered process
    /// (unknown, replaced, or forgotten after it was declared lost while only slow) must register
    /// first; one that carries another key than its process registered with is refused and logged.
    mutating func sender(_ identity: [UInt8], userID: String?, kind: MessageKind, now: ContinuousClock.Instant) -> Sender {
        guard let connection = connections[identity] else {
            return .refused([.toPeer(identity, WireMessage.error(WireError(.unavailable,
                "this connection is not a worker process registered with this coordinator (new, replaced, or declared lost); send register first"),
                correlation: 0))])
        }
        if let registered = connection.userID, userID != registered {
            let name = workerNames[connection.worker]
            let why = "a \(kind.name) message came under worker \(name)'s routing id with another key than \(name) registered with"
                + " (\(Self.keyOf(userID)) instead of \(Self.keyOf(registered))); it was refused and \(name) keeps its registration"
            var actions: [CoordinatorAction] = [.toPeer(identity, WireMessage.error(WireError(.forbidden, why), correlation: 0))]
            if let line = noteRefusal(connection.worker, kind, address: "", why, now: now) { actions.append(.warn(line)) }
            return .refused(actions)
        }
        workers[workerNames[connection.worker]]?.lastHeard = now
        return .worker(connection.worker)
    }

    /// The public key part of a `User-Id` (`"<key> <address>"`), for messages.
    static func keyOf(_ userID: String?) -> String {
        guard let userID else { return "no key" }
        return "key " + String(userID.prefix { $0 != " " })
    }

    /// Notes `identity` as the connection of worker number `worker`'s registered process.
    mutating func connect(_ identity: [UInt8], worker: Int, userID: String?) {
        connections[identity] = Connection(worker: worker, userID: userID)
        routingIDs[worker] = identity
    }

    /// Forgets the connection of worker number `worker`'s process, if one is registered: nothing
    /// more goes to it, nothing more from it counts as the worker's.
    mutating func disconnect(_ worker: Int) -> [CoordinatorAction] {
        guard let identity = routingIDs[worker] else { return [] }
        routingIDs[worker] = nil
        connections[identity] = nil
        return [.dropQueued(peer: identity)]
    }
}
