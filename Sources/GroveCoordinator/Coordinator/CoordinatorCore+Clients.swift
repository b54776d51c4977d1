import GroveCluster
import GroveWire

/// The rules for clients that do not read (``ClientRules``, GroveCluster: shared with a worker
/// that serves clients directly), held in ``CoordinatorCore/clientRules``; what they decide
/// becomes the core's actions here.
extension CoordinatorCore {
    /// Replies this small are always queued (``ClientRules/smallReply``).
    static let smallReply = ClientRules.smallReply

    /// Whether a request from `client` must be refused because the client has too much
    /// outstanding (``ClientRules/owesBusy(to:correlation:address:refusal:backlog:)``): `nil`
    /// when it may go on, else what to do now (nothing, or a warning). The free guard is here,
    /// inline: nothing waits for the client and no busy is owed to anyone.
    @inline(__always)
    mutating func owesBusy(to client: [UInt8], correlation: UInt64, address: UnsafeRawBufferPointer?,
                           refusal: OwedReason? = nil, backlog: ClientBacklog) -> [CoordinatorAction]? {
        guard backlog.bytes > 0 || clientRules.owesAny else { return nil }
        guard let rules = clientRules.owesBusy(to: client, correlation: correlation, address: address, refusal: refusal,
                                               backlog: backlog) else { return nil }
        return actions(of: rules)
    }

    /// The clients busies are owed to: the driver offers each ``releaseBusies(to:backlog:)``
    /// after a turn and on every tick.
    var clientsOwedBusies: [[UInt8]] { clientRules.clientsOwed }

    /// The busies owed to `client` that fit in its queue now (``ClientRules/releaseBusies(to:backlog:)``).
    mutating func releaseBusies(to client: [UInt8], backlog: ClientBacklog) -> [CoordinatorAction] {
        actions(of: clientRules.releaseBusies(to: client, backlog: backlog))
    }

    /// What to send `client` in place of a reply of `size` bytes, counted
    /// (``ClientRules/admitReply(to:size:kind:correlation:address:backlog:)``); `nil` to send the reply.
    mutating func admitReply(to client: [UInt8], size: Int, kind: MessageKind, correlation: UInt64, address: String,
                             backlog: ClientBacklog) -> (replacement: WireMessage, warning: String?)? {
        guard let admitted = clientRules.admitReply(to: client, size: size, kind: kind, correlation: correlation, address: address,
                                                    backlog: backlog) else { return nil }
        counts.replyDropped += 1
        return admitted
    }

    /// Forgets a client that went away: the busies owed to it, what was dropped for it, and
    /// whether it batches.
    mutating func forget(client: [UInt8]) {
        batchingClients.remove(client)
        clientRules.forget(client: client)
    }

    /// The rules' actions as the core's; their counts added to ``counts``.
    mutating func actions(of rules: [ClientRuleAction]) -> [CoordinatorAction] {
        var actions: [CoordinatorAction] = []
        actions.reserveCapacity(rules.count)
        for rule in rules {
            switch rule {
            case .send(let client, let message): actions.append(.toClient(client, message))
            case .warn(let line): actions.append(.warn(line))
            case .countedBusies(let busies): counts.busy += busies
            }
        }
        return actions
    }
}
