package import GroveCluster
package import GroveWire

/// Which road a client's request takes (docs/DIRECT-ROUTES.md, section 3): straight to the
/// worker that runs its machine, once the coordinator has said where that is (`locate`), or
/// through the coordinator. A pure value, as ``ClientCore``: no socket and no clock; pauses go
/// out as values. The client asks ``route(_:)`` before each request, feeds back what the
/// coordinator and the workers answered (``located(_:)``, ``locateFailed(machine:code:)``,
/// ``moved(_:address:)``, ``silence(on:machine:)``), and only moves bytes.
///
/// What it decides, and why it is safe: a worker answers `moved` *before* a request reaches a
/// machine, so any request answered `moved` may be sent again by any road. Silence is the one
/// answer that is not safe to resend without a key, so it becomes `worker-lost` only once a
/// fresh `location` shows that the worker which was silent is not the one registered now.
package struct RouteCore: Sendable {
    /// A worker's direct endpoint, as a `location` gave it.
    package struct Target: Hashable, Sendable {
        package let worker: String
        package let endpoint: String
        /// Its CURVE public key (Z85); `nil` without CURVE.
        package let serverKey: String?
        package let incarnation: UInt64?
    }

    /// Where a request goes now.
    package enum Decision: Hashable, Sendable {
        /// Nothing is known of the machine yet: send `locate` for it to the coordinator, feed
        /// the answer back, then ask again.
        case locate(machine: String)
        /// Straight to the worker.
        case direct(Target)
        /// Through the coordinator's clients endpoint.
        case coordinator
    }

    /// What to do with a request a worker answered `moved` (it never reached a machine).
    package enum AfterMoved: Hashable, Sendable {
        /// Send it again after `pause` (zero: at once), by the road ``route(_:)`` gives then.
        case resend(after: Duration)
        /// Send this one request through the coordinator (which starts the keyed instance it
        /// is the first event of), then go on by ``route(_:)``.
        case resendByCoordinator
    }

    /// What a request to a worker that went silent turned out to be.
    package enum AfterSilence: Hashable, Sendable {
        /// The worker is the one registered now: keep waiting, up to the caller's timeout.
        case keepWaiting
        /// The worker that held it is gone (another incarnation registered, or none): nothing
        /// will answer. Answer the caller `worker-lost` with this error (keyed events may be
        /// resent with the same key; ``ClientCore`` decides).
        case lost(WireError)
    }

    /// At most this many machines' locations are kept; past it, they are all forgotten and
    /// asked again (a client addressing ever more machines must not grow without bound).
    package static let maximumMachines = 10_000
    /// At most this many addresses are held to the coordinator road; past it, all are released.
    package static let maximumOverrides = ClientCore.numberedAddresses
    /// The pause before resending a request a worker answered `moved` `not-registered`.
    package static let notRegisteredPause = Duration.milliseconds(100)

    /// The last `location` of each machine, or `nil` when its `locate` was refused (the
    /// coordinator road then answers for it, with the coordinator's own error).
    package private(set) var locations: [String: Location?] = [:]
    /// When each machine's location was last answered (``located(_:at:)``), for those told
    /// with an instant: a location that sends an address to the coordinator only for now (its
    /// worker `lost`, its home handing back, the address held after `not-here`) is asked again
    /// once it is older than its `heartbeatMs` (``route(_:now:)``).
    package private(set) var locatedAt: [String: ContinuousClock.Instant] = [:]
    /// Addresses sent through the coordinator until a `location` of their machine with a
    /// generation above the one stored here: a worker said the address is not placed on it.
    package private(set) var overrides: [String: Int] = [:]
    /// The coordinator answered `locate` `unknown-kind` (it predates direct routes): every
    /// request goes through it for this client's life.
    package private(set) var coordinatorOnly = false

    package init() {}

    /// The road for a request to `address` (`counter/7`, `auth`) now.
    ///
    /// Nothing on the coordinator road tells a client that a worker came back or a handoff
    /// ended (the coordinator answers there as it should), so a location that sends `address`
    /// to the coordinator only for the time being (its worker `lost`, a `handingBack` home, the
    /// address held after `not-here`) is asked again, once it is older than its `heartbeatMs`,
    /// rather than kept for the client's life: with `now`, that decision is `.locate`. Without
    /// `now` (one decision, as fsm-load's split), a location is never stale.
    package func route(_ address: String, now: ContinuousClock.Instant? = nil) -> Decision {
        if coordinatorOnly { return .coordinator }
        let parsed = MachineAddress(address)
        guard let known = locations[parsed.machine] else { return .locate(machine: parsed.machine) }
        guard let location = known else { return .coordinator }
        var forNow: Decision {
            guard let now, let asked = locatedAt[parsed.machine], now - asked >= .milliseconds(max(1, location.heartbeatMs)) else {
                return .coordinator
            }
            return .locate(machine: parsed.machine)
        }
        if let held = overrides[address], held >= location.generation { return forNow }
        guard let worker = Self.worker(of: parsed, in: location) else {
            // A key homed on a worker taking its instances back, or no live worker: for now. A
            // keyed machine without a key, or a single one with one: the coordinator answers it.
            return location.keyed == (parsed.key?.isEmpty == false) ? forNow : .coordinator
        }
        guard worker.state == .registered, let endpoint = worker.endpoint else {
            return worker.state == .noDirect ? .coordinator : forNow
        }
        return .direct(Target(worker: worker.name, endpoint: endpoint, serverKey: worker.serverKey, incarnation: worker.incarnation))
    }

    /// The worker `address` lives on by `location`, as the coordinator computes it
    /// (``Topology/host(ofKey:pool:handedOff:)``); `nil` where the coordinator should answer:
    /// a keyed machine without a key, a single one with one, a key homed on a worker taking its
    /// instances back.
    static func worker(of address: MachineAddress, in location: Location) -> Location.Worker? {
        guard location.keyed else {
            return address.key == nil ? location.workers.first : nil
        }
        guard let key = address.key, !key.isEmpty else { return nil }
        let pool = location.workers.map(\.name)
        let handedOff = Set(location.workers.lazy.filter { $0.state == .handedOff }.map(\.name))
        if !location.handingBack.isEmpty, let home = Topology.host(ofKey: key, pool: pool, handedOff: []),
           location.handingBack.contains(home) {
            return nil
        }
        guard let host = Topology.host(ofKey: key, pool: pool, handedOff: handedOff) else { return nil }
        return location.workers.first { $0.name == host }
    }

    /// The coordinator's answer to `locate`, which came at `now` (see ``route(_:now:)``). An
    /// answer older than the one kept (a lower generation, answers crossing) is ignored; a
    /// newer one releases the machine's addresses held to the coordinator road.
    package mutating func located(_ location: Location, at now: ContinuousClock.Instant? = nil) {
        if let now { locatedAt[location.machine] = now }
        if case let kept?? = locations[location.machine], kept.generation > location.generation { return }
        if locations[location.machine] == nil, locations.count >= Self.maximumMachines {
            locations.removeAll()
            locatedAt = now.map { [location.machine: $0] } ?? [:]
        }
        locations[location.machine] = location
        if !overrides.isEmpty {
            overrides = overrides.filter { address, held in
                MachineAddress.machine(of: address) != location.machine || held >= location.generation
            }
        }
    }

    /// The coordinator refused `locate` for `machine` with `code`, or its answer did not decode
    /// (`code` `nil`: a newer coordinator's field this client does not know). `unknown-kind`: the
    /// coordinator predates direct routes, so everything goes through it from now on; anything
    /// else: this machine goes through it, which answers each request with its own error.
    package mutating func locateFailed(machine: String, code: WireError.Code?) {
        if code == .unknownKind {
            coordinatorOnly = true
            return
        }
        if locations[machine] == nil, locations.count >= Self.maximumMachines {
            locations.removeAll()
            locatedAt.removeAll()
        }
        locations[machine] = .some(nil)
    }

    /// A worker answered a request to `address` with `error`, of code `moved`: the request never
    /// reached a machine. Returns how to send it again; the location is updated so that
    /// ``route(_:)`` gives the road to take.
    package mutating func moved(_ error: WireError, address: String) -> AfterMoved {
        let machine = MachineAddress.machine(of: address)
        switch error.reason {
        case WireError.Reason.notSpawned?:
            return .resendByCoordinator
        case WireError.Reason.notHere?:
            // Held to the coordinator until a location newer than the one that sent it here.
            if case let location?? = locations[machine] {
                if overrides[address] == nil, overrides.count >= Self.maximumOverrides { overrides.removeAll() }
                overrides[address] = location.generation
            }
            locations[machine] = nil
            return .resend(after: .zero)
        case WireError.Reason.notRegistered?:
            locations[machine] = nil
            return .resend(after: Self.notRegisteredPause)
        default:
            // `not-committed`, `stopping`, a reason a newer worker added, or none: the worker
            // will not serve it; ask where the machine is now.
            locations[machine] = nil
            return .resend(after: .zero)
        }
    }

    /// No answer from `target` for a request to `machine` within `after` (the location's
    /// `heartbeatMs`, or the caller's timeout if shorter). Forgets the location: the next
    /// ``route(_:)`` says `locate`; feed that answer to ``judgeSilence(of:in:)``.
    package mutating func silence(on target: Target, machine: String) {
        locations[machine] = nil
    }

    /// Whether the worker `target`, which went silent, is still the one registered in the fresh
    /// `location`: if so keep waiting; if not, its requests were lost with it.
    package static func judgeSilence(of target: Target, in location: Location) -> AfterSilence {
        let now = location.workers.first { $0.name == target.worker }
        if let now, now.state == .registered, now.incarnation == target.incarnation, now.endpoint == target.endpoint {
            return .keepWaiting
        }
        let incarnation = target.incarnation.map { " (incarnation \($0))" } ?? ""
        return .lost(WireError(.workerLost, "no answer from worker \(target.worker)\(incarnation) at \(target.endpoint), "
                               + "which the coordinator no longer has registered; the request may or may not have been "
                               + "applied: resend it with an idempotency key to apply it exactly once"))
    }
}
