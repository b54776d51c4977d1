import GroveCluster
import GroveWire
import ZeroMQ

/// How the driver feeds the core's client rules (``ClientRules``, through
/// `CoordinatorCore+Clients.swift`) what waits for each client, and carries out what they
/// decide: busies owed sent once there is room, a reply that does not fit replaced by the core's
/// `reply-dropped`.
extension CoordinatorDriver {
    /// What waits for `client` in this process: its outbox, plus `building` bytes of a batch
    /// being built for it. Free when nothing waits for any client.
    func backlog(of client: [UInt8], building: Int = 0, io: LoopIO) -> ClientBacklog {
        let waiting = io.backlog(clients, peer: client)
        return ClientBacklog(messages: waiting.messages, bytes: waiting.bytes + building)
    }

    /// The message to send `client` in place of a reply of `size` bytes, when the core says it
    /// does not fit; `nil` to send the reply. Free (no lookup of the client) while nothing waits
    /// for any client.
    func replacing(replyOf size: Int, kind: MessageKind, correlation: UInt64, address: some Collection<UInt8>,
                   to client: [UInt8], building: Int = 0, io: LoopIO) -> WireMessage? {
        // A small reply always goes (CoordinatorCore.admitReply): no lookup of the client for it.
        guard size > CoordinatorCore.smallReply else { return nil }
        let waiting = backlog(of: client, building: building, io: io)
        guard waiting.bytes > 0 else { return nil }
        guard let admitted = core.admitReply(to: client, size: size, kind: kind, correlation: correlation,
                                             address: String(decoding: address, as: UTF8.self), backlog: waiting) else { return nil }
        if let warning = admitted.warning { log.warning("\(warning)") }
        return admitted.replacement
    }

    /// Sends the busies owed to clients whose queues have room again: for each, rounds of what
    /// fits (`CoordinatorCore.releaseBusies`) while its outbox stays under the limits, as
    /// ZeroMQ takes them; per client per call at most four times `queues.clientOutbox` or 16384,
    /// whichever is more, so a turn stays short and a client that is gone costs few failed sends.
    func releaseBusies(io: LoopIO) {
        guard core.clientRules.owesAny else { return }
        let cap = max(4 * core.topology.queues.clientOutbox, 1 << 14)
        for client in core.clientsOwedBusies {
            var released = 0
            while released < cap {
                let actions = core.releaseBusies(to: client, backlog: backlog(of: client, io: io))
                guard !actions.isEmpty else { break }
                released += actions.count
                apply(actions, io: io)
            }
        }
    }

    /// A slow client read some of what waited for it: busies owed may fit now.
    func drained(_ socket: SocketID, io: LoopIO) {
        guard socket == clients, core.clientRules.owesAny else { return }
        releaseBusies(io: io)
        flush(io: io)
    }
}
