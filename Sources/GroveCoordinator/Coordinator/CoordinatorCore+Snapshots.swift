import GroveCluster
import GroveWire

extension CoordinatorCore {
    /// The answer to a client's `snapshot`: the watched states its prefixes cover, from the
    /// publication log, each with the number it was published under (a `states` reply), or why
    /// not (an `error`). Answered here: the coordinator published those states itself, so what
    /// it kept and the numbers it gave agree by construction, which a `get` to each machine's
    /// worker could not promise (a worker's replies and its state publications leave on
    /// different paths). Needs the `read` role over every machine, as watching does.
    func snapshot(_ request: MessageView, as principal: Gatekeeper.Principal?) -> WireMessage {
        let correlation = request.correlation
        if case .trusted? = principal {} else if let refusal = ClientAccess.forbidden(.snapshot, address: nil, for: principal) {
            return WireMessage.error(refusal, correlation: correlation)
        }
        let asked: SnapshotRequest
        do {
            asked = try WireJSON.decode(SnapshotRequest.self, from: Array(request.payloadBytes.assumingMemoryBound(to: UInt8.self)),
                                        code: .malformedJSON, what: #"the snapshot request (write it as {"prefixes":["state:counter/"]})"#)
        } catch {
            return WireMessage.error(error, correlation: correlation)
        }
        return WireMessage(Header(.states, correlation: correlation), payload: publications.snapshot(prefixes: asked.prefixes))
    }
}
