import GroveRuntime
import GroveWire

// A host made for an instance that rested in a state table takes over the transition the table
// ran (StateTable.swift).

extension Hosted {
    func takeOver(_ start: any TableHandover, reply: StateReply?) -> WireError? {
        guard let stepped = (start as? StateTable<M>.Start)?.stepped else {
            preconditionFailure("\(address) was given a transition of another machine type to take over")
        }
        let redacts = path.redacts
        let taken = host.onOwnExecutor { host in
            host.takeOverNow(stepped.state, effect: stepped.effect, after: stepped.event, answering: reply.map { reply in
                { result, unhandled in HostedPath<M>.answer(reply, with: result, unhandled: unhandled, redacting: redacts) }
            })
        }
        // Made for it on this loop and booted (a resting machine starts with no effect), it is
        // idle. Were it not, the event is queued on the state it ran on instead, and runs again
        // from there: `update` is pure, so it commits the same.
        if !taken {
            do {
                if let reply {
                    try host.send(stepped.event) { HostedPath<M>.answer(reply, with: $0, unhandled: $1, redacting: redacts) }
                } else {
                    try host.send(stepped.event)
                }
            } catch {
                let refusal = WireError(refusal: error, address: address)
                guard let reply else { return refusal }
                reply.fail(refusal)
                return nil
            }
        }
        changed()
        return nil
    }
}
