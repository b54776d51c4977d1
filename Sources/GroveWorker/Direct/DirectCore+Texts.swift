@_spi(GroveInternal) import GroveWire

/// What a worker says when it does not serve a direct request.
extension DirectCore {
    /// The `moved` error for `reason`: the request did not reach a machine here (for
    /// `not-committed`, its turn was not kept), so it may be resent, after a `locate`, on either
    /// route.
    static func moved(_ reason: WireError.Reason, address: String, worker: String) -> WireError {
        let why = switch reason {
        case .notHere where address.isEmpty: "a request without an address names no machine on worker \(worker); address a machine "
            + "by its name, or an instance as machine/key"
        case .notHere: "\(address) is not placed on worker \(worker) now; locate it again"
        case .notSpawned: "instance \(address) is not on worker \(worker) yet: send its first event through the coordinator, which starts it"
        case .notRegistered: "worker \(worker) is not registered with the coordinator now; locate \(address) again after a pause"
        case .notCommitted: "the shared store refused worker \(worker)'s turn for \(address) (another worker holds it); locate it again"
        case .stopping: "worker \(worker) is shutting down; locate \(address) again"
        default: "worker \(worker) does not serve \(address) now (\(reason.rawValue)); locate it again"
        }
        return WireError(.moved, why + ", then resend the request, which was not applied", address: address.isEmpty ? nil : address,
                         reason: reason)
    }

    /// The refusal of a kind a direct route does not serve.
    static func notServed(_ kind: MessageKind) -> WireError {
        WireError(.unknownKind, "a worker's direct route serves event, get, cancel, stop, restart, echo and batches of them; "
                  + "send \(kind.name) to the coordinator's clients endpoint")
    }
}
