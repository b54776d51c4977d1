import GroveCluster
import GroveWire

extension CoordinatorCore {
    /// An admin's `dead-letters` request, addressed to a worker instance by name: forwarded to
    /// that worker (which keeps its quarantined events in its store) under a new id, its reply
    /// passed back like any other. Needs the `admin` role over every machine, since a worker's
    /// dead letters may belong to any of its machines.
    mutating func routeDeadLetters(from identity: [UInt8], _ request: MessageView,
                                   as principal: Gatekeeper.Principal?) -> ClientDecision {
        let correlation = request.correlation
        func refuse(_ error: WireError) -> ClientDecision {
            .act([.toClient(identity, WireMessage.error(error, correlation: correlation))])
        }
        if case .trusted? = principal {} else if let refusal = ClientAccess.forbidden(.deadLetters, address: nil, for: principal) {
            return refuse(refusal)
        }
        let worker: String
        do {
            worker = try request.address()
        } catch {
            return refuse(error)
        }
        guard let number = workerNumbers[worker] else {
            return refuse(WireError(.unknownMachine, "dead-letters is addressed to a worker instance of topology '\(topology.name)': "
                + workerNames.joined(separator: ", ") + "; got '\(worker)'"))
        }
        guard workers[worker]?.registered == true else {
            return refuse(WireError(.unavailable, "worker \(worker) is not registered (starting, restarting or lost); retry shortly"))
        }
        if let refusal = workerBusy(number, adding: request.payloadCount, address: nil) { return refuse(refusal) }
        let id = takeID()
        track(id, Pending(origin: .client(identity, correlation), worker: number, address: worker, bytes: request.payloadCount))
        return .forward(worker: number, id: id)
    }
}
